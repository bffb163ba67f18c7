/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <sqlite3.h>

#include "db/db.h"
#include "lib/macro.h"
#include "db/requests.h"

static int bind_text_or_null(sqlite3_stmt *st, int i, const char *s) {
        return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

int db_request_begin(sqlite3 *db, const char *request_id, const char *route, int worker_pid) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(db, "INSERT INTO requests (request_id, route, worker_pid) VALUES (?1, ?2, ?3)", -1, &st, NULL);
        if (rc != SQLITE_OK)
                return db_errno(rc);
        (void) sqlite3_bind_text(st, 1, request_id, -1, SQLITE_STATIC);
        (void) sqlite3_bind_text(st, 2, route, -1, SQLITE_STATIC);
        (void) sqlite3_bind_int(st, 3, worker_pid);
        return db_step_done(st);
}

int db_request_finish(sqlite3 *db, const char *request_id, const RequestOutcome *o) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(db,
                                "UPDATE requests SET sandbox_id = ?2, status = ?3, exit_code = ?4, duration_ms = ?5, error = ?6, "
                                "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE request_id = ?1",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return db_errno(rc);
        (void) sqlite3_bind_text(st, 1, request_id, -1, SQLITE_STATIC);
        (void) bind_text_or_null(st, 2, o->sandbox_id);
        (void) sqlite3_bind_int(st, 3, o->status);
        if (o->has_exit_code)
                (void) sqlite3_bind_int(st, 4, o->exit_code);
        else
                (void) sqlite3_bind_null(st, 4);
        if (o->duration_ms >= 0)
                (void) sqlite3_bind_int64(st, 5, o->duration_ms);
        else
                (void) sqlite3_bind_null(st, 5);
        (void) bind_text_or_null(st, 6, o->error);
        rc = db_step_done(st);
        if (rc < 0)
                return rc;
        return sqlite3_changes(db) == 1 ? 0 : -ENOENT;
}

int db_request_abandon(sqlite3 *db, int worker_pid, const char *error) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(db,
                                "UPDATE requests SET status = 502, error = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                                "WHERE (worker_pid = ?1 OR ?1 = 0) AND status IS NULL",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return db_errno(rc);
        (void) sqlite3_bind_int(st, 1, worker_pid);
        (void) sqlite3_bind_text(st, 2, error, -1, SQLITE_STATIC);
        rc = db_step_done(st);
        return rc < 0 ? rc : sqlite3_changes(db);
}

int db_request_sandbox(sqlite3 *db, const char *request_id, const char *sandbox_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(db, "UPDATE requests SET sandbox_id = ?2 WHERE request_id = ?1", -1, &st, NULL);
        if (rc != SQLITE_OK)
                return db_errno(rc);
        (void) sqlite3_bind_text(st, 1, request_id, -1, SQLITE_STATIC);
        (void) sqlite3_bind_text(st, 2, sandbox_id, -1, SQLITE_STATIC);
        return db_step_done(st);
}
