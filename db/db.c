/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "lib/error-count.h"
#include "lib/macro.h"

/* db/schema.sql, embedded at build time; steps start with a "-- step N" line. */
__asm__(".section .rodata\n"
        ".global db_schema_sql\n"
        "db_schema_sql:\n"
        ".incbin \"db/schema.sql\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char db_schema_sql[];

#define BUSY_TIMEOUT_MS 5000

int db_errno(int rc) {
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_CONSTRAINT:
                return -EEXIST;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_NOMEM:
                return -ENOMEM;
        default:
                return -EIO;
        }
}

/* db_errno() of a result of sqlite's, each failure counted where it happened (GET /metrics). */
static int check(int rc) {
        int r = db_errno(rc);

        if (r < 0)
                error_count_inc(ERROR_COUNT_SQLITE);
        return r;
}

void sqlite3_finalizep(sqlite3_stmt **st) {
        (void) sqlite3_finalize(*st);
}

/* Steps a statement that returns no row: 0 when done, -errno (db_errno) otherwise. */
static int db_step_done(sqlite3_stmt *st) {
        int rc = sqlite3_step(st);

        return rc == SQLITE_DONE ? 0 : check(rc);
}

int db_step_row(sqlite3_stmt *st) {
        int rc = sqlite3_step(st);

        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : check(rc);
}

int db_step_one(sqlite3_stmt *st) {
        int r = db_step_row(st);

        return r == 0 ? -ENOENT : r;
}

int db_exec(sqlite3 *db, const char *sql) {
        return check(sqlite3_exec(db, sql, NULL, NULL, NULL));
}

static int bind_all(sqlite3_stmt *st, const char *types, va_list ap) {
        int i = 1;

        for (const char *t = types; *t; t++, i++) {
                int rc = SQLITE_OK, present = 1;

                if (*t == '?') {
                        present = va_arg(ap, int);
                        t++;
                }
                switch (*t) {
                case 'i': {
                        int v = va_arg(ap, int);

                        rc = present ? sqlite3_bind_int(st, i, v) : sqlite3_bind_null(st, i);
                        break;
                }
                case 'I': {
                        int64_t v = va_arg(ap, int64_t);

                        rc = present ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
                        break;
                }
                case 'd': {
                        double v = va_arg(ap, double);

                        rc = present ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
                        break;
                }
                case 't': {
                        const char *v = va_arg(ap, const char *);

                        rc = present && v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
                        break;
                }
                default:
                        return -EINVAL; /* a programmer's error, refused rather than guessed */
                }
                if (rc != SQLITE_OK)
                        return check(rc);
        }
        return 0;
}

static int vprepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql, const char *types, va_list ap) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = check(sqlite3_prepare_v2(db, sql, -1, &st, NULL));
        if (r >= 0)
                r = bind_all(st, types, ap);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(st);
        return 0;
}

int db_prepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = vprepare(db, ret, sql, types, ap);
        va_end(ap);
        return r;
}

int db_run(sqlite3 *db, const char *sql, const char *types, ...) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        va_list ap;
        int r;

        va_start(ap, types);
        r = vprepare(db, &st, sql, types, ap);
        va_end(ap);
        if (r >= 0)
                r = db_step_done(st);
        return r < 0 ? r : sqlite3_changes(db);
}

/* Some errors (a full disk, an I/O error) end the transaction already: a ROLLBACK then would be
 * an error of its own. */
static void rollback(sqlite3 *db) {
        if (!sqlite3_get_autocommit(db))
                (void) db_exec(db, "ROLLBACK");
}

int db_transaction(sqlite3 *db, int (*f)(sqlite3 *db, void *userdata), void *userdata) {
        int r, c;

        r = db_exec(db, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        r = f(db, userdata);
        if (r < 0) {
                rollback(db);
                return r;
        }
        c = db_exec(db, "COMMIT");
        if (c < 0) {
                rollback(db);
                return c;
        }
        return r;
}

/* Why this thread's last db_open() failed, in sqlite's words: the connection that held them is
 * closed by then, and a log line saying only "out of memory" sent operators the wrong way. */
static _Thread_local char open_error[256];

const char *db_errmsg(sqlite3 *db) {
        if (db)
                return sqlite3_errmsg(db);
        return open_error[0] ? open_error : "out of memory";
}

sqlite3 *db_close(sqlite3 *db) {
        (void) sqlite3_close_v2(db);
        return NULL;
}

static int user_version(sqlite3 *db, int *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "PRAGMA user_version", "");

        if (r >= 0)
                r = db_step_row(st);
        if (r <= 0)
                return r < 0 ? r : -EIO;
        *ret = sqlite3_column_int(st, 0);
        return 0;
}

typedef struct MigrateStep {
        int n;
        char sql[16384];
} MigrateStep;

static int migrate_step_locked(sqlite3 *db, void *userdata) {
        const MigrateStep *m = userdata;
        char pragma[64];
        int r, version = 0;

        r = user_version(db, &version);
        if (r < 0 || version >= m->n)
                return r;
        (void) snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->n);
        r = db_exec(db, m->sql);
        return r < 0 ? r : db_exec(db, pragma);
}

/* Applies step n of the schema (the text between "-- step n" and the next step) if it is new. */
static int migrate_step(sqlite3 *db, int n, const char *text, size_t len) {
        MigrateStep m;
        int version = 0, r;

        if (len >= sizeof(m.sql))
                return -E2BIG;
        /* A step applied already is seen by a read, which WAL lets through while another process
         * writes: opening a connection to a current database never waits for the write lock (a
         * worker's new connection would otherwise fail while a long write holds it). */
        r = user_version(db, &version);
        if (r < 0 || version >= n)
                return r;
        m.n = n;
        memcpy(m.sql, text, len);
        m.sql[len] = 0;
        /* IMMEDIATE: the first process migrates, the others wait and then see the new version. */
        return db_transaction(db, migrate_step_locked, &m);
}

static int migrate(sqlite3 *db) {
        const char *p = strstr(db_schema_sql, "-- step ");

        while (p) {
                int n = (int) strtol(p + strlen("-- step "), NULL, 10);
                const char *next = strstr(p + 1, "-- step ");
                size_t len = next ? (size_t) (next - p) : strlen(p);
                int r;

                if (n <= 0)
                        return -EINVAL;
                r = migrate_step(db, n, p, len);
                if (r < 0)
                        return r;
                p = next;
        }
        return 0;
}

int db_busy_timeout(sqlite3 *db, unsigned ms) {
        return check(sqlite3_busy_timeout(db, (int) ms));
}

int db_open(const char *path, sqlite3 **ret) {
        sqlite3 *db = NULL;
        int r;

        r = check(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL));
        if (r >= 0)
                r = check(sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS));
        /* WAL: readers never block the writer; NORMAL: no fsync per commit, no corruption either. */
        if (r >= 0)
                r = db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
        if (r >= 0)
                r = migrate(db);
        if (r < 0) {
                (void) snprintf(open_error, sizeof(open_error), "%s", db ? sqlite3_errmsg(db) : "out of memory");
                (void) db_close(db);
                return r;
        }
        open_error[0] = 0;
        *ret = db;
        return 0;
}
