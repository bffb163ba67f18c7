/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* Opens (creating if needed) the database at path, sets WAL, busy timeout and foreign keys, and
 * migrates the schema. One connection per process, opened after fork. *ret is the caller's. */
int db_open(const char *path, sqlite3 **ret);

sqlite3 *db_close(sqlite3 *db);

/* The last error text of this connection, for log lines. */
const char *db_errmsg(sqlite3 *db);

/* Maps an sqlite result code to -errno: BUSY/LOCKED -> -EBUSY, CONSTRAINT -> -EEXIST, FULL -> -ENOSPC,
 * READONLY -> -EROFS, others -> -EIO. */
int db_errno(int rc);

/* For cleanup_stmt (lib/macro.h): finalizes *st; NULL is a no-op. */
void sqlite3_finalizep(sqlite3_stmt **st);

/* Steps a statement that returns no row: 0 when done, -errno (db_errno) otherwise. */
int db_step_done(sqlite3_stmt *st);
