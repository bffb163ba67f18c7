/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "db/db.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "db/pool-db.h"

static double unix_now(void) {
        return (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC;
}

static int exec(sqlite3 *db, const char *sql) {
        return db_errno(sqlite3_exec(db, sql, NULL, NULL, NULL));
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret) {
        return db_errno(sqlite3_prepare_v2(db, sql, -1, ret, NULL));
}

int db_counter_add(sqlite3 *db, const char *name, int64_t delta) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "UPDATE counters SET value = value + ?2 WHERE name = ?1", &st);

        if (r < 0)
                return r;
        (void) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        (void) sqlite3_bind_int64(st, 2, delta);
        return db_step_done(st);
}

int db_pool_add(sqlite3 *db, const char *sandbox_id, const char *socket) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = exec(db, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        r = prepare(db, "INSERT INTO pool (sandbox_id, state, socket, created_at) VALUES (?1, 'starting', ?2, ?3)", &st);
        if (r >= 0) {
                (void) sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_STATIC);
                (void) sqlite3_bind_text(st, 2, socket, -1, SQLITE_STATIC);
                (void) sqlite3_bind_double(st, 3, unix_now());
                r = db_step_done(st);
        }
        if (r >= 0)
                r = db_counter_add(db, "created_total", 1);
        if (r < 0) {
                (void) exec(db, "ROLLBACK");
                return r;
        }
        return exec(db, "COMMIT");
}

int db_pool_ready(sqlite3 *db, const char *sandbox_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "UPDATE pool SET state = 'ready', ready_at = ?2 WHERE sandbox_id = ?1 AND state = 'starting'", &st);

        if (r < 0)
                return r;
        (void) sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_STATIC);
        (void) sqlite3_bind_double(st, 2, unix_now());
        r = db_step_done(st);
        if (r < 0)
                return r;
        return sqlite3_changes(db) == 1 ? 0 : -ENOENT;
}

/* One claim: BEGIN IMMEDIATE takes the write lock first, so two workers never get the same row. */
static int claim(sqlite3 *db, sqlite3_stmt *st, char *ret_id, size_t id_size, char *ret_socket, size_t socket_size) {
        int r, rc;

        r = exec(db, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                (void) snprintf(ret_id, id_size, "%s", (const char *) sqlite3_column_text(st, 0));
                (void) snprintf(ret_socket, socket_size, "%s", (const char *) sqlite3_column_text(st, 1));
                rc = sqlite3_step(st);
                r = rc == SQLITE_DONE ? 1 : db_errno(rc);
        } else
                r = rc == SQLITE_DONE ? 0 : db_errno(rc);
        (void) sqlite3_reset(st);
        if (r < 0) {
                (void) exec(db, "ROLLBACK");
                return r;
        }
        rc = exec(db, "COMMIT");
        if (rc < 0)
                return rc;
        return r == 1 ? 0 : -ENOENT;
}

int db_pool_claim(sqlite3 *db, int owner_pid, char *ret_sandbox_id, size_t id_size, char *ret_socket, size_t socket_size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = prepare(db,
                    "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2 WHERE sandbox_id = "
                    "(SELECT sandbox_id FROM pool WHERE state = 'ready' ORDER BY ready_at LIMIT 1) RETURNING sandbox_id, socket",
                    &st);
        if (r < 0)
                return r;
        (void) sqlite3_bind_int(st, 1, owner_pid);
        (void) sqlite3_bind_double(st, 2, unix_now());
        return claim(db, st, ret_sandbox_id, id_size, ret_socket, socket_size);
}

int db_pool_claim_idle(sqlite3 *db, int owner_pid, double ready_before, int64_t keep, char *ret_sandbox_id, size_t id_size, char *ret_socket, size_t socket_size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = prepare(db,
                    "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2 WHERE sandbox_id = "
                    "(SELECT sandbox_id FROM pool WHERE state = 'ready' AND "
                    "(ready_at < ?3 OR (SELECT count(*) FROM pool WHERE state = 'ready') > ?4) ORDER BY ready_at LIMIT 1) "
                    "RETURNING sandbox_id, socket",
                    &st);
        if (r < 0)
                return r;
        (void) sqlite3_bind_int(st, 1, owner_pid);
        (void) sqlite3_bind_double(st, 2, unix_now());
        (void) sqlite3_bind_double(st, 3, ready_before);
        (void) sqlite3_bind_int64(st, 4, keep);
        return claim(db, st, ret_sandbox_id, id_size, ret_socket, socket_size);
}

int db_pool_remove(sqlite3 *db, const char *sandbox_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "DELETE FROM pool WHERE sandbox_id = ?1", &st);

        if (r < 0)
                return r;
        (void) sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_STATIC);
        return db_step_done(st);
}

int db_pool_any_ready(sqlite3 *db) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "SELECT 1 FROM pool WHERE state = 'ready' LIMIT 1", &st), rc;

        if (r < 0)
                return r;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

int db_pool_exists(sqlite3 *db, const char *sandbox_id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "SELECT 1 FROM pool WHERE sandbox_id = ?1", &st), rc;

        if (r < 0)
                return r;
        (void) sqlite3_bind_text(st, 1, sandbox_id, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

int db_pool_health_failed(sqlite3 *db, const char *reason) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "UPDATE pool_health SET failures = failures + 1, last_error = ?1, at = ?2 WHERE id = 1", &st);

        if (r < 0)
                return r;
        (void) sqlite3_bind_text(st, 1, reason, -1, SQLITE_STATIC);
        (void) sqlite3_bind_double(st, 2, unix_now());
        return db_step_done(st);
}

int db_pool_health_ok(sqlite3 *db) {
        /* Most starts succeed: write only when there is something to clear. */
        return exec(db, "UPDATE pool_health SET failures = 0, last_error = NULL WHERE id = 1 AND failures > 0");
}

int db_pool_health(sqlite3 *db, double since, int *ret_failures, char *buf, size_t size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = prepare(db, "SELECT failures, coalesce(last_error, '') FROM pool_health WHERE id = 1 AND at >= ?1", &st), rc;

        if (r < 0)
                return r;
        (void) sqlite3_bind_double(st, 1, since);
        rc = sqlite3_step(st);
        *ret_failures = 0;
        if (rc == SQLITE_ROW) {
                *ret_failures = sqlite3_column_int(st, 0);
                (void) snprintf(buf, size, "%s", (const char *) sqlite3_column_text(st, 1));
                return 0;
        }
        return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

int db_pool_counts(sqlite3 *db, PoolCounts *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        PoolCounts c = {};
        int r, rc;

        r = prepare(db,
                    "SELECT (SELECT count(*) FROM pool WHERE state = 'ready'), (SELECT count(*) FROM pool WHERE state = 'starting'), "
                    "(SELECT count(*) FROM pool WHERE state = 'claimed'), (SELECT value FROM counters WHERE name = 'created_total'), "
                    "(SELECT value FROM counters WHERE name = 'waits')",
                    &st);
        if (r < 0)
                return r;
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return db_errno(rc == SQLITE_DONE ? SQLITE_ERROR : rc);
        c.ready = sqlite3_column_int64(st, 0);
        c.starting = sqlite3_column_int64(st, 1);
        c.claimed = sqlite3_column_int64(st, 2);
        c.created_total = sqlite3_column_int64(st, 3);
        c.waits = sqlite3_column_int64(st, 4);
        *ret = c;
        return 0;
}

int db_pool_foreach(sqlite3 *db, const char *state, int owner_pid, PoolRowFunc f, void *userdata) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r, rc;

        r = prepare(db,
                    "SELECT sandbox_id, state, socket, coalesce(owner_pid, 0) FROM pool "
                    "WHERE (?1 IS NULL OR state = ?1) AND (?2 = 0 OR owner_pid = ?2)",
                    &st);
        if (r < 0)
                return r;
        if (state)
                (void) sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
        (void) sqlite3_bind_int(st, 2, owner_pid);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                f((const char *) sqlite3_column_text(st, 0), (const char *) sqlite3_column_text(st, 1),
                  (const char *) sqlite3_column_text(st, 2), sqlite3_column_int(st, 3), userdata);
        return rc == SQLITE_DONE ? 0 : db_errno(rc);
}
