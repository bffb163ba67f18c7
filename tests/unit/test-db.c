/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/keys.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "db/requests.h"
#include "db/sessions.h"
#include "lib/error-count.h"
#include "lib/macro.h"
#include "lib/quota.h"
#include "tests/unit/tap.h"

/* The first column of the first row of sql, with ?1 bound to id, as text; "NULL" for SQL NULL,
 * "(no row)" for none. Good enough to compare a column against what a test expects. */
static const char *column(sqlite3 *db, const char *sql, const char *id) {
        static char buf[256];
        cleanup_stmt sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
                (void) snprintf(buf, sizeof(buf), "(error: %s)", sqlite3_errmsg(db));
                return buf;
        }
        if (id)
                (void) sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW)
                return "(no row)";
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
                return "NULL";
        (void) snprintf(buf, sizeof(buf), "%s", (const char *) sqlite3_column_text(st, 0));
        return buf;
}

#define COL(db, col, id) column(db, "SELECT " col " FROM requests WHERE request_id = ?1", id)
#define ROWS(db) atoi(column(db, "SELECT count(*) FROM requests", NULL))

/* db/schema.sql as db.c embeds it. */
extern const char db_schema_sql[];

static int schema_last_step(void) {
        int last = 0;

        for (const char *p = strstr(db_schema_sql, "-- step "); p; p = strstr(p + 1, "-- step ")) {
                int n = atoi(p + strlen("-- step "));

                if (n > last)
                        last = n;
        }
        return last;
}

static void test_open(sqlite3 *db) {
        int last = schema_last_step();

        tap_ok(last >= 1, "schema.sql has steps (last: %d)", last);
        tap_is_int(atoi(column(db, "PRAGMA user_version", NULL)), last, "every step applied: user_version %d", last);
        tap_is_str(column(db, "PRAGMA foreign_keys", NULL), "1", "foreign_keys on");
        tap_is_str(column(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'requests'", NULL), "requests",
                   "table requests exists");
        tap_is_str(column(db, "SELECT sql FROM sqlite_master WHERE name = 'requests_in_flight'", NULL),
                   "CREATE INDEX requests_in_flight ON requests(worker_pid) WHERE status IS NULL", "partial index on in-flight rows exists");
        tap_is_int(ROWS(db), 0, "no rows yet");
}

static void test_begin(sqlite3 *db) {
        const char *started;

        tap_is_int(db_request_begin(db, "r1", "POST /v1/execute", "/v1/execute", 100), 0, "begin r1");
        tap_is_str(COL(db, "route", "r1"), "POST /v1/execute", "r1: route");
        tap_is_str(COL(db, "worker_pid", "r1"), "100", "r1: worker_pid");
        tap_is_str(COL(db, "status", "r1"), "NULL", "r1: status NULL (in flight)");
        tap_is_str(COL(db, "sandbox_id", "r1"), "NULL", "r1: sandbox_id NULL");
        tap_is_str(COL(db, "finished_at", "r1"), "NULL", "r1: finished_at NULL");
        started = COL(db, "started_at", "r1");
        tap_ok(strlen(started) == strlen("2024-01-01T00:00:00.000Z") && started[10] == 'T' && started[23] == 'Z',
               "r1: started_at is an RFC 3339 UTC time ('%s')", started);

        tap_is_int(db_request_begin(db, "r1", "GET /v1/other", "/v1/execute", 200), -EEXIST, "begin r1 again: -EEXIST");
        tap_is_str(COL(db, "worker_pid", "r1"), "100", "r1: the duplicate changed nothing");
        tap_is_str(COL(db, "route", "r1"), "POST /v1/execute", "r1: route unchanged");
        tap_is_int(ROWS(db), 1, "still one row");

        /* Bound, not formatted into the SQL. */
        tap_is_int(db_request_begin(db, "x'); DROP TABLE requests; --", "POST /v1/execute", "/v1/execute", 100), 0, "begin with a quote in the id");
        tap_is_str(COL(db, "request_id", "x'); DROP TABLE requests; --"), "x'); DROP TABLE requests; --", "id stored verbatim");
        tap_is_int(ROWS(db), 2, "table intact, two rows");
}

static void test_sandbox(sqlite3 *db) {
        tap_is_int(db_request_sandbox(db, "r1", "sandbox-abcdefghijkl", "machine-abcdefghijkl", "python"), 0, "record r1's sandbox and machine");
        tap_is_str(COL(db, "sandbox_id", "r1"), "sandbox-abcdefghijkl", "r1: sandbox_id set");
        tap_is_str(COL(db, "machine_id", "r1"), "machine-abcdefghijkl", "r1: machine_id set");
        tap_is_str(COL(db, "status", "r1"), "NULL", "r1: still in flight");

        tap_is_int(db_request_sandbox(db, "nope", "sandbox-x", NULL, NULL), 0, "sandbox for an unknown id: no error");
        tap_is_str(COL(db, "sandbox_id", "nope"), "(no row)", "... and no row created");
}

static void test_finish(sqlite3 *db) {
        const RequestOutcome ok = {
                .sandbox_id = "sandbox-abcdefghijkl",
                .status = 200,
                .has_exit_code = true,
                .exit_code = 0,
                .duration_ms = 1234,
                .error = NULL,
        };
        const RequestOutcome failed = {
                .sandbox_id = NULL,
                .status = 400,
                .has_exit_code = false,
                .exit_code = 7, /* ignored: has_exit_code is false */
                .duration_ms = -1,
                .error = "code is required and must be a string",
        };

        tap_is_int(db_request_finish(db, "r1", &ok), 0, "finish r1 with 200");
        tap_is_str(COL(db, "status", "r1"), "200", "r1: status 200");
        tap_is_str(COL(db, "exit_code", "r1"), "0", "r1: exit_code 0 (not NULL)");
        tap_is_str(COL(db, "duration_ms", "r1"), "1234", "r1: duration_ms");
        tap_is_str(COL(db, "sandbox_id", "r1"), "sandbox-abcdefghijkl", "r1: sandbox_id");
        tap_is_str(COL(db, "error", "r1"), "NULL", "r1: error NULL");
        tap_ok(strcmp(COL(db, "finished_at", "r1"), "NULL") != 0, "r1: finished_at set");
        tap_is_str(column(db, "SELECT finished_at >= started_at FROM requests WHERE request_id = ?1", "r1"), "1",
                   "r1: finished_at not before started_at");

        tap_is_int(db_request_begin(db, "r2", "POST /v1/execute", "/v1/execute", 100), 0, "begin r2");
        tap_is_int(db_request_finish(db, "r2", &failed), 0, "finish r2 with 400");
        tap_is_str(COL(db, "status", "r2"), "400", "r2: status 400");
        tap_is_str(COL(db, "exit_code", "r2"), "NULL", "r2: no exit code stores NULL");
        tap_is_str(COL(db, "duration_ms", "r2"), "NULL", "r2: negative duration stores NULL");
        tap_is_str(COL(db, "sandbox_id", "r2"), "NULL", "r2: no sandbox stores NULL");
        tap_is_str(COL(db, "error", "r2"), failed.error, "r2: error text");

        tap_is_int(db_request_finish(db, "unknown", &ok), -ENOENT, "finish an unknown id: -ENOENT");
        tap_is_str(COL(db, "status", "unknown"), "(no row)", "... and no row created");
}

static void test_abandon(sqlite3 *db) {
        static const struct {
                const char *id;
                int pid;
        } rows[] = {
                {"a1", 200},
                {"a2", 200},
                {"a3", 300},
                {"a4", 200},
                {"a5", 2000},
        };
        const RequestOutcome done = {.status = 200, .duration_ms = 5};
        int before, in_flight;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                tap_is_int(db_request_begin(db, rows[i].id, "POST /v1/execute", "/v1/execute", rows[i].pid), 0, "begin %s (pid %d)", rows[i].id, rows[i].pid);
        tap_is_int(db_request_finish(db, "a4", &done), 0, "finish a4 before its worker dies");
        before = ROWS(db);

        tap_is_int(db_request_abandon(db, 200, "worker died"), 2, "abandon pid 200 closes its 2 in-flight rows");
        tap_is_str(COL(db, "status", "a1"), "502", "a1: 502");
        tap_is_str(COL(db, "error", "a1"), "worker died", "a1: error text");
        tap_ok(strcmp(COL(db, "finished_at", "a1"), "NULL") != 0, "a1: finished_at set");
        tap_is_str(COL(db, "status", "a2"), "502", "a2: 502");
        tap_is_str(COL(db, "status", "a3"), "NULL", "a3 (pid 300) still in flight");
        tap_is_str(COL(db, "status", "a5"), "NULL", "a5 (pid 2000) still in flight");
        tap_is_str(COL(db, "status", "a4"), "200", "a4 (finished) keeps status 200");
        tap_is_str(COL(db, "error", "a4"), "NULL", "a4 (finished) keeps error NULL");
        tap_is_str(COL(db, "status", "r1"), "200", "r1 (pid 100, finished) untouched");
        tap_is_int(ROWS(db), before, "no rows added or removed");

        tap_is_int(db_request_abandon(db, 200, "again"), 0, "abandon pid 200 again: nothing left");
        tap_is_str(COL(db, "error", "a1"), "worker died", "a1: error not overwritten");
        tap_is_int(db_request_abandon(db, 999, "none"), 0, "abandon a pid with no rows: 0");
        tap_is_int(db_request_abandon(db, 300, "worker died"), 1, "abandon pid 300: 1");
        tap_is_str(COL(db, "status", "a5"), "NULL", "a5 (pid 2000) still in flight");

        /* worker_pid 0: a restarted service closes what any worker of the last instance left. */
        in_flight = atoi(column(db, "SELECT count(*) FROM requests WHERE status IS NULL", NULL));
        tap_ok(in_flight >= 2, "rows of more than one worker in flight (%d)", in_flight);
        tap_is_int(db_request_abandon(db, 0, "service restarted"), in_flight, "abandon pid 0 closes every in-flight row");
        tap_is_str(COL(db, "error", "a5"), "service restarted", "a5 (pid 2000): closed with the given error");
        tap_is_str(COL(db, "status", "x'); DROP TABLE requests; --"), "502", "the row of pid 100: 502");
        tap_is_str(COL(db, "error", "a3"), "worker died", "a3 (closed before) keeps its error");
        tap_is_str(COL(db, "status", "r2"), "400", "r2 (finished) keeps status 400");
        tap_is_int(db_request_abandon(db, 0, "again"), 0, "abandon pid 0 again: nothing left");
}

typedef struct Seen {
        char ids[8][64];
        size_t n;
} Seen;

static void see(const char *sandbox_id, void *userdata) {
        Seen *s = userdata;

        if (s->n < ELEMENTSOF(s->ids))
                (void) snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", sandbox_id);
        s->n++;
}

static void test_in_flight(sqlite3 *db) {
        Seen seen = {};

        tap_is_int(db_request_begin(db, "f1", "POST /v1/execute", "/v1/execute", 400), 0, "begin f1 (pid 400)");
        tap_is_int(db_request_begin(db, "f2", "POST /v1/execute", "/v1/execute", 400), 0, "begin f2 (pid 400), no sandbox yet");
        tap_is_int(db_request_begin(db, "f3", "POST /v1/execute", "/v1/execute", 500), 0, "begin f3 (pid 500)");
        tap_is_int(db_request_sandbox(db, "f1", "sandbox-f1", "machine-f1", "python"), 0, "f1 has a sandbox in a machine");
        tap_is_int(db_request_sandbox(db, "f3", "tool-f3", NULL, NULL), 0, "f3 has a sandbox that is a unit of its own");
        tap_is_int(db_request_foreach_in_flight(db, 400, see, &seen), 0, "the units pid 400 left");
        tap_ok(seen.n == 1 && strcmp(seen.ids[0], "machine-f1") == 0, "are f1's machine only (%zu)", seen.n);
        seen.n = 0;
        tap_ok(db_request_foreach_in_flight(db, 500, see, &seen) == 0 && seen.n == 1 && strcmp(seen.ids[0], "tool-f3") == 0,
               "a tool call's unit is its sandbox");
        seen.n = 0;
        tap_is_int(db_request_foreach_in_flight(db, 0, see, &seen), 0, "the sandboxes any worker left");
        tap_is_int((long long) seen.n, 2, "are f1's and f3's");
        tap_is_int(db_request_abandon(db, 0, "done"), 3, "closing them");
        seen.n = 0;
        tap_ok(db_request_foreach_in_flight(db, 0, see, &seen) == 0 && seen.n == 0, "then none is in flight");
}

/* More rows than any fixed array held before: every one comes back. */
static void test_pool_list(sqlite3 *db) {
        cleanup_free PoolRow *rows = NULL;
        size_t n = 0, claimed = 0;
        char id[64], sock[POOL_SOCKET_MAX];
        int ok = 1;

        for (int i = 0; i < 300 && ok; i++) {
                (void) snprintf(id, sizeof(id), "sandbox-list%03d", i);
                (void) snprintf(sock, sizeof(sock), "/run/list%03d.sock", i);
                ok = db_pool_add(db, id, sock, "") == 0 && db_pool_ready(db, id) == 0;
        }
        tap_ok(ok, "pool: 300 sandboxes ready");
        for (int i = 0; i < 3; i++)
                claimed += db_pool_claim(db, 4242, NULL, id, sizeof(id), sock, sizeof(sock), NULL) == 0;
        tap_is_int((long long) claimed, 3, "pool: 3 claimed by pid 4242");
        tap_is_int(db_pool_list(db, "ready", 0, &rows, &n), 0, "pool: list the ready ones");
        tap_is_int((long long) n, 297, "pool: all 297 of them");
        rows = mfree(rows);
        tap_is_int(db_pool_list(db, "claimed", 4242, &rows, &n), 0, "pool: list what pid 4242 claimed");
        tap_ok(n == 3 && rows[0].owner_pid == 4242 && strcmp(rows[0].state, "claimed") == 0 && strncmp(rows[0].socket, "/run/list", 9) == 0,
               "pool: its 3, with state, owner and socket");
        rows = mfree(rows);
        tap_is_int(db_pool_list(db, "claimed", 4243, &rows, &n), 0, "pool: list what pid 4243 claimed");
        tap_is_int((long long) n, 0, "pool: nothing");
        (void) db_exec(db, "DELETE FROM pool WHERE machine_id LIKE 'sandbox-list%'");
}

static int tx_insert_then(sqlite3 *db, void *userdata) {
        int r = db_run(db, "INSERT INTO counters (name, value) VALUES ('tx', 1)", "");

        return r < 0 ? r : *(int *) userdata;
}

static void test_helpers(sqlite3 *db) {
        int fail = -EIO, pass = 7;

        tap_is_int(db_transaction(db, tx_insert_then, &fail), -EIO, "transaction: f's error comes back");
        tap_is_str(column(db, "SELECT value FROM counters WHERE name = 'tx'", NULL), "(no row)", "transaction: and its insert is rolled back");
        tap_is_int(db_transaction(db, tx_insert_then, &pass), 7, "transaction: f's result comes back");
        tap_is_str(column(db, "SELECT value FROM counters WHERE name = 'tx'", NULL), "1", "transaction: committed");
        tap_is_int(db_transaction(db, tx_insert_then, &pass), -EEXIST, "transaction: a constraint: -EEXIST");

        tap_is_int(db_run(db, "UPDATE counters SET value = ?2 WHERE name = ?1", "t?I", "tx", 0, (int64_t) 5), -EEXIST,
                   "run: '?' with 0 binds NULL, which the NOT NULL column refuses");
        tap_is_str(column(db, "SELECT value FROM counters WHERE name = 'tx'", NULL), "1", "run: the row is unchanged");
        tap_is_int(db_run(db, "UPDATE counters SET value = ?2 WHERE name = ?1", "t?I", "tx", 1, (int64_t) 5), 1, "run: '?' with 1 binds the value");
        tap_is_str(column(db, "SELECT value FROM counters WHERE name = 'tx'", NULL), "5", "run: value 5");
        tap_is_int(db_run(db, "UPDATE counters SET value = ?2 WHERE name = ?1", "tI", "nope", (int64_t) 1), 0, "run: no row changed");
        tap_is_int(db_run(db, "UPDATE counters SET value = ?1", "x", 1), -EINVAL, "run: an unknown type is refused");
        tap_is_int(db_run(db, "DELETE FROM counters WHERE name = ?1", "t", "tx"), 1, "run: delete");
}

static void test_errno(void) {
        static const struct {
                int rc, expected;
        } cases[] = {
                {SQLITE_OK, 0},
                {SQLITE_ROW, 0},
                {SQLITE_DONE, 0},
                {SQLITE_BUSY, -EBUSY},
                {SQLITE_BUSY_SNAPSHOT, -EBUSY},
                {SQLITE_LOCKED, -EBUSY},
                {SQLITE_CONSTRAINT, -EEXIST},
                {SQLITE_CONSTRAINT_PRIMARYKEY, -EEXIST},
                {SQLITE_FULL, -ENOSPC},
                {SQLITE_READONLY, -EROFS},
                {SQLITE_NOMEM, -ENOMEM},
                {SQLITE_ERROR, -EIO},
                {SQLITE_IOERR_WRITE, -EIO},
                {SQLITE_CORRUPT, -EIO},
                {SQLITE_CANTOPEN, -EIO},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_int(db_errno(cases[i].rc), cases[i].expected, "db_errno(%d) = %d", cases[i].rc, cases[i].expected);
}

static void test_open_fails(void) {
        sqlite3 *sentinel = (sqlite3 *) &sentinel, *db = sentinel;

        tap_ok(db_open("/nonexistent-sandboxd-dir/x.db", &db) < 0 && db == sentinel, "db_open in a missing directory fails, *ret untouched");
        tap_is_str(db_errmsg(NULL), "unable to open database file", "db_errmsg(NULL) says why, in sqlite's words");
}

/* A connection opened while another process holds the write lock: the schema is current, so the
 * open only reads, which WAL lets through at once; the write still waits for the lock. */
static void test_open_while_locked(void) {
        char dir[] = "/tmp/test-db-XXXXXX", path[64];
        sqlite3 *first = NULL, *holder = NULL, *second = NULL;
        struct timespec a, b;

        if (!tap_ok(mkdtemp(dir) != NULL, "a directory for a database file"))
                return;
        (void) snprintf(path, sizeof(path), "%s/x.db", dir);
        tap_is_int(db_open(path, &first), 0, "the database made (every step of the schema)");
        tap_is_int(sqlite3_open(path, &holder), SQLITE_OK, "another connection, as another process's");
        tap_is_int(sqlite3_exec(holder, "BEGIN IMMEDIATE; INSERT INTO counters VALUES ('lock', 0)", NULL, NULL, NULL), SQLITE_OK,
                   "... holds the write lock");
        /* Control: a write does wait for it, the busy timeout long. */
        tap_ok(sqlite3_busy_timeout(first, 100) == SQLITE_OK && db_exec(first, "INSERT INTO counters VALUES ('other', 0)") < 0,
               "a write meanwhile is refused (locked)");
        clock_gettime(CLOCK_MONOTONIC, &a);
        tap_is_int(db_open(path, &second), 0, "a new connection opens meanwhile");
        clock_gettime(CLOCK_MONOTONIC, &b);
        tap_ok((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1000, "... without waiting for the lock");
        (void) sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
        (void) sqlite3_close(holder);
        (void) db_close(second);
        (void) db_close(first);
        (void) unlink(path);
        (void) snprintf(path, sizeof(path), "%s/x.db-wal", dir);
        (void) unlink(path);
        (void) snprintf(path, sizeof(path), "%s/x.db-shm", dir);
        (void) unlink(path);
        (void) rmdir(dir);
}

/* The pool's rows: the claim order, a claim never handing out the same machine twice, a machine
 * put back and claimed again, counters. */
static void test_pool(sqlite3 *db) {
        char id[64], sock[256], why[256];
        PoolCounts c = {};
        int64_t executions = 0;
        int failures = -1;

        tap_is_int(db_pool_add(db, "sandbox-a", "/run/a.sock", "e=64"), 0, "pool: add a");
        tap_is_int(db_pool_add(db, "sandbox-b", "/run/b.sock", "e=64"), 0, "pool: add b");
        tap_is_int(db_pool_add(db, "sandbox-a", "/run/a.sock", "e=64"), -EEXIST, "pool: adding a twice is -EEXIST");
        tap_is_int(db_pool_claim(db, 7, NULL, id, sizeof(id), sock, sizeof(sock), NULL), -ENOENT, "pool: nothing ready, nothing claimed");
        tap_is_int(db_pool_ready(db, "sandbox-b"), 0, "pool: b ready");
        tap_is_int(db_pool_ready(db, "sandbox-a"), 0, "pool: a ready");
        tap_is_int(db_pool_ready(db, "sandbox-a"), -ENOENT, "pool: a cannot become ready twice");
        tap_is_int(db_pool_counts(db, &c), 0, "pool: counts");
        tap_ok(c.ready == 2 && c.starting == 0 && c.claimed == 0 && c.created_total == 0, "pool: 2 ready, no sandbox made yet");
        tap_ok(db_pool_claim(db, 7, NULL, id, sizeof(id), sock, sizeof(sock), &executions) == 0 && strcmp(id, "sandbox-b") == 0 &&
                       strcmp(sock, "/run/b.sock") == 0 && executions == 1,
               "pool: the longest-ready (b) is claimed first, for its first execution");
        tap_is_int(db_pool_release(db, "sandbox-b", NULL), 0, "pool: b is put back");
        tap_is_int(db_pool_release(db, "sandbox-b", NULL), -ENOENT, "pool: b cannot be put back twice");
        tap_ok(db_pool_claim(db, 7, NULL, id, sizeof(id), sock, sizeof(sock), &executions) == 0 && strcmp(id, "sandbox-a") == 0 && executions == 1,
               "pool: then a, the longest-ready now");
        tap_ok(db_pool_claim(db, 8, NULL, id, sizeof(id), sock, sizeof(sock), &executions) == 0 && strcmp(id, "sandbox-b") == 0 && executions == 2,
               "pool: then b again, for its second execution");
        tap_is_int(db_pool_claim(db, 9, NULL, id, sizeof(id), sock, sizeof(sock), NULL), -ENOENT, "pool: no machine is claimed twice");
        tap_ok(db_pool_counts(db, &c) == 0 && c.created_total == 3, "pool: a sandbox made for each execution");
        tap_is_int(db_pool_exists(db, "sandbox-a"), 1, "pool: a has a row");
        tap_is_int(db_pool_remove(db, "sandbox-a", "idle"), 0, "pool: remove a");
        tap_is_int(db_pool_exists(db, "sandbox-a"), 0, "pool: a is gone");
        tap_ok(db_pool_counts(db, &c) == 0 && c.claimed == 1 && c.ready == 0 && c.created_total == 3, "pool: 1 in flight, the lifetime count kept");
        tap_is_int(db_counter_add(db, "waits", 3), 0, "pool: count waits");
        tap_ok(db_pool_counts(db, &c) == 0 && c.waits == 3, "pool: waits counted");

        tap_ok(db_pool_health(db, 0, &failures, why, sizeof(why)) == 0 && failures == 0, "health: no failures at first");
        tap_is_int(db_pool_health_failed(db, "Unit x is not a slice."), 0, "health: a failure");
        tap_is_int(db_pool_health_failed(db, "Unit y is not a slice."), 0, "health: another");
        tap_ok(db_pool_health(db, 0, &failures, why, sizeof(why)) == 0 && failures == 2 && strcmp(why, "Unit y is not a slice.") == 0,
               "health: two failures, the last reason");
        tap_ok(db_pool_health(db, 4e9, &failures, why, sizeof(why)) == 0 && failures == 0, "health: old failures do not count");
        tap_is_int(db_pool_health_ok(db), 0, "health: a start clears it");
        tap_ok(db_pool_health(db, 0, &failures, why, sizeof(why)) == 0 && failures == 0, "health: cleared");
}

/* A claim takes a machine whose next sandbox is ready for its language first, and any machine when
 * none is; a machine made idle and stale is claimed for retirement. */
static void test_pool_language(sqlite3 *db) {
        char id[64], sock[256];

        tap_is_int(db_pool_add(db, "lang-1", "/run/1.sock", "s"), 0, "language: add 1");
        tap_is_int(db_pool_add(db, "lang-2", "/run/2.sock", "s"), 0, "language: add 2");
        tap_ok(db_pool_ready(db, "lang-1") == 0 && db_pool_ready(db, "lang-2") == 0, "language: both ready, 1 first");
        tap_ok(db_pool_claim(db, 11, "node", id, sizeof(id), sock, sizeof(sock), NULL) == 0 && strcmp(id, "lang-1") == 0,
               "language: none ready for node: the longest-ready");
        tap_is_int(db_pool_release(db, "lang-1", "node"), 0, "language: 1 back, its next sandbox ready for node");
        tap_ok(db_pool_claim(db, 11, "node", id, sizeof(id), sock, sizeof(sock), NULL) == 0 && strcmp(id, "lang-1") == 0,
               "language: node takes 1 (ready for node) before 2 (longer ready)");
        tap_is_int(db_pool_release(db, "lang-1", "node"), 0, "language: 1 back again, for node");
        tap_ok(db_pool_claim(db, 12, "python", id, sizeof(id), sock, sizeof(sock), NULL) == 0 && strcmp(id, "lang-2") == 0,
               "language: python takes 2, not the machine ready for node");
        tap_ok(db_pool_claim(db, 12, "python", id, sizeof(id), sock, sizeof(sock), NULL) == 0 && strcmp(id, "lang-1") == 0,
               "language: then 1, when nothing else is ready");
        tap_is_int(db_pool_release(db, "lang-2", NULL), 0, "language: 2 back");
        tap_ok(db_pool_claim_stale(db, 13, "s", id, sizeof(id), sock, sizeof(sock)) == -ENOENT, "stale: none made with other settings");
        tap_ok(db_pool_claim_stale(db, 13, "t", id, sizeof(id), sock, sizeof(sock)) == 0 && strcmp(id, "lang-2") == 0,
               "stale: 2, made with other settings, idle");
        tap_ok(db_pool_claim_stale(db, 13, "t", id, sizeof(id), sock, sizeof(sock)) == -ENOENT, "stale: 1 is busy, not claimed");
        tap_ok(db_pool_remove(db, "lang-1", NULL) == 0 && db_pool_remove(db, "lang-2", NULL) == 0, "language: both removed");
}

/* The count of table t's row with that key, label and number as db_metrics_rows() reads it; -1
 * when there is no such row. */
static long long metrics_count(sqlite3 *db, MetricsTable t, const char *key, const char *label, int64_t number, int64_t *ret_sum) {
        cleanup_free MetricsRow *rows = NULL;
        size_t n = 0;

        if (db_metrics_rows(db, t, &rows, &n) < 0)
                return -2;
        for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].key, key) == 0 && strcmp(rows[i].label, label) == 0 && rows[i].number == number) {
                        if (ret_sum)
                                *ret_sum = rows[i].sum;
                        return rows[i].count;
                }
        return -1;
}

/* The same, of one API key's rows ("": those without a key). */
static long long metrics_count_key(sqlite3 *db, MetricsTable t, const char *key, const char *label, int64_t number, const char *api_key) {
        cleanup_free MetricsRow *rows = NULL;
        size_t n = 0;

        if (db_metrics_rows(db, t, &rows, &n) < 0)
                return -2;
        for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].key, key) == 0 && strcmp(rows[i].label, label) == 0 && rows[i].number == number &&
                    strcmp(rows[i].api_key, api_key) == 0)
                        return rows[i].count;
        return -1;
}

/* A request that runs through begin, sandbox (when it has a language) and finish. */
static void request_run(sqlite3 *db, const char *id, const char *endpoint, const char *language, const RequestOutcome *o) {
        bool ok = db_request_begin(db, id, "POST /v1/execute", endpoint, 600) == 0 &&
                  (!language || db_request_sandbox(db, id, "sandbox-x", "machine-x", language) == 0) &&
                  (!o || db_request_finish(db, id, o) == 0);

        tap_ok(ok, "totals: request %s recorded", id);
}

/* Requests are counted once, when they end, by route and status; executions by language and
 * termination, and their durations into the histogram's buckets. */
static void test_totals(void) {
        sqlite3 *db = NULL;
        int64_t sum = 0;

        if (!tap_is_int(db_open(":memory:", &db), 0, "totals: a database of their own"))
                return;
        tap_is_int(metrics_count(db, METRICS_REQUESTS, "/v1/execute", "", 200, NULL), -1, "totals: no request counted at first");

        request_run(db, "t1", "/v1/execute", "python", &(RequestOutcome){.status = 200, .has_exit_code = true, .duration_ms = 30, .language = "python", .termination = TERMINATION_OK});
        request_run(db, "t2", "/v1/execute", "node", &(RequestOutcome){.status = 200, .has_exit_code = true, .exit_code = 3, .duration_ms = 700, .language = "node", .termination = TERMINATION_EXIT_NONZERO});
        request_run(db, "t3", "/v1/execute", "python", &(RequestOutcome){.status = 200, .has_exit_code = true, .exit_code = -1, .duration_ms = 1000, .language = "python", .termination = TERMINATION_TIMEOUT});
        request_run(db, "t4", "/v1/execute", NULL, &(RequestOutcome){.status = 400, .duration_ms = -1});
        request_run(db, "t5", NULL, NULL, &(RequestOutcome){.status = 404, .duration_ms = -1});
        /* In flight when its worker dies: an execution that failed, without a duration. */
        request_run(db, "t6", "/v1/execute", "python", NULL);
        tap_is_int(db_request_abandon(db, 600, "worker died"), 1, "totals: t6 abandoned");

        tap_is_int(metrics_count(db, METRICS_REQUESTS, "/v1/execute", "", 200, NULL), 3, "totals: 3 requests of /v1/execute answered 200");
        tap_is_int(metrics_count(db, METRICS_REQUESTS, "/v1/execute", "", 400, NULL), 1, "totals: 1 answered 400");
        tap_is_int(metrics_count(db, METRICS_REQUESTS, "/v1/execute", "", 502, NULL), 1, "totals: 1 closed with 502");
        tap_is_int(metrics_count(db, METRICS_REQUESTS, "unmatched", "", 404, NULL), 1, "totals: 1 that matched no route, 404");
        tap_is_int(metrics_count(db, METRICS_EXECUTIONS, "python", "ok", 0, NULL), 1, "totals: python ok 1");
        tap_is_int(metrics_count(db, METRICS_EXECUTIONS, "node", "exit_nonzero", 0, NULL), 1, "totals: node exit_nonzero 1");
        tap_is_int(metrics_count(db, METRICS_EXECUTIONS, "python", "timeout", 0, NULL), 1, "totals: python timeout 1");
        tap_is_int(metrics_count(db, METRICS_EXECUTIONS, "python", "failed", 0, NULL), 1, "totals: python failed 1 (its worker died)");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "python", "", 25, NULL), -1, "histogram: no python execution took 25 ms or less");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "python", "", 50, NULL), 1, "histogram: one took 50 ms or less");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "python", "", 500, NULL), 1, "histogram: still one at 500 ms");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "python", "", 1000, NULL), 2, "histogram: two at 1 s (the bound is inclusive)");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "node", "", 500, NULL), -1, "histogram: node: none at 500 ms");
        tap_is_int(metrics_count(db, METRICS_BUCKETS, "node", "", 1000, NULL), 1, "histogram: node: one at 1 s");
        tap_ok(metrics_count(db, METRICS_DURATIONS, "python", "", 0, &sum) == 2 && sum == 1030,
               "histogram: python: 2 executions with a duration (not the abandoned one), 1030 ms in all");
        tap_is_int(metrics_count(db, METRICS_BOUNDS, "", "", 60000, NULL), 0, "histogram: its last bound is 60 s");

        /* Counted once: a row that has its status already is not counted again. */
        tap_is_int(db_request_finish(db, "t1", &(RequestOutcome){.status = 200, .duration_ms = 30, .language = "python", .termination = TERMINATION_OK}),
                   0, "totals: t1 finished twice");
        tap_is_int(metrics_count(db, METRICS_EXECUTIONS, "python", "ok", 0, NULL), 1, "totals: and still counted once");
        tap_is_int(metrics_count(db, METRICS_REQUESTS, "/v1/execute", "", 200, NULL), 3, "totals: its request too");

        /* Sessions, by state, from their table; none counted while it is empty, or when a schema has
         * no such table. */
        tap_is_int(metrics_count(db, METRICS_SESSIONS, "active", "", 0, NULL), -1, "sessions: none yet");
        tap_is_int(db_exec(db, "INSERT INTO sessions (session_id, state, ttl_s, created_at, last_used) VALUES "
                               "('s1', 'active', 600, 0, 0), ('s2', 'active', 600, 0, 0), ('s3', 'paused', 600, 0, 0), "
                               "('s4', 'deleted', 600, 0, 0)"),
                   0, "sessions: four of them");
        tap_is_int(metrics_count(db, METRICS_SESSIONS, "active", "", 0, NULL), 2, "sessions: 2 active");
        tap_is_int(metrics_count(db, METRICS_SESSIONS, "paused", "", 0, NULL), 1, "sessions: 1 paused");
        tap_is_int(db_exec(db, "DROP TABLE sessions"), 0, "sessions: a schema without their table");
        tap_is_int(metrics_count(db, METRICS_SESSIONS, "active", "", 0, NULL), -1, "sessions: no table, no rows, no error");
        db = db_close(db);
}

/* Machines are counted when their row is added, and retired by reason when it is removed, once. */
static void test_machine_events(void) {
        sqlite3 *db = NULL;

        if (!tap_is_int(db_open(":memory:", &db), 0, "machines: a database of their own"))
                return;
        tap_ok(db_pool_add(db, "m-1", "/run/m1.sock", "") == 0 && db_pool_add(db, "m-2", "/run/m2.sock", "") == 0, "machines: two added");
        tap_is_int(db_pool_add(db, "m-1", "/run/m1.sock", ""), -EEXIST, "machines: one of them again: refused");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "machine_created", "", 0, NULL), 2, "machines: 2 created (the refused one not)");
        tap_is_int(db_pool_remove(db, "m-1", "timeout"), 0, "machines: m-1 retired after a timeout");
        tap_is_int(db_pool_remove(db, "m-1", "timeout"), 0, "machines: m-1 removed again");
        tap_is_int(db_pool_remove(db, "m-2", "idle"), 0, "machines: m-2 retired idle");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "machine_retired", "timeout", 0, NULL), 1, "machines: 1 retired for a timeout, once");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "machine_retired", "idle", 0, NULL), 1, "machines: 1 retired idle");
        db = db_close(db);
}

/* sqlite's errors are counted where they happen, the broker's by whoever calls it; both are written
 * down at the next flush, and are pending no more. */
static void test_error_counts(void) {
        uint64_t pending[_ERROR_COUNT_MAX];
        sqlite3 *db = NULL;
        long long before;

        if (!tap_is_int(db_open(":memory:", &db), 0, "errors: a database of their own"))
                return;
        /* What the tests above met (they make sqlite fail on purpose) is written down first. */
        tap_is_int(db_error_counts_flush(db), 0, "errors: what is pending, flushed");
        error_count_pending(pending);
        tap_is_int((long long) pending[ERROR_COUNT_SQLITE], 0, "errors: no sqlite error pending");
        before = metrics_count(db, METRICS_EVENTS, "sqlite_error", "", 0, NULL);
        tap_ok(before > 0, "errors: the tests above failed sqlite calls, counted (%lld)", before);
        tap_is_int(metrics_count(db, METRICS_EVENTS, "broker_error", "kill", 0, NULL), -1, "errors: no failed broker call");

        tap_ok(db_run(db, "SELECT * FROM no_such_table", "") < 0, "errors: a statement that fails");
        tap_ok(db_run(db, "INSERT INTO counters (name, value) VALUES ('waits', 1)", "") == -EEXIST, "errors: a constraint that fails");
        error_count_inc(ERROR_COUNT_BROKER_KILL);
        error_count_pending(pending);
        tap_is_int((long long) pending[ERROR_COUNT_SQLITE], 2, "errors: both counted, pending");
        tap_is_int((long long) pending[ERROR_COUNT_BROKER_KILL], 1, "errors: a broker kill pending");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "sqlite_error", "", 0, NULL), before, "errors: not in the totals yet");
        tap_is_int(db_error_counts_flush(db), 0, "errors: flushed");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "sqlite_error", "", 0, NULL), before + 2, "errors: 2 more sqlite errors in the totals");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "broker_error", "kill", 0, NULL), 1, "errors: 1 failed kill in the totals");
        error_count_pending(pending);
        tap_ok(pending[ERROR_COUNT_SQLITE] == 0 && pending[ERROR_COUNT_BROKER_KILL] == 0, "errors: nothing pending after the flush");
        tap_is_int(db_error_counts_flush(db), 0, "errors: flushed again");
        tap_is_int(metrics_count(db, METRICS_EVENTS, "sqlite_error", "", 0, NULL), before + 2, "errors: counted once");
        db = db_close(db);
}

static void test_termination_labels(void) {
        tap_ok(db_termination_label(TERMINATION_NONE) == NULL && db_termination_label(_TERMINATION_MAX) == NULL,
               "termination: none and out of range have no label");
        for (Termination t = TERMINATION_NONE + 1; t < _TERMINATION_MAX; t++) {
                const char *l = db_termination_label(t);

                tap_ok(l && strspn(l, "abcdefghijklmnopqrstuvwxyz_") == strlen(l) && *l, "termination %d: '%s'", (int) t, l ? l : "(null)");
                for (Termination u = TERMINATION_NONE + 1; l && u < t; u++)
                        if (strcmp(l, db_termination_label(u)) == 0)
                                tap_ok(false, "termination %d: '%s' is also %d's", (int) t, l, (int) u);
        }
}

/* Sessions: the active limit, turns in arrival order, a dead worker's turn given up, the idle timer
 * that spares a session with something queued, pause and retention. */
static void test_sessions(sqlite3 *db) {
        int64_t t1 = 0, t2 = 0, t3 = 0, active = -1, paused = -1;
        char id[64] = "";
        Session s;

        tap_is_int(db_session_create(db, "session-aaaaaaaaaaaa", 60, 2, NULL), 0, "create a");
        tap_is_int(db_session_create(db, "session-bbbbbbbbbbbb", 60, 2, "team-b"), 0, "create b");
        tap_is_int(db_session_create(db, "session-cccccccccccc", 60, 2, NULL), -EUSERS, "a third past 2 active: -EUSERS");
        tap_is_int(db_session_get(db, "session-cccccccccccc", &s), -ENOENT, "the refused one does not exist");
        tap_is_int(db_session_get(db, "session-aaaaaaaaaaaa", &s), 0, "get a");
        tap_ok(strcmp(s.state, "active") == 0 && s.ttl_s == 60 && s.run_count == 0 && !s.up && !s.state_reset, "a: active, fresh");
        tap_is_str(s.key_name, "", "a: made without a key");
        tap_ok(db_session_get(db, "session-bbbbbbbbbbbb", &s) == 0 && strcmp(s.key_name, "team-b") == 0, "b: the key that made it");

        tap_is_int(db_session_enqueue(db, "session-aaaaaaaaaaaa", 11, &t1), 0, "enqueue 1 on a");
        tap_is_int(db_session_enqueue(db, "session-aaaaaaaaaaaa", 12, &t2), 0, "enqueue 2 on a");
        tap_is_int(db_session_enqueue(db, "session-bbbbbbbbbbbb", 13, &t3), 0, "enqueue 3 on b");
        tap_is_int(db_session_turn(db, "session-aaaaaaaaaaaa", t1), 1, "the first on a has its turn");
        tap_is_int(db_session_turn(db, "session-aaaaaaaaaaaa", t2), 0, "the second on a waits");
        tap_is_int(db_session_turn(db, "session-bbbbbbbbbbbb", t3), 1, "b's does not wait for a's");
        /* Nothing queued is idle; a queued session is not, however old its last use. */
        tap_is_int(db_session_claim_expired(db, 1e12, id, sizeof(id)), -ENOENT, "sessions with something queued are never expired");
        tap_is_int(db_session_dequeue_worker(db, 11), 1, "the first's worker died: its place is removed");
        tap_is_int(db_session_turn(db, "session-aaaaaaaaaaaa", t2), 1, "then the second has its turn");
        (void) db_session_dequeue(db, t2);
        (void) db_session_dequeue(db, t3);
        tap_is_int(db_session_claim_expired(db, 0, id, sizeof(id)), -ENOENT, "nothing expired before its ttl_s");
        tap_is_int(db_session_claim_expired(db, 1e12, id, sizeof(id)), 0, "idle long past ttl_s: claimed");
        tap_is_int(db_session_get(db, id, &s), 0, "the claimed one");
        tap_is_str(s.state, "pausing", "claimed: pausing");
        tap_is_int(db_session_counts(db, &active, &paused), 0, "counts");
        tap_ok(active == 2 && paused == 0, "pausing still counts as active (%lld, %lld)", (long long) active, (long long) paused);
        tap_is_int(db_session_resume(db, id, 2), -EAGAIN, "resume while pausing: -EAGAIN");
        tap_is_int(db_session_unpause(db, id), 0, "a pause that failed: active again");
        tap_ok(db_session_get(db, id, &s) == 0 && strcmp(s.state, "active") == 0, "active again, on its machine");
        tap_is_int(db_session_unpause(db, id), -ENOENT, "no longer pausing: -ENOENT");
        tap_is_int(db_session_claim_expired(db, 1e12, id, sizeof(id)), 0, "idle still: claimed again");
        tap_is_int(db_session_paused(db, id), 0, "paused");
        tap_is_int(db_session_get(db, id, &s), 0, "get it");
        tap_ok(strcmp(s.state, "paused") == 0 && s.state_reset && s.paused_at > 0, "paused, its state lost, paused_at set");
        tap_is_int(db_session_create(db, "session-cccccccccccc", 60, 2, NULL), 0, "a paused one does not count: a new one fits");
        tap_is_int(db_session_resume(db, id, 2), -EUSERS, "resume past the limit: -EUSERS");
        tap_is_int(db_session_claim_retained(db, 0, id, sizeof(id)), -ENOENT, "nothing paused before time 0");
        tap_is_int(db_session_claim_retained(db, 1e12, id, sizeof(id)), 0, "paused long enough: deleted");
        tap_is_int(db_session_get(db, id, &s), -ENOENT, "a deleted session is not found");
        tap_is_int(db_session_delete(db, id), -ENOENT, "nor deleted twice");
        tap_is_int(db_session_event(db, "session-bbbbbbbbbbbb", "run", "r9", "python: success"), 0, "an event");
        tap_is_str(column(db, "SELECT event || ' ' || request_id FROM session_events WHERE session_id = ?1", "session-bbbbbbbbbbbb"), "run r9",
                   "the event's row");
}

/* The detail of a query's plan's first step (EXPLAIN QUERY PLAN). */
static const char *plan_detail(sqlite3 *db, const char *sql) {
        static char buf[256];
        cleanup_stmt sqlite3_stmt *st = NULL;
        char q[512];

        (void) snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
        if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
                return "(no plan)";
        (void) snprintf(buf, sizeof(buf), "%s", (const char *) sqlite3_column_text(st, 3));
        return buf;
}

static ApiKey key(const char *name, const char *hash, int64_t conc, int64_t per_min, int64_t cpu) {
        ApiKey k = {.max_concurrent = conc, .executions_per_minute = per_min, .cpu_seconds_per_day = cpu};

        (void) snprintf(k.name, sizeof(k.name), "%s", name);
        (void) snprintf(k.token_sha256, sizeof(k.token_sha256), "%s", hash);
        return k;
}

/* API keys: names and hashes unique for good, revocation once, what counts against the quotas. */
static void test_keys(void) {
        cleanup_free ApiKey *keys = NULL;
        cleanup_free QuotaUse *uses = NULL;
        sqlite3 *db = NULL;
        int64_t in_flight = -1, used = -1;
        size_t n = 0;
        ApiKey k;

        if (!tap_is_int(db_open(":memory:", &db), 0, "keys: a database of their own"))
                return;
        k = key("alpha", "aa", 2, 0, 0);
        tap_is_int(db_key_add(db, &k), 0, "keys: add alpha (max-concurrent 2)");
        k = key("beta", "bb", 0, 5, 30);
        tap_is_int(db_key_add(db, &k), 0, "keys: add beta (5 per minute, 30 CPU s a day)");
        k = key("alpha", "cc", 0, 0, 0);
        tap_is_int(db_key_add(db, &k), -EEXIST, "keys: a name taken: -EEXIST");
        k = key("gamma", "aa", 0, 0, 0);
        tap_is_int(db_key_add(db, &k), -EEXIST, "keys: a hash taken: -EEXIST");
        tap_is_str(column(db, "SELECT coalesce(max_concurrent, 'NULL') || ' ' || coalesce(executions_per_minute, 'NULL') FROM api_keys "
                              "WHERE name = ?1",
                          "alpha"),
                   "2 NULL", "keys: no limit is NULL");

        tap_ok(db_key_list(db, false, &keys, &n) == 0 && n == 2 && strcmp(keys[0].name, "alpha") == 0 && keys[0].max_concurrent == 2 &&
                       strcmp(keys[1].name, "beta") == 0 && keys[1].executions_per_minute == 5 && keys[1].cpu_seconds_per_day == 30 &&
                       strcmp(keys[1].token_sha256, "bb") == 0 && keys[1].created_at[0] == '2' && keys[1].revoked_at[0] == 0,
               "keys: listed by name with their limits, made now, in force");
        keys = mfree(keys);

        tap_is_int(db_key_revoke(db, "beta"), 0, "keys: revoke beta");
        tap_is_int(db_key_revoke(db, "beta"), -EALREADY, "keys: revoked twice: -EALREADY");
        tap_is_int(db_key_revoke(db, "nobody"), -ENOENT, "keys: revoke an unknown key: -ENOENT");
        tap_ok(db_key_list(db, true, &keys, &n) == 0 && n == 1 && strcmp(keys[0].name, "alpha") == 0, "keys: only alpha is in force");
        keys = mfree(keys);
        tap_ok(db_key_list(db, false, &keys, &n) == 0 && n == 2 && keys[1].revoked_at[0] == '2', "keys: beta is listed, revoked");
        keys = mfree(keys);
        k = key("beta", "dd", 0, 0, 0);
        tap_is_int(db_key_add(db, &k), -EEXIST, "keys: a revoked key's name is not given again");

        /* Found by its hash, through the table's index on it (not by reading every key). */
        k = (ApiKey){};
        tap_ok(db_key_find(db, "aa", &k) == 0 && strcmp(k.name, "alpha") == 0 && k.max_concurrent == 2, "keys: found by hash: alpha");
        tap_is_int(db_key_find(db, "bb", &k), -ENOENT, "keys: a revoked key's hash finds nothing");
        tap_is_int(db_key_find(db, "zz", &k), -ENOENT, "keys: an unknown hash finds nothing");
        tap_is_int(db_key_find(db, "AA", &k), -ENOENT, "keys: the hash is matched exactly (no collation folds case)");
        {
                char images[API_KEY_IMAGES_MAX + 1] = "untouched";

                k = key("delta", "ee", 0, 0, 0);
                (void) snprintf(k.images, sizeof(k.images), "demo-agent,other");
                tap_is_int(db_key_add(db, &k), 0, "keys: add delta, which may call demo-agent and other");
                tap_ok(db_key_images(db, "delta", images, sizeof(images)) == 0 && strcmp(images, "demo-agent,other") == 0, "keys: delta's images");
                tap_ok(db_key_images(db, "alpha", images, sizeof(images)) == 0 && images[0] == 0, "keys: alpha's: none listed, every one");
                tap_is_str(column(db, "SELECT coalesce(images, 'NULL') FROM api_keys WHERE name = ?1", "alpha"), "NULL", "keys: stored as NULL");
                tap_is_int(db_key_images(db, "beta", images, sizeof(images)), -ENOENT, "keys: a revoked key may call nothing");
                tap_ok(db_key_find(db, "ee", &k) == 0 && strcmp(k.images, "demo-agent,other") == 0, "keys: found by hash with its images");
                tap_is_int(db_key_revoke(db, "delta"), 0, "keys: delta revoked again");
        }
        {
                char egress[API_KEY_EGRESS_MAX + 1] = "untouched";

                k = key("epsilon", "ff", 0, 0, 0);
                (void) snprintf(k.egress, sizeof(k.egress), "pypi.org,*.pythonhosted.org");
                tap_is_int(db_key_add(db, &k), 0, "keys: add epsilon, whose code may reach pypi.org and *.pythonhosted.org");
                tap_ok(db_key_egress(db, "epsilon", egress, sizeof(egress)) == 0 && strcmp(egress, "pypi.org,*.pythonhosted.org") == 0,
                       "keys: epsilon's egress");
                tap_ok(db_key_egress(db, "alpha", egress, sizeof(egress)) == 0 && egress[0] == 0, "keys: alpha's: none listed, the operator's");
                tap_is_str(column(db, "SELECT coalesce(egress, 'NULL') FROM api_keys WHERE name = ?1", "alpha"), "NULL", "keys: stored as NULL");
                tap_is_int(db_key_egress(db, "beta", egress, sizeof(egress)), -ENOENT, "keys: a revoked key's egress is none");
                tap_ok(db_key_find(db, "ff", &k) == 0 && strcmp(k.egress, "pypi.org,*.pythonhosted.org") == 0, "keys: found by hash with its egress");
                tap_is_int(db_key_revoke(db, "epsilon"), 0, "keys: epsilon revoked again");
        }
        tap_ok(strstr(plan_detail(db, "SELECT name FROM api_keys WHERE token_sha256 = 'aa' AND revoked_at IS NULL"), "USING INDEX") != NULL,
               "keys: the lookup by hash searches an index");

        /* What counts: alpha's requests in flight; its executions let in, in the window only. */
        tap_is_int(db_request_begin_key(db, "k1", "POST /v1/execute", "/v1/execute", 1, "alpha", true), 0, "keys: k1, an execution of alpha");
        tap_is_int(db_request_begin_key(db, "k2", "GET /v1/pool", "/v1/pool", 1, "alpha", false), 0, "keys: k2, not an execution");
        tap_is_int(db_request_begin_key(db, "k3", "POST /v1/execute", "/v1/execute", 1, "alpha", true), 0, "keys: k3, another");
        tap_is_int(db_request_begin_key(db, "k4", "POST /v1/execute", "/v1/execute", 1, "beta", true), 0, "keys: k4, beta's");
        tap_is_int(db_request_begin_key(db, "k5", "POST /v1/execute", "/v1/execute", 1, "alpha", true), 0, "keys: k5, alpha's, long ago");
        tap_is_int(db_exec(db, "UPDATE requests SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-61 seconds') WHERE request_id = 'k5'"),
                   0, "keys: k5 started 61 s ago");
        tap_is_str(COL(db, "key_name || ' ' || execution", "k2"), "alpha 0", "keys: the row names its key");
        tap_is_int(db_request_finish(db, "k3", &(RequestOutcome){.status = 200, .duration_ms = 5}), 0, "keys: k3 answered");
        tap_is_int(db_request_finish(db, "k5", &(RequestOutcome){.status = 200, .duration_ms = 5}), 0, "keys: k5 answered");
        tap_ok(db_key_in_flight(db, "alpha", &in_flight) == 0 && in_flight == 2, "keys: alpha has 2 in flight (k1, k2)");
        tap_ok(db_key_uses(db, "alpha", KEY_WINDOW_EXECUTIONS, 60, &uses, &n) == 0 && n == 2 && uses[0].amount == 1 && uses[0].age_ms >= 0 &&
                       uses[0].age_ms < 10000,
               "keys: alpha's executions in the last minute: k1 and k3, not k2 (no execution) nor k5 (too old)");
        uses = mfree(uses);
        tap_ok(db_key_uses(db, "alpha", KEY_WINDOW_EXECUTIONS, 120, &uses, &n) == 0 && n == 3 && uses[0].age_ms >= 61000 && uses[0].age_ms < 70000,
               "keys: in the last 2 minutes, k5 too, oldest first, its age in ms");
        uses = mfree(uses);
        tap_ok(db_key_used(db, "alpha", KEY_WINDOW_EXECUTIONS, 60, &used) == 0 && used == 2, "keys: their sum alone: 2");
        tap_ok(db_key_used(db, "alpha", KEY_WINDOW_EXECUTIONS, 120, &used) == 0 && used == 3, "keys: 3 in 2 minutes");
        tap_is_int(db_exec(db, "UPDATE requests SET cpu_ms = 1500 WHERE request_id = 'k3'; UPDATE requests SET cpu_ms = 700 WHERE request_id = 'k5'"), 0,
                   "keys: k3 used 1.5 CPU s, k5 0.7");
        tap_ok(db_key_used(db, "alpha", KEY_WINDOW_CPU, 60, &used) == 0 && used == 1500, "keys: alpha's CPU ms in the last minute: k3's");
        tap_ok(db_key_uses(db, "alpha", KEY_WINDOW_CPU, 120, &uses, &n) == 0 && n == 2 && uses[0].amount == 700 && uses[1].amount == 1500,
               "keys: in 2 minutes, k5's too, oldest first");
        uses = mfree(uses);
        tap_ok(db_key_uses(db, "nobody", KEY_WINDOW_EXECUTIONS, 60, &uses, &n) == 0 && n == 0, "keys: an unknown key has used nothing");
        uses = mfree(uses);
        tap_is_int(db_key_uses(db, "alpha", (KeyWindow) 7, 60, &uses, &n), -EINVAL, "keys: an unknown window: -EINVAL");

        /* An MCP batch's row counts each of its requests; set_rated never lowers that. */
        tap_is_int(db_request_begin_key(db, "k7", "POST /mcp", "/mcp", 1, "alpha", false), 0, "keys: k7, an MCP batch of alpha's");
        tap_is_int(db_request_add_rated(db, "k7", 5), 0, "keys: k7 counts 5 requests");
        tap_is_int(db_request_set_rated(db, "k7"), 0, "keys: and is rated once more as rated work");
        tap_is_int(db_request_set_execution(db, "k7"), 0, "keys: and its tool call is one more");
        tap_ok(db_key_used(db, "alpha", KEY_WINDOW_EXECUTIONS, 60, &used) == 0 && used == 8, "keys: alpha's sum: k1, k3 and k7's 6");
        tap_ok(db_key_uses(db, "alpha", KEY_WINDOW_EXECUTIONS, 60, &uses, &n) == 0 && n == 3 && uses[2].amount == 6, "keys: k7 is one use of 6");
        uses = mfree(uses);
        tap_ok(strstr(plan_detail(db, "SELECT sum(rated) FROM requests WHERE key_name = 'alpha' AND rated > 0 AND started_at >= '2026'"),
                      "requests_key_rated") != NULL,
               "keys: the rated sum searches its index");
        tap_is_int(db_request_finish(db, "k7", &(RequestOutcome){.status = 200, .duration_ms = 5}), 0, "keys: k7 answered");

        /* The totals: each key's apart, the rest without; together what step 7 counts. */
        tap_is_int(db_request_finish(db, "k4", &(RequestOutcome){.status = 200, .duration_ms = 5, .language = "python", .termination = TERMINATION_OK}),
                   0, "keys: k4 (beta's) ran python");
        tap_is_int(db_request_begin(db, "k6", "POST /v1/execute", "/v1/execute", 1), 0, "keys: k6, without a key");
        tap_is_int(db_request_finish(db, "k6", &(RequestOutcome){.status = 200, .duration_ms = 5, .language = "python", .termination = TERMINATION_OK}),
                   0, "keys: k6 ran python too");
        tap_is_int(metrics_count_key(db, METRICS_REQUESTS, "/v1/execute", "", 200, "alpha"), 2, "keys: alpha: 2 requests answered 200");
        tap_is_int(metrics_count_key(db, METRICS_REQUESTS, "/v1/execute", "", 200, "beta"), 1, "keys: beta: 1");
        tap_is_int(metrics_count_key(db, METRICS_REQUESTS, "/v1/execute", "", 200, ""), 1, "keys: without a key: 1 (of the 4)");
        tap_is_str(column(db, "SELECT count FROM request_totals WHERE endpoint = '/v1/execute' AND status = 200", NULL), "4",
                   "keys: step 7's total still counts all 4");
        tap_is_int(metrics_count_key(db, METRICS_EXECUTIONS, "python", "ok", 0, "beta"), 1, "keys: beta: 1 python execution ok");
        tap_is_int(metrics_count_key(db, METRICS_EXECUTIONS, "python", "ok", 0, ""), 1, "keys: without a key: 1");
        tap_is_int(metrics_count_key(db, METRICS_EXECUTIONS, "python", "ok", 0, "alpha"), -1, "keys: alpha ran none");
        db = db_close(db);
}

/* A key's session caps, held in the transaction that makes or resumes a session. */
static void test_session_caps(void) {
        QuotaSessionCaps caps = {.max_active = 1, .max_kept = 2, .disk_bytes = 0, .disk_each = 1 << 20};
        SessionRefusal f = {};
        sqlite3 *db = NULL;
        char id[64] = "";

        if (!tap_is_int(db_open(":memory:", &db), 0, "caps: a database of their own"))
                return;
        tap_is_int(db_session_create_capped(db, "session-aaaaaaaaaaaa", 60, 16, "k", &caps, 3600, &f), 0, "caps: k's first session");
        tap_is_int(db_session_create_capped(db, "session-bbbbbbbbbbbb", 60, 16, "k", &caps, 3600, &f), -EDQUOT, "caps: a second active past max-sessions 1");
        tap_is_int(f.which, QUOTA_SESSION_ACTIVE, "caps: refused by max-sessions");
        tap_ok(f.free_at > 0 && f.free_at - (double) time(NULL) > 55 && f.free_at - (double) time(NULL) < 65,
               "caps: frees when the first is idle for its ttl_s (60 s)");
        tap_is_int(db_session_create_capped(db, "session-bbbbbbbbbbbb", 60, 16, "other", &caps, 3600, &f), 0, "caps: another key's are its own");
        tap_is_int(db_session_create_capped(db, "session-cccccccccccc", 60, 16, "k", NULL, 3600, &f), 0, "caps: no caps given: not held");
        tap_is_int(db_session_claim_expired(db, 1e12, id, sizeof(id)), 0, "caps: one claimed for pausing");
        tap_is_int(db_session_paused(db, id), 0, "caps: paused");
        tap_is_int(db_exec(db, "UPDATE sessions SET state = 'pausing' WHERE state = 'active'; UPDATE sessions SET state = 'paused', paused_at = 1000 "
                               "WHERE state = 'pausing'"),
                   0, "caps: all paused, at time 1000");
        tap_is_int(db_session_create_capped(db, "session-dddddddddddd", 60, 16, "k", &caps, 3600, &f), -EDQUOT,
                   "caps: 2 kept (paused) of max-paused-sessions 2: no third");
        tap_is_int(f.which, QUOTA_SESSION_KEPT, "caps: refused by max-paused-sessions");
        tap_ok(f.free_at == 1000 + 3600, "caps: frees when the oldest paused one is deleted (paused_at + retain_s)");
        tap_is_int(db_session_resume_capped(db, "session-aaaaaaaaaaaa", 16, "k", &caps, &f), 0, "caps: a resume adds no kept session");
        tap_is_int(db_session_resume_capped(db, "session-cccccccccccc", 16, "k", &caps, &f), -EDQUOT, "caps: a second resume past max-sessions 1");
        caps = (QuotaSessionCaps){.disk_bytes = 2 << 20, .disk_each = 1 << 20};
        tap_is_int(db_session_create_capped(db, "session-eeeeeeeeeeee", 60, 16, "k", &caps, 3600, &f), -EDQUOT, "caps: 2 disks of 1 MiB in 2 MiB: no third");
        tap_is_int(f.which, QUOTA_SESSION_DISK, "caps: refused by session-disk-bytes");
        tap_is_int(db_session_delete(db, "session-cccccccccccc"), 0, "caps: one deleted");
        tap_is_int(db_session_create_capped(db, "session-eeeeeeeeeeee", 60, 16, "k", &caps, 3600, &f), 0, "caps: then a disk fits");

        /* A session's CPU between runs, billed to its key beside the requests' CPU. */
        tap_is_int(db_session_usage_add(db, "session-aaaaaaaaaaaa", "pause", NULL, 2500), 0, "usage: 2.5 s of k's session recorded");
        {
                int64_t used = -1;

                tap_ok(db_key_used(db, "k", KEY_WINDOW_CPU, 86400, &used) == 0 && used == 2500, "usage: k's CPU in the day: 2500 ms");
                tap_ok(db_key_used(db, "other", KEY_WINDOW_CPU, 86400, &used) == 0 && used == 0, "usage: not another key's");
        }
        db = db_close(db);
}

/* Old records pruned, the totals and the recent rows untouched. */
static void test_prune(void) {
        sqlite3 *db = NULL;
        int64_t n = -1;

        if (!tap_is_int(db_open(":memory:", &db), 0, "prune: a database of its own"))
                return;
        for (int i = 0; i < 3; i++) {
                char rid[16];

                (void) snprintf(rid, sizeof(rid), "old%d", i);
                (void) db_request_begin(db, rid, "GET /v1/pool", "/v1/pool", 1);
                (void) db_request_finish(db, rid, &(RequestOutcome){.status = 200, .duration_ms = 1});
        }
        (void) db_request_begin(db, "inflight", "GET /v1/pool", "/v1/pool", 1);
        (void) db_request_begin(db, "new", "GET /v1/pool", "/v1/pool", 1);
        (void) db_request_finish(db, "new", &(RequestOutcome){.status = 200, .duration_ms = 1});
        tap_is_int(db_exec(db, "UPDATE requests SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-31 days') WHERE request_id != 'new'"), 0,
                   "prune: all but one started 31 days ago");
        tap_is_int(ROWS(db), 5, "prune: 5 rows before");
        tap_is_int(db_records_prune(db, 30, &n), 0, "prune: 30 days");
        tap_is_int((int) n, 3, "prune: the 3 old finished ones went");
        tap_is_str(column(db, "SELECT group_concat(request_id) FROM (SELECT request_id FROM requests ORDER BY request_id)", NULL), "inflight,new",
                   "prune: the one in flight and the new one stay");
        tap_is_str(column(db, "SELECT count FROM request_totals WHERE endpoint = '/v1/pool' AND status = 200", NULL), "4",
                   "prune: the total still counts all 4 answered");
        tap_is_int(db_records_prune(db, 30, &n), 0, "prune: again");
        tap_is_int((int) n, 0, "prune: nothing more");
        db = db_close(db);
}

int main(void) {
        sqlite3 *db = NULL;

        if (!tap_is_int(db_open(":memory:", &db), 0, "db_open(\":memory:\")") || !db)
                return tap_done();

        test_open(db);
        test_begin(db);
        test_sandbox(db);
        test_finish(db);
        test_abandon(db);
        test_in_flight(db);
        test_pool(db);
        test_pool_language(db);
        test_pool_list(db);
        test_helpers(db);
        test_sessions(db);
        test_errno();
        test_open_fails();
        test_open_while_locked();
        test_totals();
        test_machine_events();
        test_error_counts();
        test_termination_labels();
        test_keys();
        test_session_caps();
        test_prune();

        tap_ok(db_errmsg(db) != NULL, "db_errmsg(db) gives a text");
        db = db_close(db);
        tap_ok(db == NULL, "db_close() returns NULL");
        return tap_done();
}
