/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The pool manager's orders (poold.c): which idle machine a claim gets, whose turn a session's is.
 * Pure. */

typedef struct IdleMachine {
        const char *prepared; /* the language its next sandbox is ready for */
        uint64_t ready_at;    /* since when it is idle */
} IdleMachine;

/* The machine for a claim in language: of those prepared for it, the longest idle; else the
 * longest idle of all. n when there is none. */
size_t pool_pick(const IdleMachine *m, size_t n, const char *language);

typedef struct TurnEntry {
        const char *session; /* NULL: not in any session's queue */
        uint64_t seq;        /* arrival order */
        bool held;
} TurnEntry;

/* The entry whose turn it is now in session's queue: the earliest to arrive, unless one holds the
 * turn already or none waits (then n). */
size_t turn_next(const TurnEntry *e, size_t n, const char *session);

/* How many entries are in session's queue, holding or waiting. */
size_t turn_queued(const TurnEntry *e, size_t n, const char *session);

/* The earliest waiting claim, of n (waiting[i]: whether entry i waits, seq[i] its arrival): n if
 * none. */
size_t claim_next(const bool *waiting, const uint64_t *seq, size_t n);
