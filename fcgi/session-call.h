/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fcgi/egress-link.h"
#include "nspawn/pool/pool-socket.h"

struct json_object;
typedef struct Request Request;
typedef struct Context Context;
typedef struct Error Error;

/* Sends one request (its JSON, then extra bytes) to the runner on fd, and parses the reply: the
 * JSON object into *ret, the bytes after it (a file's content, after one "\n") into *ret_rest, in
 * *ret_buf (the caller's to free). -ETIME past deadline, -ECANCELED once client_fd hangs up (< 0:
 * none watched) or listener is gone, -EMSGSIZE past max_reply, -EBADMSG for a reply that is
 * not one. listener: a streamed request's (the runner answers in frames), or NULL. egress: for a
 * run of a session with network, its open link to the relay, which gets the sandbox's proxy port
 * first (egress_link_start(), whose errors are returned); NULL: none. */
int session_runner_call(int fd, struct json_object *request, const void *extra, size_t extra_len, int client_fd, uint64_t deadline,
                        size_t max_reply, const OutputListener *listener, EgressLink *egress, struct json_object **ret, const char **ret_rest,
                        size_t *ret_rest_len, char **ret_buf);

/* The answer to a session operation that failed after its turn (r): the session gone (404), too
 * many active to resume it (503), its machine not starting (502, *err says why), a reply not to be
 * read, or its machine failing (502). Nothing when the request was answered already (a quota's
 * refusal, session-quota.h). */
int session_call_error(Request *req, Context *ctx, int r, const Error *err);

/* A runner's reply of an error: its status (400, 404, 507 ...) and message passed on as they are;
 * a reply without them is 502. */
int session_runner_error(Request *req, struct json_object *reply);
