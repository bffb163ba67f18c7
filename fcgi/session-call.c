/* SPDX-License-Identifier: MIT */
/* One request to a session's runner and its reply (runner-session.c's side of it). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/session-call.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/json-limits.h"
#include "lib/json-util.h"
#include "lib/macro.h"

/* call's request on one line, then its extra bytes (a put's file): the runner splits at the
 * newline. NULL on allocation failure. */
static char *call_input(const RunnerCall *call, size_t *ret_len) {
        size_t text_len = 0;
        const char *text = json_object_to_json_string_length(call->request, JSON_C_TO_STRING_PLAIN, &text_len);
        char *input;

        if (!text)
                return NULL;
        input = malloc(text_len + 1 + call->extra_len + 1);
        if (!input)
                return NULL;
        memcpy(input, text, text_len);
        input[text_len] = '\n';
        if (call->extra_len > 0)
                memcpy(input + text_len + 1, call->extra, call->extra_len);
        *ret_len = text_len + 1 + call->extra_len;
        return input;
}

int session_reply_parse(const char *reply, size_t len, struct json_object **ret) {
        const char *nl = memchr(reply, '\n', len);
        size_t end = nl ? (size_t) (nl - reply) : len;
        struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        struct json_object *o;

        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, reply, (int) (end > INT32_MAX ? INT32_MAX : end));
        if (json_tokener_get_parse_end(tok) != end || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        if (!o)
                return -EBADMSG;
        *ret = o;
        return 0;
}

int session_runner_call(int fd, const RunnerCall *call, struct json_object **ret) {
        cleanup_free char *input = NULL, *reply = NULL;
        size_t input_len = 0, len = 0;
        int r;

        input = call_input(call, &input_len);
        if (!input)
                return -ENOMEM;
        if (call->egress && call->egress->fd >= 0) {
                /* The request whole first: the runner hands the proxy port over before it runs
                 * anything, and the relay takes it before the reply is waited for. */
                r = pool_send_request(fd, input, input_len, call->client_fd, call->deadline);
                if (r >= 0)
                        r = egress_link_start(call->egress, fd, call->client_fd, call->deadline);
                if (r < 0)
                        return r;
                input_len = 0;
        }
        if (call->listener)
                r = pool_exchange_stream(fd, input_len ? input : NULL, input_len, call->client_fd, call->deadline, call->max_reply, call->listener,
                                         &reply, &len);
        else
                r = pool_exchange(fd, input_len ? input : NULL, input_len, call->client_fd, call->deadline, call->max_reply, &reply, &len); /* NOLINT(clang-analyzer-unix.Malloc): input is cleanup_free, unseen by clang-analyzer 14 */
        if (r < 0)
                return r;
        if (len == 0)
                return -ECONNRESET; /* the runner died before it answered */
        return session_reply_parse(reply, len, ret);
}

int session_call_error(Request *req, Context *ctx, int r, const Error *err) {
        if (req->status != 0)
                return 0; /* answered already: a quota's refusal (session-quota.h) */
        if (r == -ENOENT)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        if (r == -EUSERS)
                return reply_error(req, 503, MSG_SESSIONS_FULL, ctx->config->sessions_max);
        if (r == -EHOSTDOWN)
                return reply_error(req, 502, MSG_SESSION_START, err->message);
        if (r == -EBADMSG || r == -EMSGSIZE)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        return reply_error(req, 502, MSG_SESSION_FAILED, err->message[0] ? err->message : strerror(-r));
}

int session_runner_error(Request *req, struct json_object *reply) {
        int64_t status = json_int(reply, "status", 502);
        struct json_object *message = json_field(reply, "error");

        if (!json_object_is_type(message, json_type_string) || status < 400 || status > 599)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        return reply_error(req, (int) status, "%s", json_object_get_string(message));
}
