/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The workers' side of the pool manager's protocol (poold-proto.h). Every call works on the
 * connection it is given or makes, and keeps no other state: any number of threads may use it at
 * once, each with its own connections. Each wait ends at deadline (CLOCK_MONOTONIC µs) or when
 * client_fd (the request's connection to nginx, < 0: none) hangs up: -ETIME, -ECANCELED. */

typedef struct PooldMachine {
        char id[64];
        char socket[256];
        int64_t executions; /* this execution included */
} PooldMachine;

/* Asks for a machine for language and waits for it: 0 with *ret and the claim's connection in
 * *ret_fd (the caller's: pooldc_release() on it, or close it to retire the machine); -ENOSPC when
 * too many claims wait already; -EHOSTDOWN when machines fail to start (reason: why, size bytes);
 * -ECONNREFUSED when the pool manager is not there; -ETIME, -ECANCELED, -errno. */
int pooldc_claim(const char *language, int client_fd, uint64_t deadline, PooldMachine *ret, int *ret_fd, char *reason, size_t size);

/* Tells how the claim on fd ended, and closes fd: retire_label NULL puts the machine back, its next
 * sandbox ready for prepared (NULL: python); else it is retired for that reason
 * (pool_retire_label()). */
void pooldc_release(int fd, const char *retire_label, const char *prepared);

/* Asks for session's turn and waits for it: 0 with the turn's connection in *ret_fd (the caller's:
 * pooldc_done() on it); -EBUSY when most operations of the session wait already; -ECONNREFUSED,
 * -ETIME, -ECANCELED, -errno. */
int pooldc_turn(const char *session, unsigned most, int client_fd, uint64_t deadline, int *ret_fd);

/* The turn on fd is over: says so, and closes fd. */
void pooldc_done(int fd);

/* One word to the pool manager, with no answer: "sweep" (a worker died), "sessions" (a key was
 * revoked, or a session deleted). 0 when said, -errno when the manager could not be reached (not running, or in another
 * mount namespace: ctl/systemd.h); callers may ignore that, as the manager looks at it all when it
 * starts. */
int pooldc_notify(const char *word);
