/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct sqlite3 sqlite3;

/* Opens (creating if needed) the database at path, sets WAL, busy timeout and foreign keys, and
 * migrates the schema. One connection per process, opened after fork. *ret is the caller's. */
int db_open(const char *path, sqlite3 **ret);

sqlite3 *db_close(sqlite3 *db);

/* The last error text of this connection, for log lines. */
const char *db_errmsg(sqlite3 *db);

/* Maps an sqlite result code to -errno: BUSY/LOCKED -> -EBUSY, CONSTRAINT -> -EEXIST, FULL -> -ENOSPC,
 * READONLY -> -EROFS, others -> -EIO. */
int db_errno(int rc);
