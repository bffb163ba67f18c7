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

/* One request to a session's runner, and how long and how much its reply may take. */
typedef struct RunnerCall {
        struct json_object *request; /* borrowed; sent as one line */
        const void *extra;           /* bytes sent after the line (a put's file), or NULL */
        size_t extra_len;
        int client_fd;                  /* watched for its hang-up (-ECANCELED); < 0: none */
        uint64_t deadline;              /* CLOCK_MONOTONIC µs: past it, -ETIME */
        size_t max_reply;               /* past it, -EMSGSIZE */
        const OutputListener *listener; /* a streamed request's (the runner answers in frames), or NULL */
        EgressLink *egress;             /* a run with network: its open link to the relay, or NULL */
} RunnerCall;

/* A runner's reply object: its first line of len bytes (the runner writes it plain: a newline in a
 * string is escaped), into *ret (the caller's). -EBADMSG when it is none, -ENOMEM. */
int session_reply_parse(const char *reply, size_t len, struct json_object **ret);

/* Sends call's request to the runner on fd, and parses the reply's object into *ret (the
 * caller's). -ETIME, -ECANCELED (the client hung up, or the listener is gone), -EMSGSIZE,
 * -ECONNRESET when the runner closed without a reply, -EBADMSG for a reply that is not one; with
 * egress, the sandbox's proxy port goes to the relay first (egress_link_start(), whose errors are
 * returned). */
int session_runner_call(int fd, const RunnerCall *call, struct json_object **ret);

/* The answer to a session operation that failed after its turn (r): the session gone (404), too
 * many active to resume it (503), its machine not starting (502, *err says why), a reply not to be
 * read, or its machine failing (502). Nothing when the request was answered already (a quota's
 * refusal, session-quota.h). */
int session_call_error(Request *req, Context *ctx, int r, const Error *err);

/* A runner's reply of an error: its status (400, 404, 507 ...) and message passed on as they are;
 * a reply without them is 502. */
int session_runner_error(Request *req, struct json_object *reply);
