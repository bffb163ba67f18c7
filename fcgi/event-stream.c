/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcgiapp.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "fcgi/event-stream.h"
#include "fcgi/http-accept.h"
#include "lib/b64.h"
#include "lib/macro.h"
#include "lib/utf8.h"

DEFINE_JSON_CLEANUP

/* Asked for by name, with a weight above zero: a client that takes anything ("* / *") gets the
 * plain answer it has always had. */
bool event_stream_wanted(const Request *req) {
        const char *accept = req->fcgx && !req->capture ? FCGX_GetParam("HTTP_ACCEPT", req->fcgx->envp) : NULL;

        return http_accept_weight(accept, "text/event-stream", HTTP_ACCEPT_EXACT) > 0;
}

static int put(EventStream *es, const char *s, size_t len) {
        if (es->gone)
                return -EPIPE;
        if (FCGX_PutStr(s, (int) len, es->req->fcgx->out) < 0) {
                es->gone = true;
                return -EPIPE;
        }
        return 0;
}

static int flush(EventStream *es) {
        if (es->gone)
                return -EPIPE;
        if (FCGX_FFlush(es->req->fcgx->out) < 0) {
                es->gone = true;
                return -EPIPE;
        }
        return 0;
}

char *event_stream_chunk_json(const uint8_t *data, size_t len) {
        cleanup_json struct json_object *o = json_object_new_object();
        bool text = utf8_valid(data, len) && !memchr(data, 0, len);
        cleanup_free char *b64 = NULL;
        const char *s;
        size_t n = len;

        if (!o)
                return NULL;
        if (!text) {
                b64 = b64_encode(data, len, &n);
                if (!b64)
                        return NULL;
        }
        if (json_object_object_add(o, "data", json_object_new_string_len(text ? (const char *) data : b64, (int) n)) < 0 ||
            json_object_object_add(o, "base64", json_object_new_boolean(!text)) < 0)
                return NULL;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return s ? strdup(s) : NULL;
}

static int send_event(EventStream *es, const char *event, const char *data, size_t len) {
        if (put(es, "event: ", 7) < 0 || put(es, event, strlen(event)) < 0 || put(es, "\ndata: ", 7) < 0 || put(es, data, len) < 0 ||
            put(es, "\n\n", 2) < 0)
                return -EPIPE;
        return 0;
}

static int send_chunk(EventStream *es, int stream, const uint8_t *data, size_t len) {
        char *json = event_stream_chunk_json(data, len);
        int r;

        if (!json)
                return -ENOMEM;
        r = send_event(es, stream == 1 ? "stdout" : "stderr", json, strlen(json));
        free(json);
        return r;
}

/* A chunk as the code wrote it, less a cut UTF-8 sequence at its end, which the next completes:
 * a character is never split across two events. */
static int on_chunk(void *userdata, int stream, const void *data, size_t len) {
        EventStream *es = userdata;
        size_t i = stream == 1 ? 0 : 1, held = es->carry_len[i], whole;
        uint8_t *joined;
        int r;

        if (es->gone)
                return es->keep_result ? 0 : -EPIPE;
        joined = malloc(held + len);
        if (!joined)
                return -ENOMEM;
        memcpy(joined, es->carry[i], held);
        memcpy(joined + held, data, len);
        whole = utf8_whole_prefix(joined, held + len);
        es->carry_len[i] = held + len - whole;
        memcpy(es->carry[i], joined + whole, es->carry_len[i]);
        r = whole > 0 ? send_chunk(es, stream, joined, whole) : 0;
        free(joined);
        if (r >= 0)
                r = flush(es);
        return r < 0 && es->keep_result && es->gone ? 0 : r;
}

static int on_idle(void *userdata) {
        EventStream *es = userdata;
        int r = put(es, ": the code runs\n\n", 17);

        if (r >= 0)
                r = flush(es);
        return r < 0 && es->keep_result && es->gone ? 0 : r;
}

void event_stream_bound_writes(int fd) {
        struct timeval tv = {.tv_sec = EVENT_STREAM_SEND_TIMEOUT_S};

        /* Nothing else bounds them: a response's writes block until nginx takes them. */
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

EventStream *event_stream_new(Request *req) {
        EventStream *es = calloc(1, sizeof(EventStream));

        if (!es)
                return NULL;
        *es = (EventStream){.req = req, .listener = {.chunk = on_chunk, .idle = on_idle, .userdata = es}};
        req->listener = &es->listener;
        req->event_stream = es;
        return es;
}

int event_stream_begin(EventStream *es) {
        /* X-Accel-Buffering: nginx passes this response on as it comes, and only this one. */
        static const char head[] = "Status: 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Accel-Buffering: no\r\n\r\n";

        es->begun = true;
        event_stream_bound_writes(es->req->fcgx->ipcFd);
        if (put(es, head, sizeof(head) - 1) < 0)
                return -EPIPE;
        return flush(es);
}

int event_stream_result(EventStream *es, const char *body, size_t len) {
        if (es->keep_result) {
                free(es->result);
                es->result = strndup(body, len);
        }
        /* A sequence still cut at the end never will be whole: it goes as it is. */
        for (int i = 0; i < 2; i++)
                if (es->carry_len[i] > 0) {
                        (void) send_chunk(es, i + 1, es->carry[i], es->carry_len[i]);
                        es->carry_len[i] = 0;
                }
        if (send_event(es, "result", body, len) < 0)
                return -EPIPE;
        return flush(es);
}

void event_stream_free(EventStream *es) {
        if (!es)
                return;
        free(es->result);
        free(es);
}
