/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

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

void sqlite3_finalizep(sqlite3_stmt **st) {
        (void) sqlite3_finalize(*st);
}

int db_step_done(sqlite3_stmt *st) {
        int rc = sqlite3_step(st);

        return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

const char *db_errmsg(sqlite3 *db) {
        return db ? sqlite3_errmsg(db) : "out of memory";
}

sqlite3 *db_close(sqlite3 *db) {
        (void) sqlite3_close_v2(db);
        return NULL;
}

static int exec(sqlite3 *db, const char *sql) {
        return db_errno(sqlite3_exec(db, sql, NULL, NULL, NULL));
}

static int user_version(sqlite3 *db, int *ret) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);

        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                *ret = sqlite3_column_int(st, 0);
                rc = SQLITE_OK;
        }
        (void) sqlite3_finalize(st);
        return db_errno(rc);
}

/* Applies step n of the schema (the text between "-- step n" and the next step) if it is new. */
static int migrate_step(sqlite3 *db, int n, const char *text, size_t len) {
        char sql[16384], pragma[64];
        int r, version = 0;

        if (len >= sizeof(sql))
                return -E2BIG;
        memcpy(sql, text, len);
        sql[len] = 0;
        (void) snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", n);

        /* IMMEDIATE: the first worker migrates, the others wait and then see the new version. */
        r = exec(db, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        r = user_version(db, &version);
        if (r >= 0 && version < n) {
                r = exec(db, sql);
                if (r >= 0)
                        r = exec(db, pragma);
        }
        if (r < 0) {
                (void) exec(db, "ROLLBACK");
                return r;
        }
        return exec(db, "COMMIT");
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

int db_open(const char *path, sqlite3 **ret) {
        sqlite3 *db = NULL;
        int r;

        r = db_errno(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL));
        if (r >= 0)
                r = db_errno(sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS));
        /* WAL: readers never block the writer; NORMAL: no fsync per commit, no corruption either. */
        if (r >= 0)
                r = exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
        if (r >= 0)
                r = migrate(db);
        if (r < 0) {
                (void) db_close(db);
                return r;
        }
        *ret = db;
        return 0;
}
