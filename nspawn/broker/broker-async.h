/* SPDX-License-Identifier: MIT */
#pragma once

/* The broker's client for a process that runs an sd-event loop (the pool manager): each request is
 * sent on a connection of its own and answered through a callback the loop dispatches, never waited
 * for. One connection per request, because the broker answers a connection's requests in the order
 * their work ends and a reply names no request: two in flight on one connection could not be told
 * apart. The blocking form (broker-client.h) stays for the workers and sandboxctl. */

#include <stdbool.h>
#include <stddef.h>

#include "nspawn/broker/broker-proto.h"

typedef struct sd_event sd_event;
typedef struct BrokerAsync BrokerAsync;

/* A request's end: r is 0 or a negative errno (-ETIMEDOUT past the op's deadline,
 * broker_op_timeout_usec() from when it was sent, or after long in the queue; -ECANCELED when the client is freed first); rep is the broker's reply (its message says why when r < 0; all zero
 * when the broker was not reached); fd is the descriptor the reply carried, or -1, the callee's to
 * keep (or close). Called from the loop, never from broker_async_call(). */
typedef void (*BrokerAsyncDone)(int r, const BrokerReply *rep, int fd, void *userdata);

/* A client on loop e: *ret is the caller's (broker_async_free()). At most max_inflight requests
 * are sent at once (the broker holds a bounded number of connections), and of them at most max_slow
 * slow ones (broker_op_slow()), so that starts and kills always have room; the others wait, in
 * order, for one of their lane to end. */
int broker_async_new(sd_event *e, unsigned max_inflight, unsigned max_slow, BrokerAsync **ret);

/* Every request still queued or in flight ends with -ECANCELED (its callback's to free what it
 * holds, and to do nothing else); NULL accepted. */
BrokerAsync *broker_async_free(BrokerAsync *a);

/* Queues op on id (NULL: none) with pass_fd (-1: none; duplicated, the caller keeps its own). done
 * is called exactly once, later. 0 or -errno (nothing queued, done never called). */
int broker_async_call(BrokerAsync *a, BrokerOp op, const char *id, int pass_fd, BrokerAsyncDone done, void *userdata);

/* Whether op is a slow one: anything but a warm machine's start, a kill and a reset, which must not
 * wait behind a session's stop or a list. Pure. */
bool broker_op_slow(BrokerOp op);

/* The queue's policy: whether op may be sent with inflight requests in flight, inflight_slow of
 * them slow. Pure. */
bool broker_async_may_send(BrokerOp op, unsigned inflight, unsigned inflight_slow, unsigned max_inflight, unsigned max_slow);

/* Requests queued or in flight. */
size_t broker_async_pending(const BrokerAsync *a);

/* A list reply (BROKER_LIST, BROKER_SESSION_LIST) read from the memfd fd it carried: *ret (malloc'd,
 * the caller's) gets *ret_n records, each checked. -EPROTO for a reply that is not one. */
int broker_units_read(const BrokerReply *rep, int fd, BrokerUnit **ret, size_t *ret_n);
int broker_sessions_read(const BrokerReply *rep, int fd, BrokerSession **ret, size_t *ret_n);
