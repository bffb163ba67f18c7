/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>

#include "db/db.h"
#include "db/mcp-db.h"
#include "lib/macro.h"
#include "lib/time-util.h"

static double now(void) {
        return (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC;
}

static const char *column(sqlite3_stmt *st, int i) {
        const unsigned char *v = sqlite3_column_text(st, i);

        return v ? (const char *) v : "";
}

int db_mcp_session_create(sqlite3 *db, const char *id, const char *key_name, const char *version) {
        double t = now();
        int r = db_run(db, "INSERT INTO mcp_sessions (mcp_session_id, key_name, version, created_at, last_used) VALUES (?1, ?2, ?3, ?4, ?4)",
                       "tttd", id, key_name, version, t);

        return r < 0 ? r : 0;
}

int db_mcp_session_use(sqlite3 *db, const char *id, McpSession *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st,
                           "UPDATE mcp_sessions SET last_used = ?2 WHERE mcp_session_id = ?1 AND ended_at IS NULL "
                           "RETURNING mcp_session_id, coalesce(key_name, ''), version",
                           "td", id, now());

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        *ret = (McpSession){};
        (void) snprintf(ret->id, sizeof(ret->id), "%s", column(st, 0));
        (void) snprintf(ret->key_name, sizeof(ret->key_name), "%s", column(st, 1));
        (void) snprintf(ret->version, sizeof(ret->version), "%s", column(st, 2));
        return 0;
}

int db_mcp_session_end(sqlite3 *db, const char *id) {
        int r = db_run(db, "UPDATE mcp_sessions SET ended_at = ?2 WHERE mcp_session_id = ?1 AND ended_at IS NULL", "td", id, now());

        if (r < 0)
                return r;
        return r == 0 ? -ENOENT : 0;
}

int db_mcp_call_begin(sqlite3 *db, const char *mcp_session_id, const char *rpc_id, const char *request_id, const char *tool,
                      const char *session_id) {
        int r = db_run(db,
                       "INSERT INTO mcp_calls (mcp_session_id, rpc_id, request_id, tool, session_id, started_at) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                       "tttttd", mcp_session_id, rpc_id, request_id, tool, session_id, now());

        return r < 0 ? r : 0;
}

int db_mcp_call_end(sqlite3 *db, const char *mcp_session_id, const char *rpc_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "DELETE FROM mcp_calls WHERE mcp_session_id = ?1 AND rpc_id = ?2 RETURNING cancelled", "tt", mcp_session_id,
                           rpc_id);

        if (r >= 0)
                r = db_step_row(st);
        if (r <= 0)
                return r;
        return sqlite3_column_int(st, 0) != 0;
}

int db_mcp_call_cancelled(sqlite3 *db, const char *mcp_session_id, const char *rpc_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT cancelled FROM mcp_calls WHERE mcp_session_id = ?1 AND rpc_id = ?2", "tt", mcp_session_id, rpc_id);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        return sqlite3_column_int(st, 0) != 0;
}

int db_mcp_call_cancel(sqlite3 *db, const char *mcp_session_id, const char *rpc_id, McpCall *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_run(db, "UPDATE mcp_calls SET cancelled = 1 WHERE mcp_session_id = ?1 AND rpc_id = ?2", "tt", mcp_session_id, rpc_id);

        if (r == 0)
                return -ENOENT;
        if (r < 0)
                return r;
        /* The machine is the request's: recorded there once the execution claimed one. */
        r = db_prepare(db, &st,
                       "SELECT c.tool, coalesce(q.machine_id, ''), coalesce(c.session_id, '') FROM mcp_calls c "
                       "LEFT JOIN requests q ON q.request_id = c.request_id WHERE c.mcp_session_id = ?1 AND c.rpc_id = ?2",
                       "tt", mcp_session_id, rpc_id);
        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        *ret = (McpCall){};
        (void) snprintf(ret->tool, sizeof(ret->tool), "%s", column(st, 0));
        (void) snprintf(ret->machine_id, sizeof(ret->machine_id), "%s", column(st, 1));
        (void) snprintf(ret->session_id, sizeof(ret->session_id), "%s", column(st, 2));
        return 0;
}

int db_mcp_prune(sqlite3 *db, unsigned days) {
        double before = now() - (double) days * 86400.0;
        int r = db_run(db, "DELETE FROM mcp_calls WHERE started_at < ?1", "d", before);

        if (r >= 0)
                r = db_run(db, "DELETE FROM mcp_sessions WHERE last_used < ?1", "d", before);
        return r;
}
