/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct sd_event sd_event;
typedef struct SessionUsageAsk SessionUsageAsk;

/* What a session's sandbox used that no run reported yet (its background processes since its last
 * run), asked of its runner ({"op": "usage"}, nspawn/runner/runner.c) before its machine stops: by
 * the worker that pauses or deletes it, and by the pool manager that pauses it when idle. */

/* The reply's cpu_ms: 0 with *ret_cpu_ms, -EBADMSG when the reply is not {"status": 200, ...,
 * "cpu_ms": N} with N >= 0. The runner writes it plain (json-c, JSON_C_TO_STRING_PLAIN), with no
 * string value that could hold the text "cpu_ms": a scan suffices, and the pool manager links no
 * JSON library. Pure. */
int session_usage_parse(const char *reply, size_t len, int64_t *ret_cpu_ms);

/* Asks the runner listening on socket_path, within deadline (CLOCK_MONOTONIC µs): 0 with
 * *ret_cpu_ms; -EHOSTDOWN when it does not answer, -EBADMSG for a reply that is not one. */
int session_usage_fetch(const char *socket_path, uint64_t deadline, int64_t *ret_cpu_ms);

/* The same on loop e, never waited for: done(r, cpu_ms, userdata) is called once from the loop,
 * within timeout_usec, with what session_usage_fetch() returns (-ETIME past the timeout). *ret (if
 * not NULL) is a handle that lives until done is called, for session_usage_ask_cancel(). 0 or
 * -errno (done never called). */
typedef void (*SessionUsageDone)(int r, int64_t cpu_ms, void *userdata);
int session_usage_ask(sd_event *e, const char *socket_path, uint64_t timeout_usec, SessionUsageDone done, void *userdata,
                      SessionUsageAsk **ret);

/* Gives up an ask in flight: done is not called. NULL accepted; returns NULL. */
SessionUsageAsk *session_usage_ask_cancel(SessionUsageAsk *a);
