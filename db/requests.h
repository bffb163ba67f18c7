/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;

/* How an execution ended (GET /metrics: sandboxd_executions_total{termination}). */
typedef enum Termination {
        TERMINATION_NONE, /* not an execution, or not handed to a sandbox */
        TERMINATION_OK,
        TERMINATION_EXIT_NONZERO,
        TERMINATION_TIMEOUT,
        TERMINATION_MEMORY_LIMIT,
        TERMINATION_TASKS_LIMIT,
        TERMINATION_FAILED, /* no answer, or one that could not be passed on */
        _TERMINATION_MAX,
} Termination;

/* "ok", "exit_nonzero", "timeout", "memory_limit", "tasks_limit", "failed"; NULL for
 * TERMINATION_NONE and out of range. Pure. */
const char *db_termination_label(Termination t);

/* What a request's code did through the egress proxy (README, "Network: egress by name"). */
typedef struct RequestNetwork {
        int64_t rx_bytes, tx_bytes;
        int64_t connections, refusals; /* made, and refused by the relay or the proxy */
        const char *hosts, *refused;   /* comma-separated names; NULL: none */
} RequestNetwork;

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
        const char *language;   /* an execution's; NULL: not one */
        Termination termination; /* an execution's end once handed to a sandbox */
        int64_t cpu_ms;          /* what it used, from its cgroup; < 0: not counted */
        int64_t memory_peak_bytes; /* < 0: not counted */
        const char *mcp_method;    /* a /mcp request's JSON-RPC method; NULL for none */
        const char *mcp_tool;      /* its tool, for tools/call; NULL for none */
        const RequestNetwork *network; /* a request that asked for network; NULL for none */
} RequestOutcome;

/* Inserts the row of a request that has just arrived (status NULL: in flight), with the path of the
 * route it matched (NULL: none). -EEXIST if the id is already recorded. */
int db_request_begin(sqlite3 *db, const char *request_id, const char *route, const char *endpoint, int worker_pid);

/* The same, with the API key it came with (NULL: none) and whether it was let in as an execution
 * (what the key's executions-per-minute counts, with other work: db_request_set_rated()). */
int db_request_begin_key(sqlite3 *db, const char *request_id, const char *route, const char *endpoint, int worker_pid, const char *key_name,
                         bool execution);

/* Records how the request ended; what its code did through the egress proxy, if anything, is added
 * to the totals GET /metrics reports, in the same transaction. */
int db_request_finish(sqlite3 *db, const char *request_id, const RequestOutcome *o);

/* Closes the rows that a dead worker (worker_pid 0: any worker) left in flight with status 502 and
 * the given error; returns how many it closed. */
int db_request_abandon(sqlite3 *db, int worker_pid, const char *error);

/* Records the sandbox a request started, the machine it runs in (NULL: the sandbox is a unit of
 * its own) and the language of its code (NULL: not an execution), before it starts, so a worker's
 * death can be cleaned up, and counted. */
int db_request_sandbox(sqlite3 *db, const char *request_id, const char *sandbox_id, const char *machine_id, const char *language);

/* Calls f for the unit of each request that the worker worker_pid (0: any worker) left in flight
 * with a sandbox recorded: its machine, or the sandbox itself when it is a unit of its own. f must
 * not write to the database. */
int db_request_foreach_in_flight(sqlite3 *db, int worker_pid, void (*f)(const char *unit_id, void *userdata), void *userdata);

/* Deletes finished requests (and sessions' CPU records) that started more than days days ago, in
 * batches of a few hundred rows, each its own transaction; *ret_n: how many requests went. No
 * total is decremented: the totals' triggers fire on status updates only. */
int db_records_prune(sqlite3 *db, unsigned days, int64_t *ret_n);
