/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcgiapp.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/event-stream.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "lib/json-limits.h"

/* The status line's reason phrase. */
static const char *reply_reason(int status) {
        switch (status) {
        case 200: return "OK";
        case 201:
                return "Created";
        case 202:
                return "Accepted";
        case 204:
                return "No Content";
        case 400: return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 406:
                return "Not Acceptable";
        case 413: return "Payload Too Large";
        case 414: return "URI Too Long";
        case 429:
                return "Too Many Requests";
        case 409:
                return "Conflict";
        case 500: return "Internal Server Error";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        case 504: return "Gateway Timeout";
        case 507:
                return "Insufficient Storage";
        default: return "Unknown";
        }
}

static struct json_object *count_or_null(int64_t v) {
        return v >= 0 ? json_object_new_int64(v) : NULL;
}

int reply_add_usage(const Request *req, struct json_object *out) {
        struct json_object *usage = json_object_new_object();

        if (!usage)
                return -ENOMEM;
        if (json_object_object_add(usage, "cpu_ms", count_or_null(req->cpu_ms)) < 0 ||
            json_object_object_add(usage, "memory_peak_bytes", count_or_null(req->memory_peak_bytes)) < 0 ||
            /* Only for a request that asked for network: the others' usage is as it always was. */
            (req->network_rx_bytes >= 0 && json_object_object_add(usage, "network_rx_bytes", json_object_new_int64(req->network_rx_bytes)) < 0) ||
            (req->network_tx_bytes >= 0 && json_object_object_add(usage, "network_tx_bytes", json_object_new_int64(req->network_tx_bytes)) < 0)) {
                json_object_put(usage);
                return -ENOMEM;
        }
        return json_object_object_add(out, "usage", usage);
}

/* A handler run within the worker (req->capture): what it answers is kept, in place of the answer
 * the previous one kept, for the caller to turn into its own. */
static void capture_reset(ReplyCapture *c, int status, const char *content_type) {
        (void) json_object_put(c->body);
        free(c->bytes);
        *c = (ReplyCapture){.status = status};
        (void) snprintf(c->content_type, sizeof(c->content_type), "%s", content_type);
}

void reply_capture_done(ReplyCapture *c) {
        capture_reset(c, 0, "");
}

int reply_json(Request *req, int status, struct json_object *body) {
        size_t len = 0;
        const char *text;

        if (req->capture) {
                req->status = status;
                capture_reset(req->capture, status, "application/json");
                req->capture->body = json_object_get(body);
                return 0;
        }
        text = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!text)
                return -ENOMEM;
        req->status = status;
        /* A streamed answer's status line is sent: its body is the stream's last event. */
        if (req->event_stream && req->event_stream->begun)
                return event_stream_result(req->event_stream, text, len);
        if (FCGX_FPrintF(req->fcgx->out, "Status: %d %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n", status, reply_reason(status)) < 0)
                return -EIO;
        if (status == 405 && req->allow && FCGX_FPrintF(req->fcgx->out, "Allow: %s\r\n", req->allow) < 0)
                return -EIO;
        /* RFC 9110 11.6.1: a 401 says how to authenticate; RFC 6585 4: a 429 may say when to retry,
         * and RFC 9110 15.6.4 a 503. */
        if (status == 401 && FCGX_PutS("WWW-Authenticate: Bearer realm=\"sandboxd\"\r\n", req->fcgx->out) < 0)
                return -EIO;
        /* Every 503 says "try again shortly": a second, unless the refusal knows better. */
        if ((status == 429 && req->retry_after_s > 0) || status == 503) {
                char h[48];

                (void) snprintf(h, sizeof(h), "Retry-After: %u\r\n", req->retry_after_s > 0 ? req->retry_after_s : 1);
                if (FCGX_PutS(h, req->fcgx->out) < 0)
                        return -EIO;
        }
        if (FCGX_PutS("\r\n", req->fcgx->out) < 0)
                return -EIO;
        if (FCGX_PutStr(text, (int) len, req->fcgx->out) < 0 || FCGX_PutS("\n", req->fcgx->out) < 0)
                return -EIO;
        return 0;
}

int reply_head(Request *req, int status, const char *content_type, const char *extra) {
        req->status = status;
        if (FCGX_FPrintF(req->fcgx->out, "Status: %d %s\r\n", status, reply_reason(status)) < 0 ||
            (content_type && FCGX_FPrintF(req->fcgx->out, "Content-Type: %s\r\n", content_type) < 0) ||
            FCGX_PutS("Cache-Control: no-store\r\n", req->fcgx->out) < 0 || (extra && FCGX_PutS(extra, req->fcgx->out) < 0) ||
            FCGX_PutS("\r\n", req->fcgx->out) < 0)
                return -EIO;
        return 0;
}

int reply_text(Request *req, int status, const char *content_type, const char *text, size_t len) {
        if (req->capture)
                return reply_bytes(req, status, content_type, text, len);
        req->status = status;
        if (FCGX_FPrintF(req->fcgx->out, "Status: %d %s\r\nContent-Type: %s\r\nCache-Control: no-store\r\n\r\n", status, reply_reason(status),
                         content_type) < 0)
                return -EIO;
        if (len > 0 && FCGX_PutStr(text, (int) len, req->fcgx->out) < 0)
                return -EIO;
        return 0;
}

int reply_error(Request *req, int status, const char *fmt, ...) {
        struct json_object *body;
        char *message = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        body = json_object_new_object();
        if (!body || json_object_object_add(body, "error", json_object_new_string(message)) < 0) {
                (void) json_object_put(body);
                free(message);
                return -ENOMEM;
        }
        r = reply_json(req, status, body);
        (void) json_object_put(body);

        free(req->error);
        req->error = message;
        return r;
}

int reply_body_refused(Request *req, int r) {
        if (r == -E2BIG)
                return reply_error(req, 400, MSG_JSON_TOO_MANY_VALUES, JSON_MAX_VALUES, JSON_MAX_CONTAINERS);
        return reply_error(req, 400, MSG_INVALID_JSON);
}

int reply_abandoned(Request *req) {
        char *message = strdup("the client closed the request before it was answered");

        if (!message)
                return -ENOMEM;
        /* nginx's own code for a client that closed the connection before the answer. */
        req->status = 499;
        free(req->error);
        req->error = message;
        return 0;
}

int reply_body_begin(Request *req, int status, const char *content_type, size_t len) {
        char head[256];

        req->status = status;
        if (req->capture) {
                ReplyCapture *c = req->capture;

                capture_reset(c, status, content_type);
                /* One byte more, a NUL, so that a text can be read as a string. */
                c->bytes = malloc(len + 1);
                if (!c->bytes)
                        return -ENOMEM;
                ((char *) c->bytes)[0] = 0;
                c->bytes_room = len;
                return 0;
        }
        /* libfcgi's own printf knows no %zu: the header is made here. */
        if ((size_t) snprintf(head, sizeof(head), "Status: %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n\r\n",
                              status, reply_reason(status), content_type, len) >= sizeof(head) ||
            FCGX_PutS(head, req->fcgx->out) < 0)
                return -EIO;
        return 0;
}

int reply_body_write(Request *req, const void *data, size_t n) {
        ReplyCapture *c = req->capture;

        if (c) {
                if (!c->bytes || n > c->bytes_room - c->bytes_len)
                        return -EFBIG;
                if (n > 0)
                        memcpy((char *) c->bytes + c->bytes_len, data, n);
                c->bytes_len += n;
                ((char *) c->bytes)[c->bytes_len] = 0;
                return 0;
        }
        /* FCGX_PutStr takes an int: a large piece goes in pieces. */
        for (size_t off = 0; off < n;) {
                size_t k = n - off > (1U << 30) ? 1U << 30 : n - off;

                if (FCGX_PutStr((const char *) data + off, (int) k, req->fcgx->out) < 0)
                        return -EIO;
                off += k;
        }
        return 0;
}

int reply_bytes(Request *req, int status, const char *content_type, const void *data, size_t len) {
        int r = reply_body_begin(req, status, content_type, len);

        if (r < 0)
                return r;
        return reply_body_write(req, data, len);
}
