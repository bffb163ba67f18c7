/* SPDX-License-Identifier: MIT */
/* MCP's tools/call: the tool's REST request (mcp-args.h) served by the REST route's own handler, on
 * a Request of its own made from the /mcp request (its id, key and connection), with its answer
 * captured (reply.h) and turned into a tool's result. Whatever the handler records (sandbox,
 * machine, session, exit code, usage) is then the /mcp request's record and audit entry, and
 * ownership and quotas are the key's, as over REST. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/auth.h"
#include "fcgi/mcp-args.h"
#include "fcgi/mcp-rpc.h"
#include "fcgi/mcp-tools.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "lib/b64.h"
#include "lib/macro.h"
#include "lib/utf8.h"

DEFINE_JSON_CLEANUP

/* The tool's REST request as a Request of its own: the /mcp request's identity (its id, its key,
 * its FastCGI connection, whose closing says the client went, its output listener and what it
 * recorded so far) with the tool's method, path and body; the answer captured, nothing owned. */
static void inner_init(Request *inner, const Request *outer, const McpRest *rest, ReplyCapture *capture) {
        *inner = *outer;
        (void) snprintf(inner->method, sizeof(inner->method), "%s", rest->method);
        /* The route is found by its prefix: a long file path may be cut here, the handler reads
         * raw_path. */
        memcpy(inner->path, rest->raw_path, sizeof(inner->path) - 1);
        inner->path[sizeof(inner->path) - 1] = 0;
        memcpy(inner->raw_path, rest->raw_path, sizeof(inner->raw_path));
        memcpy(inner->query, rest->query, sizeof(inner->query));
        inner->body = rest->body; /* borrowed: the McpRest's */
        inner->body_len = rest->body_len;
        inner->body_short = inner->body_too_large = inner->uri_too_long = false;
        inner->allow = NULL;
        inner->status = 0;
        inner->error = inner->network_hosts = inner->network_refused = NULL;
        inner->event_stream = NULL;
        inner->capture = capture;
}

static void take_string(char **outer, char **inner) {
        if (!*inner)
                return;
        free(*outer);
        *outer = TAKE_PTR(*inner);
}

/* What the handler recorded is the /mcp request's: its record and audit entry say what the tool
 * did (its sandbox, machine, session, exit, usage, refusal). */
static void inner_record(Request *outer, Request *inner) {
        memcpy(outer->sandbox_id, inner->sandbox_id, sizeof(outer->sandbox_id));
        memcpy(outer->machine_id, inner->machine_id, sizeof(outer->machine_id));
        memcpy(outer->session_id, inner->session_id, sizeof(outer->session_id));
        outer->has_exit_code = inner->has_exit_code;
        outer->exit_code = inner->exit_code;
        outer->duration_ms = inner->duration_ms;
        outer->cpu_ms = inner->cpu_ms;
        outer->memory_peak_bytes = inner->memory_peak_bytes;
        outer->network_rx_bytes = inner->network_rx_bytes;
        outer->network_tx_bytes = inner->network_tx_bytes;
        outer->network_connections = inner->network_connections;
        outer->network_refusals = inner->network_refusals;
        outer->language = inner->language;
        outer->termination = inner->termination;
        take_string(&outer->error, &inner->error);
        take_string(&outer->network_hosts, &inner->network_hosts);
        take_string(&outer->network_refused, &inner->network_refused);
}

/* The REST request served by its route's handler, its answer in *capture: 0, -ECANCELED when the
 * client went away meanwhile (nothing to answer), -errno when it could not be served at all. */
static int rest_serve(Request *req, Context *ctx, const McpRest *rest, ReplyCapture *capture) {
        const Route *route = NULL;
        Request inner;
        int r;

        inner_init(&inner, req, rest, capture);
        if (route_find(inner.method, inner.path, &route) != 200 || route->id != (RouteId) rest->route)
                r = -EINVAL; /* a programmer's error: every tool's request is its route's */
        else {
                r = auth_admit_inner(&inner, ctx, route);
                if (r == 0)
                        r = route_handler(route->id)(&inner, ctx);
        }
        if (r < 0 && inner.status == 0)
                r = reply_error(&inner, 500, MSG_INTERNAL, "the tool call could not be served");
        if (inner.status == 499)
                r = -ECANCELED;
        else if (r > 0 || inner.status != 0)
                r = 0;
        inner_record(req, &inner);
        /* A handler may have begun an event stream or kept strings of its own: released here. */
        inner.body = NULL;
        request_done(&inner);
        return r;
}

static int content_add(struct json_object *content, struct json_object *item) {
        if (!item)
                return -ENOMEM;
        if (json_object_array_add(content, item) < 0) {
                json_object_put(item);
                return -ENOMEM;
        }
        return 0;
}

static struct json_object *text_item(const char *text) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o || json_object_object_add(o, "type", json_object_new_string("text")) < 0 ||
            json_object_object_add(o, "text", json_object_new_string(text)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A file's bytes as MCP content: an image (which an agent sees), else an embedded resource, text
 * when it is UTF-8. b64: the same bytes in base64, when the caller has them already. */
static struct json_object *file_item(const char *path, const uint8_t *data, size_t len, const char *b64) {
        cleanup_json struct json_object *o = json_object_new_object(), *res = NULL;
        cleanup_free char *uri = NULL, *made = NULL;
        const char *image = mcp_image_type(data, len);

        if (!o)
                return NULL;
        if (!b64 && (image || !utf8_valid(data, len))) {
                made = b64_encode(data, len, &(size_t){0});
                if (!made)
                        return NULL;
                b64 = made;
        }
        if (image) {
                if (json_object_object_add(o, "type", json_object_new_string("image")) < 0 ||
                    json_object_object_add(o, "data", json_object_new_string(b64)) < 0 ||
                    json_object_object_add(o, "mimeType", json_object_new_string(image)) < 0)
                        return NULL;
                return TAKE_PTR(o);
        }
        /* The working directory is /workspace in every sandbox. */
        res = json_object_new_object();
        if (!res || asprintf(&uri, "file:///workspace/%s", path) < 0 || json_object_object_add(res, "uri", json_object_new_string(uri)) < 0)
                return NULL;
        if (utf8_valid(data, len)) {
                if (json_object_object_add(res, "mimeType", json_object_new_string("text/plain")) < 0 ||
                    json_object_object_add(res, "text", json_object_new_string_len((const char *) data, (int) len)) < 0)
                        return NULL;
        } else if (json_object_object_add(res, "mimeType", json_object_new_string("application/octet-stream")) < 0 ||
                   json_object_object_add(res, "blob", json_object_new_string(b64)) < 0)
                return NULL;
        if (json_object_object_add(o, "type", json_object_new_string("resource")) < 0 || json_object_object_add(o, "resource", TAKE_PTR(res)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* An execution's returned files, [{path, content_b64}], each as content; in the structured result
 * each keeps its path and size only, its bytes being in the content already. */
static int files_content(struct json_object *structured, struct json_object *content) {
        struct json_object *files = NULL;
        cleanup_json struct json_object *brief = json_object_new_array();

        if (!brief)
                return -ENOMEM;
        if (!json_object_object_get_ex(structured, "files", &files) || !json_object_is_type(files, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(files); i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL, *b;
                cleanup_free uint8_t *raw = NULL;
                size_t len = 0;

                if (!json_object_object_get_ex(e, "path", &p) || !json_object_object_get_ex(e, "content_b64", &c) ||
                    b64_decode(json_object_get_string(c), (size_t) json_object_get_string_len(c), &raw, &len) < 0)
                        continue; /* checked by the handler already */
                if (content_add(content, file_item(json_object_get_string(p), raw, len, json_object_get_string(c))) < 0)
                        return -ENOMEM;
                b = json_object_new_object();
                if (!b || json_object_object_add(b, "path", json_object_get(p)) < 0 ||
                    json_object_object_add(b, "size", json_object_new_int64((int64_t) len)) < 0 || json_object_array_add(brief, b) < 0) {
                        json_object_put(b);
                        return -ENOMEM;
                }
        }
        return json_object_object_add(structured, "files", TAKE_PTR(brief));
}

/* {"content": [the structured result as JSON text, then the rest], "structuredContent", "isError"}:
 * takes structured and rest. */
static struct json_object *result_new(struct json_object *structured, struct json_object *rest, bool error) {
        cleanup_json struct json_object *out = json_object_new_object(), *content = json_object_new_array(), *s = structured, *more = rest;
        const char *text = s ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

        if (!out || !content || !text || content_add(content, text_item(text)) < 0)
                return NULL;
        for (size_t i = 0; more && i < json_object_array_length(more); i++)
                if (content_add(content, json_object_get(json_object_array_get_idx(more, i))) < 0)
                        return NULL;
        if (json_object_object_add(out, "content", TAKE_PTR(content)) < 0 || json_object_object_add(out, "structuredContent", TAKE_PTR(s)) < 0 ||
            json_object_object_add(out, "isError", json_object_new_boolean(error)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* A refusal that is not the arguments' fault (a session not found, a quota, a sandbox that
 * failed): {"error", "status"}, as an error result. */
static struct json_object *refusal_result(const ReplyCapture *c) {
        cleanup_json struct json_object *s = json_object_new_object();
        struct json_object *e = NULL;
        const char *message = "the request failed";

        if (!s)
                return NULL;
        if (c->body && json_object_object_get_ex(c->body, "error", &e) && json_object_is_type(e, json_type_string))
                message = json_object_get_string(e);
        if (json_object_object_add(s, "error", json_object_new_string(message)) < 0 ||
            json_object_object_add(s, "status", json_object_new_int(c->status)) < 0)
                return NULL;
        return result_new(TAKE_PTR(s), NULL, true);
}

/* A file too large to answer in JSON: an error result naming the cap, before any base64 is made. */
static struct json_object *file_large_result(size_t len) {
        cleanup_json struct json_object *s = json_object_new_object();
        char message[sizeof(MSG_MCP_FILE_LARGE) + 32];

        (void) snprintf(message, sizeof(message), MSG_MCP_FILE_LARGE, len, MCP_FILE_MAX_BYTES);
        if (!s || json_object_object_add(s, "error", json_object_new_string(message)) < 0 ||
            json_object_object_add(s, "status", json_object_new_int(413)) < 0)
                return NULL;
        return result_new(TAKE_PTR(s), NULL, true);
}

/* session_read_file's answer: the file's bytes, in base64 when they are not text, twice their size
 * at most as JSON: within MCP_ANSWER_MAX_BYTES for a file of MCP_FILE_MAX_BYTES. */
static struct json_object *file_result(const ReplyCapture *c, struct json_object *args) {
        cleanup_json struct json_object *s = NULL, *more = NULL;
        struct json_object *p = NULL;
        const char *path, *image;

        if (c->bytes_len > MCP_FILE_MAX_BYTES)
                return file_large_result(c->bytes_len);
        s = json_object_new_object();
        more = json_object_new_array();
        image = mcp_image_type(c->bytes, c->bytes_len);

        (void) json_object_object_get_ex(args, "path", &p);
        path = json_object_get_string(p);
        if (!s || !more || json_object_object_add(s, "path", json_object_new_string(path ? path : "")) < 0 ||
            json_object_object_add(s, "size", json_object_new_int64((int64_t) c->bytes_len)) < 0 ||
            json_object_object_add(s, "mime_type",
                                   json_object_new_string(image ? image : utf8_valid(c->bytes, c->bytes_len) ? "text/plain"
                                                                                                             : "application/octet-stream")) < 0 ||
            content_add(more, file_item(path ? path : "", c->bytes, c->bytes_len, NULL)) < 0)
                return NULL;
        return result_new(TAKE_PTR(s), TAKE_PTR(more), false);
}

/* A 2xx answer as the tool's result: a run that failed (a non-zero exit, a timeout) is an error
 * result, with everything it printed. */
static struct json_object *success_result(const char *name, ReplyCapture *c, struct json_object *args) {
        cleanup_json struct json_object *more = json_object_new_array();
        struct json_object *v = NULL, *s;
        bool error = false;

        if (!c->body)
                return file_result(c, args);
        if (!more)
                return NULL;
        s = TAKE_PTR(c->body);
        if (strcmp(name, "execute") == 0) {
                error = !json_object_object_get_ex(s, "exit_code", &v) || json_object_get_int(v) != 0;
                if (files_content(s, more) < 0) {
                        json_object_put(s);
                        return NULL;
                }
        } else if (strcmp(name, "session_run") == 0 || strcmp(name, "session_exec") == 0)
                error = !json_object_object_get_ex(s, "status", &v) || strcmp(json_object_get_string(v), "success") != 0;
        return result_new(s, TAKE_PTR(more), error);
}

int mcp_tool_call(Request *req, Context *ctx, const char *name, struct json_object *args, struct json_object **ret_result, Error *reterr) {
        ReplyCapture capture = {};
        McpRest rest;
        struct json_object *result = NULL, *e = NULL;
        int r;

        r = mcp_tool_rest(name, args, &rest, reterr);
        if (r < 0)
                return r;
        r = rest_serve(req, ctx, &rest, &capture);
        mcp_rest_done(&rest);
        if (r < 0) {
                reply_capture_done(&capture);
                return r;
        }

        if (capture.status == 400) {
                /* The arguments' fault: Invalid params, in the REST API's own words. */
                if (capture.body && json_object_object_get_ex(capture.body, "error", &e) && json_object_is_type(e, json_type_string))
                        r = error_set_status(reterr, 400, -EINVAL, "%s", json_object_get_string(e));
                else
                        r = error_set_status(reterr, 400, -EINVAL, "invalid arguments");
                reply_capture_done(&capture);
                return r;
        }
        result = capture.status >= 200 && capture.status < 300 ? success_result(name, &capture, args) : refusal_result(&capture);
        reply_capture_done(&capture);
        if (!result)
                return -ENOMEM;
        *ret_result = result;
        return 0;
}
