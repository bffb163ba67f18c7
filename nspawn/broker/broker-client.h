/* SPDX-License-Identifier: MIT */
#pragma once

/* The client side of the broker (sandboxd-broker, broker.c), which the workers and sandboxctl link:
 * the only way they act on systemd units. Each call waits for its answer; the pool manager, which
 * must not, uses the asynchronous form (broker-async.h). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"
#include "nspawn/broker/broker-proto.h"

typedef struct SandboxResult SandboxResult;

/* *conn is a connection made on first use and remade once if the broker went away;
 * the caller closes it. Each returns 0 or a negative errno; *reterr (if given) gets the broker's reason.
 * Each waits for the broker at most broker_op_timeout_usec() of its op: past it, -ETIMEDOUT (and
 * *conn closed, -1). */
int broker_start_warm(int *conn, const char *id, int listen_fd, Error *reterr);
int broker_kill(int *conn, const char *id);
/* A session's machine (broker-proto.h): started on its disk (made first with create), or stopped,
 * its disk kept or deleted. */
int broker_session_start(int *conn, const char *id, bool create, int listen_fd, Error *reterr);
int broker_session_stop(int *conn, const char *id, bool delete, Error *reterr);

/* Runs a tool sandbox from image on input, on a connection of its own, and waits for its end. On
 * success *ret is filled as sandbox_run() fills it, and is the caller's; on failure *reterr says why. */
int broker_run_tool(const char *id, const char *request_id, const char *image, unsigned timeout_s,
                    const char *input, size_t input_len, SandboxResult *ret, Error *reterr);
