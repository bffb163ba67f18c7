/* SPDX-License-Identifier: MIT */
/* The totals GET /metrics reads (db/schema.sql, steps 7 and 9), and the events counted into them. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "lib/alloc-util.h"
#include "lib/error-count.h"
#include "lib/macro.h"

int db_event_add(sqlite3 *db, const char *event, const char *label, int64_t delta) {
        int r = db_run(db,
                       "INSERT INTO event_totals (event, label, count) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT DO UPDATE SET count = count + excluded.count",
                       "ttI", event, label ? label : "", delta);

        return r < 0 ? r : 0;
}

static int flush_locked(sqlite3 *db, void *userdata) {
        const uint64_t *counts = userdata;

        for (size_t i = 0; i < _ERROR_COUNT_MAX; i++) {
                int r;

                if (counts[i] == 0)
                        continue;
                r = db_event_add(db, error_count_event((ErrorCount) i), error_count_label((ErrorCount) i), (int64_t) counts[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int db_error_counts_flush(sqlite3 *db) {
        uint64_t counts[_ERROR_COUNT_MAX], any = 0;
        int r;

        error_count_pending(counts);
        for (size_t i = 0; i < _ERROR_COUNT_MAX; i++)
                any |= counts[i];
        if (!any)
                return 0;
        r = db_transaction(db, flush_locked, counts);
        if (r < 0)
                return r;
        error_count_written(counts);
        return 0;
}

/* Each table's query: key, label, number, count, sum, API key. */
static const char *const queries[_METRICS_TABLE_MAX] = {
        /* Those without a key are what is left of the totals once every key's are taken out. */
        [METRICS_REQUESTS] = "SELECT t.endpoint, '', t.status, t.count - coalesce((SELECT sum(k.count) FROM key_request_totals k "
                             "WHERE k.endpoint = t.endpoint AND k.status = t.status), 0), 0, '' FROM request_totals t "
                             "UNION ALL SELECT endpoint, '', status, count, 0, key FROM key_request_totals ORDER BY 1, 3, 6",
        [METRICS_EXECUTIONS] = "SELECT t.language, t.termination, 0, t.count - coalesce((SELECT sum(k.count) FROM key_execution_totals k "
                               "WHERE k.language = t.language AND k.termination = t.termination), 0), 0, '' FROM execution_totals t "
                               "UNION ALL SELECT language, termination, 0, count, 0, key FROM key_execution_totals",
        [METRICS_BOUNDS] = "SELECT '', '', le_ms, 0, 0, '' FROM duration_bounds ORDER BY le_ms",
        [METRICS_BUCKETS] = "SELECT language, '', le_ms, count, 0, '' FROM duration_buckets",
        [METRICS_DURATIONS] = "SELECT language, '', 0, count, sum_ms, '' FROM duration_totals",
        [METRICS_EVENTS] = "SELECT event, label, 0, count, 0, '' FROM event_totals",
        /* Sessions have a table of their own once the schema has one: counted by state then. */
        [METRICS_SESSIONS] = "SELECT state, '', 0, count(*), 0, '' FROM sessions GROUP BY state",
};

static int has_table(sqlite3 *db, const char *name) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", "t", name);

        return r < 0 ? r : db_step_row(st);
}

static void row_read(sqlite3_stmt *st, MetricsRow *row) {
        const unsigned char *key = sqlite3_column_text(st, 0), *label = sqlite3_column_text(st, 1), *api_key = sqlite3_column_text(st, 5);

        *row = (MetricsRow){
                .number = sqlite3_column_int64(st, 2),
                .count = sqlite3_column_int64(st, 3),
                .sum = sqlite3_column_int64(st, 4),
        };
        (void) snprintf(row->key, sizeof(row->key), "%s", key ? (const char *) key : "");
        (void) snprintf(row->label, sizeof(row->label), "%s", label ? (const char *) label : "");
        (void) snprintf(row->api_key, sizeof(row->api_key), "%s", api_key ? (const char *) api_key : "");
}

int db_metrics_rows(sqlite3 *db, MetricsTable table, MetricsRow **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free MetricsRow *rows = NULL;
        size_t n = 0, cap = 0;
        int r;

        if (table < 0 || table >= _METRICS_TABLE_MAX)
                return -EINVAL;
        if (table == METRICS_SESSIONS) {
                r = has_table(db, "sessions");
                if (r <= 0) {
                        if (r == 0) {
                                *ret = NULL;
                                *ret_n = 0;
                        }
                        return r;
                }
        }
        r = db_prepare(db, &st, queries[table], "");
        if (r < 0)
                return r;
        while ((r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(rows, cap, n, 16) < 0)
                        return -ENOMEM;
                row_read(st, &rows[n++]);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rows);
        *ret_n = n;
        return 0;
}
