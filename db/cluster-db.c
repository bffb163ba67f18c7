/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
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

int db_cluster_members_keep(sqlite3 *db, const char *names) {
        int r = db_run(db, "DELETE FROM cluster_members WHERE name NOT IN (SELECT value FROM json_each(?1))", "t", names);

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

int db_cluster_sessions_keep(sqlite3 *db, const char *names) {
        int r = db_run(db, "DELETE FROM cluster_sessions WHERE member NOT IN (SELECT value FROM json_each(?1))", "t", names);

        if (r >= 0)
                r = db_run(db,
                           "DELETE FROM cluster_usage WHERE kind IN ('sessions_active', 'sessions_paused') AND "
                           "member NOT IN (SELECT value FROM json_each(?1))",
                           "t", names);
        return r < 0 ? r : 0;
}

int db_cluster_sessions(sqlite3 *db, char ***ret, size_t *ret_n) {
        return records(db, "SELECT record FROM cluster_sessions ORDER BY member", ret, ret_n);
}

typedef struct UsageReplace {
        const char *member;
        bool sessions;
        const UsageRow *rows;
        size_t n;
} UsageReplace;

static int usage_replace_locked(sqlite3 *db, void *userdata) {
        const UsageReplace *u = userdata;
        int r = db_run(db,
                       "DELETE FROM cluster_usage WHERE member = ?1 AND "
                       "(CASE WHEN ?2 THEN kind IN ('sessions_active', 'sessions_paused') ELSE kind IN ('in_flight', 'exec', 'cpu') END)",
                       "ti", u->member, (int) u->sessions);

        for (size_t i = 0; r >= 0 && i < u->n; i++)
                r = db_run(db, "INSERT INTO cluster_usage (member, key_name, kind, end_ms, amount) VALUES (?1, ?2, ?3, ?4, ?5)", "tttII",
                           u->member, u->rows[i].key, u->rows[i].kind, u->rows[i].end_ms, u->rows[i].amount);
        return r < 0 ? r : 0;
}

int db_cluster_usage_replace(sqlite3 *db, const char *member, bool sessions, const UsageRow *rows, size_t n) {
        UsageReplace u = {.member = member, .sessions = sessions, .rows = rows, .n = n};

        return db_transaction(db, usage_replace_locked, &u);
}

int db_cluster_usage_keep(sqlite3 *db, const char *names) {
        int r = db_run(db, "DELETE FROM cluster_usage WHERE kind IN ('in_flight', 'exec', 'cpu') AND member NOT IN (SELECT value FROM json_each(?1))",
                       "t", names);

        return r < 0 ? r : 0;
}

/* By key in force, each from its own indexes (requests_key, requests_key_cpu, session_usage_key):
 * the last minute's and day's rows of a key, not every key's ever. Unix ms from sqlite's text
 * times: (julianday - 2440587.5) * 86400000. Each bucket counts at its end, so that another member
 * keeps it in the window a little long rather than too short. */
#define USAGE_LOCAL_SQL                                                                                                                      \
        "SELECT r.key_name, 'in_flight', 0, count(*) FROM requests r WHERE r.status IS NULL AND r.key_name IS NOT NULL GROUP BY r.key_name " \
        "UNION ALL "                                                                                                                         \
        "SELECT k.name, 'exec', (CAST((julianday(r.started_at) - 2440587.5) * 86400 AS INTEGER) + 1) * 1000 AS e, sum(r.rated) "             \
        "FROM api_keys k JOIN requests r ON r.key_name = k.name AND r.rated > 0 "                                                            \
        "AND r.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-61 seconds') WHERE k.revoked_at IS NULL GROUP BY k.name, e "            \
        "UNION ALL "                                                                                                                         \
        "SELECT name, 'cpu', (CAST((julianday(t) - 2440587.5) * 1440 AS INTEGER) + 1) * 60000 AS e, sum(cpu_ms) FROM ("                      \
        "SELECT k.name, r.started_at AS t, r.cpu_ms FROM api_keys k JOIN requests r ON r.key_name = k.name AND r.cpu_ms > 0 "                \
        "AND r.started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day', '-1 minute') WHERE k.revoked_at IS NULL "                       \
        "UNION ALL SELECT k.name, u.at, u.cpu_ms FROM api_keys k JOIN session_usage u ON u.key_name = k.name AND u.cpu_ms > 0 "              \
        "AND u.at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day', '-1 minute') WHERE k.revoked_at IS NULL) GROUP BY name, e"

int db_usage_local(sqlite3 *db, UsageRow **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        UsageRow *rows = NULL;
        size_t n = 0, cap = 0;
        int r = db_prepare(db, &st, USAGE_LOCAL_SQL, "");

        while (r >= 0 && (r = db_step_row(st)) > 0) {
                const unsigned char *key = sqlite3_column_text(st, 0), *kind = sqlite3_column_text(st, 1);

                if (ARRAY_GROW(rows, cap, n, 16) < 0) {
                        free(rows);
                        return -ENOMEM;
                }
                rows[n] = (UsageRow){.end_ms = sqlite3_column_int64(st, 2), .amount = sqlite3_column_int64(st, 3)};
                (void) snprintf(rows[n].key, sizeof(rows[n].key), "%s", key ? (const char *) key : "");
                (void) snprintf(rows[n].kind, sizeof(rows[n].kind), "%s", kind ? (const char *) kind : "");
                n++;
        }
        if (r < 0) {
                free(rows);
                return r;
        }
        *ret = rows;
        *ret_n = n;
        return 0;
}
