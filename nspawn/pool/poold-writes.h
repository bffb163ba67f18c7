/* SPDX-License-Identifier: MIT */
#pragma once

/* The pool manager's records, written without waiting on sqlite's lock inside its loop: its
 * connection waits a few milliseconds at most (POOLD_BUSY_TIMEOUT_MS), and a write that meets the
 * lock (-EBUSY) is kept and done again later, in order, with a back-off; none is lost. Private to
 * sandboxd-poold. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;

/* How long the pool manager's connection waits for another writer: a worker's write is a few
 * milliseconds; past this the write is queued (PooldWrites), not waited for. */
#define POOLD_BUSY_TIMEOUT_MS 20

typedef enum PooldWriteOp {
        POOLD_WRITE_POOL_READY,     /* id */
        POOLD_WRITE_POOL_RELEASE,   /* id, text: what it is prepared for ("" for none) */
        POOLD_WRITE_POOL_REMOVE,    /* id, text: why (a pool_retire_label()) */
        POOLD_WRITE_HEALTH_FAILED,  /* detail: why */
        POOLD_WRITE_HEALTH_OK,      /* */
        POOLD_WRITE_COUNTER,        /* text: the counter, n: how much */
        POOLD_WRITE_SESSION_USAGE,  /* id, text: the event, n: cpu_ms */
        POOLD_WRITE_SESSION_PAUSED, /* id */
        POOLD_WRITE_SESSION_ACTIVE, /* id: pausing -> active, a pause that failed */
        POOLD_WRITE_SESSION_EVENT,  /* id, text: the event, detail */
        _POOLD_WRITE_MAX,
} PooldWriteOp;

typedef struct PooldWrite {
        PooldWriteOp op;
        char id[64];
        char text[32];
        char detail[256];
        int64_t n;
} PooldWrite;

typedef struct PooldWrites {
        PooldWrite *items; /* in the order they were asked */
        size_t n, cap;
        unsigned tries;   /* flushes in a row that met the lock */
        uint64_t next_at; /* when the first is tried again (CLOCK_MONOTONIC µs); UINT64_MAX: none waits */
} PooldWrites;

#define POOLD_WRITES_INIT \
        { .next_at = UINT64_MAX }

/* Does w now, or queues it when the database is locked or earlier writes wait (keeping their
 * order). 0: done or queued; -ENOENT: done, and what it was about is gone (a row not there, or not
 * in the state the write expects); other -errno: failed, not queued. */
int poold_writes_do(PooldWrites *q, sqlite3 *db, const PooldWrite *w, uint64_t now);

/* The queued writes done, in order, until one meets the lock again: then next_at moves on by the
 * back-off. Returns how many failed for another reason than the lock (dropped: the caller logs). */
unsigned poold_writes_flush(PooldWrites *q, sqlite3 *db, uint64_t now);

/* Whether a write about id waits: a machine whose record waits is not handed out, and a session's
 * turn is not granted. */
bool poold_writes_holds(const PooldWrites *q, const char *id);

/* How long a queue tried tries times in a row waits before the next: 10 ms doubling, 1 s at most. Pure. */
uint64_t poold_writes_backoff(unsigned tries);

void poold_writes_done(PooldWrites *q);
