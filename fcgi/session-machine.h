/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Request Request;
typedef struct Context Context;
typedef struct Session Session;
typedef struct Error Error;

/* A session's turn and its machine's life, for the session routes (route-sessions.c). Everything
 * is the request's: safe from any number of threads, each with its own request and context. */

/* The session's turn, asked of the pool manager, which orders each session's operations first in,
 * first out; waited for up to SESSION_TURN_WAIT_USEC, or until the client goes. 0 with the turn in
 * *ret_turn (the caller's to give back with session_turn_give()) and the wait in *ret_wait_usec;
 * -ENOENT when the session is gone by then, -EBUSY past the wait or when too many wait already,
 * -ECANCELED when the client went, -errno. */
int session_turn_take(Request *req, Context *ctx, const char *id, int *ret_turn, uint64_t *ret_wait_usec);

/* Gives the turn back (a closed connection gives it back too); *turn is -1 then. */
void session_turn_give(int *turn);

/* The answer to an operation that did not get its turn (session_turn_take()'s error). */
int session_turn_error(Request *req, Context *ctx, int r);

/* Starts the session's machine (on a new disk with create) and waits until its runner greets: 0,
 * -ENOENT when the session was deleted meanwhile (its machine then stopped), or -errno with *err. */
int session_machine_start(Request *req, Context *ctx, const char *id, bool create, Error *err);

/* The machine's end, when it has to go (a stuck runner, a memory kill; stop) or went: the session
 * stays active, its state lost, and the next operation starts a new machine on the same disk. */
void session_machine_lost(Request *req, Context *ctx, const char *id, const char *why, bool stop);

/* Connects to the session's runner and waits for its greeting: 0 with *ret_fd (the caller's),
 * -EHOSTDOWN when it is not there, -ETIME when it does not greet. */
int session_machine_connect(const char *id, int *ret_fd);

/* With the session's turn: its machine running and greeted (resumed or restarted as needed), *s its
 * row as it is now. -ENOENT (gone), -EUSERS (too many active to resume it), -EHOSTDOWN (*err), or a
 * quota's refusal (answered: session-quota.h). */
int session_machine_ready(Request *req, Context *ctx, const char *id, Session *s, int *ret_fd, Error *err);
