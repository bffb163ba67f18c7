/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/requests.h"
#include "lib/macro.h"

const char *db_termination_label(Termination t) {
        static const char *const labels[_TERMINATION_MAX] = {
                [TERMINATION_OK] = "ok",
                [TERMINATION_EXIT_NONZERO] = "exit_nonzero",
                [TERMINATION_TIMEOUT] = "timeout",
                [TERMINATION_MEMORY_LIMIT] = "memory_limit",
                [TERMINATION_TASKS_LIMIT] = "tasks_limit",
                [TERMINATION_FAILED] = "failed",
        };

        return t > TERMINATION_NONE && t < _TERMINATION_MAX ? labels[t] : NULL;
}

int db_request_begin_key(sqlite3 *db, const char *request_id, const char *route, const char *endpoint, int worker_pid, const char *key_name,
                         bool execution) {
        /* An execution is rated work (executions-per-minute) too. */
        int r = db_run(db,
                       "INSERT INTO requests (request_id, route, endpoint, worker_pid, key_name, execution, rated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                       "tttiti", request_id, route, endpoint, worker_pid, key_name, (int) execution);

        return r < 0 ? r : 0;
}

int db_request_begin(sqlite3 *db, const char *request_id, const char *route, const char *endpoint, int worker_pid) {
        return db_request_begin_key(db, request_id, route, endpoint, worker_pid, NULL, false);
}

typedef struct Finish {
        const char *request_id;
        const RequestOutcome *o;
} Finish;

/* The egress totals of a request that used the network. */
static int network_totals(sqlite3 *db, const RequestNetwork *n) {
        int r = 0;

        if (n->connections > 0)
                r = db_event_add(db, "egress_connection", "", n->connections);
        if (r >= 0 && n->refusals > 0)
                r = db_event_add(db, "egress_refusal", "", n->refusals);
        if (r >= 0 && n->rx_bytes > 0)
                r = db_event_add(db, "egress_bytes", "rx", n->rx_bytes);
        if (r >= 0 && n->tx_bytes > 0)
                r = db_event_add(db, "egress_bytes", "tx", n->tx_bytes);
        return r;
}

static int finish_locked(sqlite3 *db, void *userdata) {
        const Finish *f = userdata;
        const RequestOutcome *o = f->o;
        const RequestNetwork *n = o->network;
        int r = db_run(db,
                       "UPDATE requests SET sandbox_id = ?2, status = ?3, exit_code = ?4, duration_ms = ?5, error = ?6, "
                       "machine_id = ?7, session_id = ?8, language = ?9, termination = ?10, cpu_ms = ?11, memory_peak_bytes = ?12, "
                       "mcp_method = ?13, mcp_tool = ?14, network_rx_bytes = ?15, network_tx_bytes = ?16, network_hosts = ?17, "
                       "network_refused = ?18, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE request_id = ?1",
                       "tti?i?Ittttt?I?Itt?I?Itt", f->request_id, o->sandbox_id, o->status, (int) o->has_exit_code, o->exit_code,
                       (int) (o->duration_ms >= 0), o->duration_ms, o->error, o->machine_id, o->session_id, o->language,
                       db_termination_label(o->termination), (int) (o->cpu_ms >= 0), o->cpu_ms, (int) (o->memory_peak_bytes >= 0),
                       o->memory_peak_bytes, o->mcp_method, o->mcp_tool, (int) !!n, n ? n->rx_bytes : 0, (int) !!n, n ? n->tx_bytes : 0,
                       n ? n->hosts : NULL, n ? n->refused : NULL);

        if (r < 0)
                return r;
        if (r != 1)
                return -ENOENT;
        return n ? network_totals(db, n) : 0;
}

int db_request_finish(sqlite3 *db, const char *request_id, const RequestOutcome *o) {
        const RequestNetwork *n = o->network;

        /* A transaction of its own only where there are totals to add with the row: a request
         * without network, or whose code opened no connection, writes its row alone, as before. */
        if (n && (n->connections > 0 || n->refusals > 0 || n->rx_bytes > 0 || n->tx_bytes > 0))
                return db_transaction(db, finish_locked, &(Finish){request_id, o});
        return finish_locked(db, &(Finish){request_id, o});
}

int db_request_abandon(sqlite3 *db, int worker_pid, const char *error) {
        return db_run(db,
                      "UPDATE requests SET status = 502, error = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                      "WHERE (worker_pid = ?1 OR ?1 = 0) AND status IS NULL",
                      "it", worker_pid, error);
}

int db_request_sandbox(sqlite3 *db, const char *request_id, const char *sandbox_id, const char *machine_id, const char *language) {
        int r = db_run(db, "UPDATE requests SET sandbox_id = ?2, machine_id = ?3, language = ?4 WHERE request_id = ?1", "tttt", request_id,
                       sandbox_id, machine_id, language);

        return r < 0 ? r : 0;
}

int db_request_foreach_in_flight(sqlite3 *db, int worker_pid, void (*f)(const char *unit_id, void *userdata), void *userdata) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = db_prepare(db, &st,
                       "SELECT coalesce(machine_id, sandbox_id) FROM requests "
                       "WHERE (worker_pid = ?1 OR ?1 = 0) AND status IS NULL AND sandbox_id IS NOT NULL",
                       "i", worker_pid);
        if (r < 0)
                return r;
        while ((r = db_step_row(st)) > 0)
                f((const char *) sqlite3_column_text(st, 0), userdata);
        return r;
}

#define PRUNE_BATCH 500

int db_records_prune(sqlite3 *db, unsigned days, int64_t *ret_n) {
        char modifier[32];
        int64_t n = 0;
        int r;

        (void) snprintf(modifier, sizeof(modifier), "-%u days", days);
        /* By started_at's index; never a request in flight, whatever its age. */
        do {
                r = db_run(db,
                           "DELETE FROM requests WHERE rowid IN (SELECT rowid FROM requests "
                           "WHERE started_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?1) AND status IS NOT NULL LIMIT ?2)",
                           "ti", modifier, PRUNE_BATCH);
                if (r > 0)
                        n += r;
        } while (r == PRUNE_BATCH);
        if (r >= 0)
                do
                        r = db_run(db,
                                   "DELETE FROM session_usage WHERE id IN (SELECT id FROM session_usage "
                                   "WHERE at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?1) LIMIT ?2)",
                                   "ti", modifier, PRUNE_BATCH);
                while (r == PRUNE_BATCH);
        if (r < 0)
                return r;
        *ret_n = n;
        return 0;
}
