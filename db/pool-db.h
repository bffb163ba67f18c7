/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;

typedef struct PoolCounts {
        int64_t ready;    /* warm: started, probed, idle */
        int64_t starting; /* started, not yet ready */
        int64_t claimed;  /* in flight */
        int64_t created_total;
        int64_t waits;
} PoolCounts;

#define POOL_SOCKET_MAX 256

/* A new machine in state 'starting', counted as created (event 'machine_created'). */
int db_pool_add(sqlite3 *db, const char *machine_id, const char *socket, const char *settings);

/* 'starting' -> 'ready'. -ENOENT if the row is gone or not starting. */
int db_pool_ready(sqlite3 *db, const char *machine_id);

/* Claims a machine for one execution of owner_pid's in language (NULL: python), atomically across
 * processes: the longest-ready of those whose next sandbox is ready for that language, else the
 * longest-ready of all;
 * its id and socket path into the buffers (SANDBOX_ID_MAX / POOL_SOCKET_MAX bytes), and how many
 * executions it has had, this one included, into *ret_executions (may be NULL). The execution's
 * sandbox counts in created_total. -ENOENT when none is ready. */
int db_pool_claim(sqlite3 *db, int owner_pid, const char *language, char *ret_machine_id, size_t id_size, char *ret_socket, size_t socket_size,
                  int64_t *ret_executions);

/* The pool manager's record of its claim of machine_id for worker owner_pid: 'ready' -> 'claimed',
 * its executions (this one included) into *ret_executions, the sandbox counted in created_total.
 * -ENOENT when the row is gone or not ready. */
int db_pool_claim_id(sqlite3 *db, const char *machine_id, int owner_pid, int64_t *ret_executions);

/* 'claimed' -> 'ready': the machine's execution ended cleanly and it may serve another, its next
 * sandbox ready for language prepared (NULL: python). -ENOENT if the row is gone or not claimed. */
int db_pool_release(sqlite3 *db, const char *machine_id, const char *prepared);

/* Claims the oldest idle machine if it became ready before ready_before (unix time), or if more
 * than keep are ready and it has been idle since before surplus_ready_before; for recycling and
 * shrinking. -ENOENT when none qualifies. */
int db_pool_claim_idle(sqlite3 *db, int owner_pid, double ready_before, int64_t keep, double surplus_ready_before, char *ret_machine_id,
                       size_t id_size, char *ret_socket, size_t socket_size);

/* Claims, for the pool manager to destroy, an idle machine made with other settings than these (a
 * runtime image rebuilt since): 0, -ENOENT when there is none, -errno. */
int db_pool_claim_stale(sqlite3 *db, int owner_pid, const char *settings, char *ret_machine_id, size_t id_size, char *ret_socket,
                        size_t socket_size);

/* Removes a machine's row and, if there was one, counts it as retired for reason (event
 * 'machine_retired'; NULL: not counted). */
int db_pool_remove(sqlite3 *db, const char *machine_id, const char *reason);

/* 1 if some sandbox is ready, 0 if none, -errno: a read, so waiting workers need not take the
 * write lock that a claim takes. */
int db_pool_any_ready(sqlite3 *db);

/* 1 if the pool has a row for the sandbox, 0 if not, -errno. */
int db_pool_exists(sqlite3 *db, const char *machine_id);

int db_pool_counts(sqlite3 *db, PoolCounts *ret);

/* A sandbox failed to start (counts consecutive failures, keeps the reason), or one started. */
int db_pool_health_failed(sqlite3 *db, const char *reason);
int db_pool_health_ok(sqlite3 *db);

/* The consecutive start failures, and the last reason into buf, if the last one happened after
 * since (unix time); 0 failures otherwise. */
int db_pool_health(sqlite3 *db, double since, int *ret_failures, char *buf, size_t size);

/* Adds delta to a lifetime counter. */
int db_counter_add(sqlite3 *db, const char *name, int64_t delta);

typedef struct PoolRow {
        char machine_id[64];
        char state[16];
        char socket[POOL_SOCKET_MAX];
        int owner_pid; /* 0: none */
        char settings[1024]; /* what db_pool_add() was given (poold's machine_settings() fits) */
} PoolRow;

/* The rows in the given state (NULL: every row) whose owner is owner_pid (0: any), all of them:
 * *ret (malloc'd, the caller's to free) gets *ret_n rows. */
int db_pool_list(sqlite3 *db, const char *state, int owner_pid, PoolRow **ret, size_t *ret_n);
