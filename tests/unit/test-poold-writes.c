/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/macro.h"
#include "nspawn/pool/poold-writes.h"
#include "tests/unit/tap.h"

/* The first column of the first row of sql as text, "(no row)" for none. */
static const char *column(sqlite3 *db, const char *sql) {
        static char buf[256];
        cleanup_stmt sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
                return "(no row)";
        (void) snprintf(buf, sizeof(buf), "%s", (const char *) sqlite3_column_text(st, 0));
        return buf;
}

static void test_backoff(void) {
        static const struct {
                unsigned tries;
                uint64_t usec;
        } cases[] = {
                {0, 10 * USEC_PER_MSEC},
                {1, 20 * USEC_PER_MSEC},
                {3, 80 * USEC_PER_MSEC},
                {6, 640 * USEC_PER_MSEC},
                {7, USEC_PER_SEC}, /* 1.28 s: capped */
                {40, USEC_PER_SEC},
                {UINT32_MAX, USEC_PER_SEC},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_int((long long) poold_writes_backoff(cases[i].tries), (long long) cases[i].usec, "backoff after %u tries", cases[i].tries);
}

static PooldWrite write_of(PooldWriteOp op, const char *id, const char *text, int64_t n) {
        PooldWrite w = {.op = op, .n = n};

        (void) snprintf(w.id, sizeof(w.id), "%s", id);
        (void) snprintf(w.text, sizeof(w.text), "%s", text);
        return w;
}

#define MACHINE "machine-aaaaaaaaaaaa"
#define READY_SQL "SELECT state FROM pool WHERE machine_id = '" MACHINE "'"
#define WAITS_SQL "SELECT value FROM counters WHERE name = 'waits'"

/* Writes that meet another connection's lock are kept, in order, and done once it is gone. */
static void test_lock(sqlite3 *holder, sqlite3 *db) {
        PooldWrites q = POOLD_WRITES_INIT;
        PooldWrite ready = write_of(POOLD_WRITE_POOL_READY, MACHINE, "", 0), waits = write_of(POOLD_WRITE_COUNTER, "", "waits", 1);
        uint64_t now = 1000 * USEC_PER_SEC;

        /* Positive control: unlocked, a write is done at once. */
        tap_is_int(poold_writes_do(&q, db, &waits, now), 0, "unlocked: done");
        tap_is_str(column(db, WAITS_SQL), "1", "unlocked: the counter moved");
        tap_is_int((long long) q.n, 0, "unlocked: nothing queued");

        tap_is_int(db_exec(holder, "BEGIN IMMEDIATE"), 0, "another connection takes the write lock");
        tap_is_int(poold_writes_do(&q, db, &ready, now), 0, "locked: accepted");
        tap_is_int(poold_writes_do(&q, db, &waits, now), 0, "locked: a second accepted");
        tap_is_int((long long) q.n, 2, "locked: both queued");
        tap_ok(poold_writes_holds(&q, MACHINE), "the machine's write waits");
        tap_is_int((long long) q.next_at, (long long) (now + 10 * USEC_PER_MSEC), "first retry after the first back-off");

        tap_is_int(poold_writes_flush(&q, db, now + 10 * USEC_PER_MSEC), 0, "a flush under the lock drops nothing");
        tap_is_int((long long) q.n, 2, "still queued");
        tap_is_int((long long) q.next_at, (long long) (now + 30 * USEC_PER_MSEC), "the back-off doubled");

        tap_is_int(db_exec(holder, "COMMIT"), 0, "the lock is given back");
        tap_is_int(poold_writes_flush(&q, db, now + 20 * USEC_PER_MSEC), 0, "not due yet: nothing done");
        tap_is_int((long long) q.n, 2, "not due yet: still queued");
        tap_is_int(poold_writes_flush(&q, db, now + 30 * USEC_PER_MSEC), 0, "due: done");
        tap_is_int((long long) q.n, 0, "due: none left");
        tap_ok(!poold_writes_holds(&q, MACHINE), "the machine's write is done");
        tap_is_str(column(db, READY_SQL), "ready", "the machine's row says ready");
        tap_is_str(column(db, WAITS_SQL), "2", "the counter moved once more");
        tap_is_int((long long) q.next_at, (long long) UINT64_MAX, "nothing waits");
        poold_writes_done(&q);
}

#define SESSION "session-aaaaaaaaaaaa"
#define SESSION_SQL "SELECT state FROM sessions WHERE session_id = '" SESSION "'"

/* A pause's end that meets the lock holds the session (its turns wait) until it is written: paused,
 * or, for a pause that failed, active again. */
static void test_session_lock(sqlite3 *holder, sqlite3 *db) {
        static const struct {
                PooldWriteOp op;
                const char *want;
        } cases[] = {
                {POOLD_WRITE_SESSION_ACTIVE, "active"},
                {POOLD_WRITE_SESSION_PAUSED, "paused"},
        };
        uint64_t now = 2000 * USEC_PER_SEC;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PooldWrites q = POOLD_WRITES_INIT;
                PooldWrite w = write_of(cases[i].op, SESSION, "", 0);

                tap_is_int(db_session_claim_down(db, SESSION), 0, "%s: the session claimed for pausing", cases[i].want);
                tap_is_str(column(db, SESSION_SQL), "pausing", "%s: pausing", cases[i].want);
                tap_is_int(db_exec(holder, "BEGIN IMMEDIATE"), 0, "%s: another connection takes the write lock", cases[i].want);
                tap_is_int(poold_writes_do(&q, db, &w, now), 0, "%s: locked: queued", cases[i].want);
                tap_ok(poold_writes_holds(&q, SESSION), "%s: the session is held", cases[i].want);
                tap_is_str(column(db, SESSION_SQL), "pausing", "%s: the row says pausing still", cases[i].want);
                tap_is_int(db_exec(holder, "COMMIT"), 0, "%s: the lock is given back", cases[i].want);
                tap_is_int(poold_writes_flush(&q, db, q.next_at), 0, "%s: flushed", cases[i].want);
                tap_ok(!poold_writes_holds(&q, SESSION), "%s: the session is no longer held", cases[i].want);
                tap_is_str(column(db, SESSION_SQL), cases[i].want, "%s: written", cases[i].want);
                poold_writes_done(&q);
        }
}

static void test_gone(sqlite3 *db) {
        PooldWrites q = POOLD_WRITES_INIT;
        PooldWrite w = write_of(POOLD_WRITE_POOL_READY, "machine-bbbbbbbbbbbb", "", 0);

        tap_is_int(poold_writes_do(&q, db, &w, 1), -ENOENT, "a row that is not there: -ENOENT, not queued");
        tap_is_int((long long) q.n, 0, "nothing queued");
        poold_writes_done(&q);
}

int main(void) {
        char path[] = "/tmp/test-poold-writes-XXXXXX";
        char file[64];
        sqlite3 *db = NULL, *holder = NULL;
        int fd = mkstemp(path);

        test_backoff();
        if (fd < 0)
                return tap_done();
        (void) close(fd);
        (void) unlink(path);
        (void) snprintf(file, sizeof(file), "%s.db", path);
        if (!tap_ok(db_open(file, &db) >= 0 && db_open(file, &holder) >= 0, "two connections to one database"))
                return tap_done();
        tap_is_int(db_busy_timeout(db, 1), 0, "a short busy timeout");
        tap_is_int(db_pool_add(db, MACHINE, "/run/x.sock", "s"), 0, "a machine starting");
        test_lock(holder, db);
        tap_is_int(db_session_create(db, SESSION, 60, 2, NULL), 0, "a session");
        test_session_lock(holder, db);
        test_gone(db);
        db = db_close(db);
        holder = db_close(holder);
        for (size_t i = 0; i < 3; i++) {
                char name[80];

                (void) snprintf(name, sizeof(name), "%s%s", file, (const char *const[]){"", "-wal", "-shm"}[i]);
                (void) unlink(name);
        }
        return tap_done();
}
