/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;

/* How a request ended, for its row. Strings are borrowed; NULL stores NULL. */
typedef struct RequestOutcome {
        const char *sandbox_id;
        const char *machine_id; /* the machine the sandbox was made in; NULL for a tool call's */
        int status;
        bool has_exit_code;
        int exit_code;
        int64_t duration_ms; /* < 0: none */
        const char *error;
        const char *session_id; /* the session it acted on; NULL for none */
} RequestOutcome;

/* Inserts the row of a request that has just arrived (status NULL: in flight). -EEXIST if the id is
 * already recorded. */
int db_request_begin(sqlite3 *db, const char *request_id, const char *route, int worker_pid);

/* Records how the request ended. */
int db_request_finish(sqlite3 *db, const char *request_id, const RequestOutcome *o);

/* Closes the rows that a dead worker (worker_pid 0: any worker) left in flight with status 502 and
 * the given error; returns how many it closed. */
int db_request_abandon(sqlite3 *db, int worker_pid, const char *error);

/* Records the sandbox a request started and the machine it runs in (NULL: the sandbox is a unit of
 * its own), before it starts, so a worker's death can be cleaned up. */
int db_request_sandbox(sqlite3 *db, const char *request_id, const char *sandbox_id, const char *machine_id);

/* Calls f for the unit of each request that the worker worker_pid (0: any worker) left in flight
 * with a sandbox recorded: its machine, or the sandbox itself when it is a unit of its own. f must
 * not write to the database. */
int db_request_foreach_in_flight(sqlite3 *db, int worker_pid, void (*f)(const char *unit_id, void *userdata), void *userdata);
