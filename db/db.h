/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* Opens (creating if needed) the database at path, sets WAL, busy timeout and foreign keys, and
 * migrates the schema. One connection per process, opened after fork. *ret is the caller's. */
int db_open(const char *path, sqlite3 **ret);

/* How long db waits for another connection's write lock before a statement fails with -EBUSY
 * (db_open() sets 5 s): shorter for a process that must not wait inside its event loop. */
int db_busy_timeout(sqlite3 *db, unsigned ms);

sqlite3 *db_close(sqlite3 *db);

/* The last error text of this connection, for log lines; with NULL, why this thread's last
 * db_open() failed. */
const char *db_errmsg(sqlite3 *db);

/* Maps an sqlite result code to -errno: BUSY/LOCKED -> -EBUSY, CONSTRAINT -> -EEXIST, FULL -> -ENOSPC,
 * READONLY -> -EROFS, others -> -EIO. */
int db_errno(int rc);

/* For cleanup_stmt (lib/macro.h): finalizes *st; NULL is a no-op. */
void sqlite3_finalizep(sqlite3_stmt **st);

/* Runs SQL that takes no parameters (pragmas, BEGIN, COMMIT): 0 or -errno (db_errno). */
int db_exec(sqlite3 *db, const char *sql);

/* Prepares sql into *ret (the caller's: cleanup_stmt) and binds one argument per character of types
 * to ?1, ?2, ...: 'i' int, 'I' int64_t, 'd' double, 't' const char * (NULL binds NULL; the text is
 * borrowed until the statement is finalized). A '?' before a type takes an int first: 0 binds NULL
 * in place of the value that follows it. 0 or -errno. */
int db_prepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql, const char *types, ...);

/* db_prepare() and one step of a statement that returns no row: the number of rows it changed, or
 * -errno. */
int db_run(sqlite3 *db, const char *sql, const char *types, ...);

/* Steps a query: 1 with a row to read, 0 when done, -errno. */
int db_step_row(sqlite3_stmt *st);
/* The one row a lookup must find: 1 with the row ready, -ENOENT when there is none, or -errno. */
int db_step_one(sqlite3_stmt *st);

/* f(db, userdata) in one BEGIN IMMEDIATE ... COMMIT (the write lock first: what f reads, nobody
 * changes before it writes), rolled back if f returns < 0. f's result, or -errno of the commit. */
int db_transaction(sqlite3 *db, int (*f)(sqlite3 *db, void *userdata), void *userdata);
