/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db/cluster-db.h"
#include "db/db.h"
#include "lib/alloc-util.h"
#include "lib/macro.h"

int db_cluster_member_put(sqlite3 *db, const char *name, const char *record) {
        int r = db_run(db, "INSERT INTO cluster_members (name, record) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET record = excluded.record",
                       "tt", name, record);

        return r < 0 ? r : 0;
}

int db_cluster_member_delete(sqlite3 *db, const char *name) {
        int r = db_run(db, "DELETE FROM cluster_members WHERE name = ?1", "t", name);

        return r < 0 ? r : 0;
}

int db_cluster_members_clear(sqlite3 *db) {
        int r = db_run(db, "DELETE FROM cluster_members", "");

        return r < 0 ? r : 0;
}

static void strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* The record column of every row of sql's, in order. */
static int records(sqlite3 *db, const char *sql, char ***ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        char **v = NULL;
        size_t n = 0, cap = 0;
        int r = db_prepare(db, &st, sql, "");

        while (r >= 0 && (r = db_step_row(st)) > 0) {
                const unsigned char *t = sqlite3_column_text(st, 0);

                if (ARRAY_GROW(v, cap, n, 8) < 0 || !(v[n] = strdup(t ? (const char *) t : ""))) {
                        strv_free(v, n);
                        return -ENOMEM;
                }
                n++;
        }
        if (r < 0) {
                strv_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int db_cluster_members(sqlite3 *db, char ***ret, size_t *ret_n) {
        return records(db, "SELECT record FROM cluster_members ORDER BY name", ret, ret_n);
}

int db_cluster_sessions_put(sqlite3 *db, const char *member, const char *record) {
        int r = db_run(db,
                       "INSERT INTO cluster_sessions (member, record) VALUES (?1, ?2) ON CONFLICT (member) DO UPDATE SET record = excluded.record",
                       "tt", member, record);

        return r < 0 ? r : 0;
}

int db_cluster_sessions_delete(sqlite3 *db, const char *member) {
        int r = db_run(db, "DELETE FROM cluster_sessions WHERE member = ?1", "t", member);

        return r < 0 ? r : 0;
}

int db_cluster_sessions_clear(sqlite3 *db) {
        int r = db_run(db, "DELETE FROM cluster_sessions", "");

        return r < 0 ? r : 0;
}

int db_cluster_sessions(sqlite3 *db, char ***ret, size_t *ret_n) {
        return records(db, "SELECT record FROM cluster_sessions ORDER BY member", ret, ret_n);
}
