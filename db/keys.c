/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/keys.h"
#include "lib/alloc-util.h"
#include "lib/macro.h"
#include "lib/quota.h"

#define KEY_COLUMNS                                                                                                                            \
        "name, token_sha256, coalesce(max_concurrent, 0), coalesce(executions_per_minute, 0), coalesce(cpu_seconds_per_day, 0), "              \
        "created_at, coalesce(revoked_at, ''), coalesce(max_sessions, 0), coalesce(max_paused_sessions, 0), coalesce(session_disk_bytes, 0), " \
        "coalesce(images, ''), coalesce(egress, '')"

/* On a cluster's member, the other members' use of the key (schema.sql, step 19; empty on a single
 * host): what is in flight there now, and each bucket of rated work or CPU whose end is within the
 * window, counted at its end. */
#define NOW_MS "((julianday('now') - 2440587.5) * 86400000)"
#define CLUSTER_USAGE_NOW(kind) "(SELECT coalesce(sum(amount), 0) FROM cluster_usage WHERE key_name = ?1 AND kind = " kind ")"
#define CLUSTER_USAGE_SINCE(kind)                                                                                    \
        "(SELECT coalesce(sum(amount), 0) FROM cluster_usage WHERE key_name = ?1 AND kind = " kind " AND end_ms >= " \
        "(julianday('now', ?2) - 2440587.5) * 86400000)"
#define CLUSTER_USES(kind)                                                                                                           \
        "SELECT CAST(round(max(" NOW_MS " - end_ms, 0)) AS INTEGER), amount FROM cluster_usage WHERE key_name = ?1 AND kind = " kind \
        " AND end_ms >= (julianday('now', ?2) - 2440587.5) * 86400000"

static void copy_text(char *dst, size_t size, sqlite3_stmt *st, int col) {
        const unsigned char *v = sqlite3_column_text(st, col);

        (void) snprintf(dst, size, "%s", v ? (const char *) v : "");
}

static void read_row(sqlite3_stmt *st, ApiKey *ret) {
        *ret = (ApiKey){
                .max_concurrent = sqlite3_column_int64(st, 2),
                .executions_per_minute = sqlite3_column_int64(st, 3),
                .cpu_seconds_per_day = sqlite3_column_int64(st, 4),
                .max_sessions = sqlite3_column_int64(st, 7),
                .max_paused_sessions = sqlite3_column_int64(st, 8),
                .session_disk_bytes = sqlite3_column_int64(st, 9),
        };
        copy_text(ret->name, sizeof(ret->name), st, 0);
        copy_text(ret->token_sha256, sizeof(ret->token_sha256), st, 1);
        copy_text(ret->created_at, sizeof(ret->created_at), st, 5);
        copy_text(ret->revoked_at, sizeof(ret->revoked_at), st, 6);
        copy_text(ret->images, sizeof(ret->images), st, 10);
        copy_text(ret->egress, sizeof(ret->egress), st, 11);
}

int db_key_add(sqlite3 *db, const ApiKey *key) {
        int r = db_run(db,
                       "INSERT INTO api_keys (name, token_sha256, max_concurrent, executions_per_minute, cpu_seconds_per_day, "
                       "max_sessions, max_paused_sessions, session_disk_bytes, images, egress) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, nullif(?9, ''), "
                       "nullif(?10, ''))",
                       "tt?I?I?I?I?I?Itt", key->name, key->token_sha256, key->max_concurrent > 0, key->max_concurrent,
                       key->executions_per_minute > 0, key->executions_per_minute, key->cpu_seconds_per_day > 0, key->cpu_seconds_per_day,
                       key->max_sessions > 0, key->max_sessions, key->max_paused_sessions > 0, key->max_paused_sessions,
                       key->session_disk_bytes > 0, key->session_disk_bytes, key->images, key->egress);

        return r < 0 ? r : 0;
}

int db_key_put(sqlite3 *db, const ApiKey *key) {
        int r = db_run(db,
                       "INSERT INTO api_keys (name, token_sha256, max_concurrent, executions_per_minute, cpu_seconds_per_day, "
                       "max_sessions, max_paused_sessions, session_disk_bytes, images, egress, created_at, revoked_at) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, nullif(?9, ''), nullif(?10, ''), ?11, nullif(?12, '')) "
                       "ON CONFLICT (name) DO UPDATE SET token_sha256 = excluded.token_sha256, max_concurrent = excluded.max_concurrent, "
                       "executions_per_minute = excluded.executions_per_minute, cpu_seconds_per_day = excluded.cpu_seconds_per_day, "
                       "max_sessions = excluded.max_sessions, max_paused_sessions = excluded.max_paused_sessions, "
                       "session_disk_bytes = excluded.session_disk_bytes, images = excluded.images, egress = excluded.egress, "
                       "created_at = excluded.created_at, revoked_at = excluded.revoked_at",
                       "tt?I?I?I?I?I?Itttt", key->name, key->token_sha256, key->max_concurrent > 0, key->max_concurrent,
                       key->executions_per_minute > 0, key->executions_per_minute, key->cpu_seconds_per_day > 0, key->cpu_seconds_per_day,
                       key->max_sessions > 0, key->max_sessions, key->max_paused_sessions > 0, key->max_paused_sessions,
                       key->session_disk_bytes > 0, key->session_disk_bytes, key->images, key->egress, key->created_at, key->revoked_at);

        return r < 0 ? r : 0;
}

int db_key_list(sqlite3 *db, bool active_only, ApiKey **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free ApiKey *keys = NULL;
        size_t n = 0, cap = 0;
        int r = db_prepare(db, &st, "SELECT " KEY_COLUMNS " FROM api_keys WHERE revoked_at IS NULL OR ?1 = 0 ORDER BY name", "i",
                           (int) active_only);

        while (r >= 0 && (r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(keys, cap, n, 8) < 0)
                        return -ENOMEM;
                read_row(st, &keys[n++]);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(keys);
        *ret_n = n;
        return 0;
}

int db_key_find(sqlite3 *db, const char *token_sha256, ApiKey *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        /* By api_keys' UNIQUE index on token_sha256: one B-tree search, whatever the number of keys. */
        int r = db_prepare(db, &st, "SELECT " KEY_COLUMNS " FROM api_keys WHERE token_sha256 = ?1 AND revoked_at IS NULL", "t", token_sha256);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        read_row(st, ret);
        return 0;
}

int db_key_get(sqlite3 *db, const char *name, ApiKey *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT " KEY_COLUMNS " FROM api_keys WHERE name = ?1 AND revoked_at IS NULL", "t", name);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        read_row(st, ret);
        return 0;
}

/* One text column (sql's) of the key in force of that name into ret: 0, or -ENOENT. */
static int key_text(sqlite3 *db, const char *sql, const char *name, char *ret, size_t size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, sql, "t", name);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        copy_text(ret, size, st, 0);
        return 0;
}

int db_key_images(sqlite3 *db, const char *name, char *ret, size_t size) {
        return key_text(db, "SELECT coalesce(images, '') FROM api_keys WHERE name = ?1 AND revoked_at IS NULL", name, ret, size);
}

int db_key_egress(sqlite3 *db, const char *name, char *ret, size_t size) {
        return key_text(db, "SELECT coalesce(egress, '') FROM api_keys WHERE name = ?1 AND revoked_at IS NULL", name, ret, size);
}

int db_request_set_rated(sqlite3 *db, const char *request_id) {
        int r = db_run(db, "UPDATE requests SET rated = max(rated, 1) WHERE request_id = ?1", "t", request_id);

        return r < 0 ? r : 0;
}

int db_request_add_rated(sqlite3 *db, const char *request_id, int64_t n) {
        int r = db_run(db, "UPDATE requests SET rated = rated + ?2 WHERE request_id = ?1", "tI", request_id, n);

        return r < 0 ? r : 0;
}

int db_request_set_execution(sqlite3 *db, const char *request_id) {
        int r = db_run(db, "UPDATE requests SET execution = 1, rated = rated + 1 WHERE request_id = ?1", "t", request_id);

        return r < 0 ? r : 0;
}

int db_key_revoke(sqlite3 *db, const char *name) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_run(db, "UPDATE api_keys SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE name = ?1 AND revoked_at IS NULL", "t",
                       name);

        if (r != 0)
                return r < 0 ? r : 0;
        r = db_prepare(db, &st, "SELECT 1 FROM api_keys WHERE name = ?1", "t", name);
        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        return r == 0 ? -ENOENT : -EALREADY;
}

int db_key_in_flight(sqlite3 *db, const char *name, int64_t *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        /* "+": from requests_in_flight (every request in flight, a few), not from the key's index (all its
         * requests ever). */
        int r = db_prepare(db, &st,
                           "SELECT (SELECT count(*) FROM requests WHERE +key_name = ?1 AND status IS NULL) + " CLUSTER_USAGE_NOW("'in_flight'"),
                           "t", name);

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret = r > 0 ? sqlite3_column_int64(st, 0) : 0;
        return 0;
}

/* Each use's age in ms and amount, oldest first. */
static const char *const window_queries[] = {
        [KEY_WINDOW_EXECUTIONS] = "SELECT CAST(round((julianday('now') - julianday(started_at)) * 86400000) AS INTEGER), rated FROM requests "
                                  "WHERE key_name = ?1 AND rated > 0 AND started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2) "
                                  "UNION ALL " CLUSTER_USES("'exec'") " ORDER BY 1 DESC",
        [KEY_WINDOW_CPU] = "SELECT CAST(round((julianday('now') - julianday(t)) * 86400000) AS INTEGER), cpu_ms FROM ("
                           "SELECT started_at AS t, cpu_ms FROM requests "
                           "WHERE key_name = ?1 AND cpu_ms > 0 AND started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2) "
                           "UNION ALL SELECT at, cpu_ms FROM session_usage "
                           "WHERE key_name = ?1 AND cpu_ms > 0 AND at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)) "
                           "UNION ALL " CLUSTER_USES("'cpu'") " ORDER BY 1 DESC",
};

static const char *const sum_queries[] = {
        [KEY_WINDOW_EXECUTIONS] = "SELECT (SELECT coalesce(sum(rated), 0) FROM requests "
                                  "WHERE key_name = ?1 AND rated > 0 AND started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)) + " CLUSTER_USAGE_SINCE("'exec'"),
        [KEY_WINDOW_CPU] = "SELECT (SELECT coalesce(sum(cpu_ms), 0) FROM requests "
                           "WHERE key_name = ?1 AND cpu_ms > 0 AND started_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)) + "
                           "(SELECT coalesce(sum(cpu_ms), 0) FROM session_usage "
                           "WHERE key_name = ?1 AND cpu_ms > 0 AND at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)) + " CLUSTER_USAGE_SINCE("'cpu'"),
};

int db_key_used(sqlite3 *db, const char *name, KeyWindow what, int64_t window_s, int64_t *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        char modifier[48];
        int r;

        if (what < 0 || (size_t) what >= ELEMENTSOF(sum_queries))
                return -EINVAL;
        (void) snprintf(modifier, sizeof(modifier), "-%lld seconds", (long long) window_s);
        r = db_prepare(db, &st, sum_queries[what], "tt", name, modifier);
        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret = r > 0 ? sqlite3_column_int64(st, 0) : 0;
        return 0;
}

int db_key_uses(sqlite3 *db, const char *name, KeyWindow what, int64_t window_s, QuotaUse **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free QuotaUse *uses = NULL;
        size_t n = 0, cap = 0;
        char modifier[48];
        int r;

        if (what < 0 || (size_t) what >= ELEMENTSOF(window_queries))
                return -EINVAL;
        (void) snprintf(modifier, sizeof(modifier), "-%lld seconds", (long long) window_s);
        r = db_prepare(db, &st, window_queries[what], "tt", name, modifier);
        while (r >= 0 && (r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(uses, cap, n, 16) < 0)
                        return -ENOMEM;
                uses[n++] = (QuotaUse){.age_ms = sqlite3_column_int64(st, 0), .amount = sqlite3_column_int64(st, 1)};
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(uses);
        *ret_n = n;
        return 0;
}
