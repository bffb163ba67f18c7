/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;

/* Adds delta to the total of an event ("machine_retired") under a label (its reason; "" for
 * none), creating it at first. */
int db_event_add(sqlite3 *db, const char *event, const char *label, int64_t delta);

/* Adds the errors this process counted (lib/error-count.h) and has not written down yet to their
 * totals, in one transaction; they stay pending if it fails. 0 (also when there was none) or
 * -errno. */
int db_error_counts_flush(sqlite3 *db);

/* One row of a table of totals, for GET /metrics. */
typedef struct MetricsRow {
        char key[64];   /* endpoint, language, event, session state */
        char label[64]; /* termination, event label */
        int64_t number; /* status, a bucket's upper bound in ms */
        int64_t count;
        int64_t sum; /* the durations' sum in ms */
        char api_key[65]; /* requests, executions: the API key's name; "": none */
} MetricsRow;

typedef enum MetricsTable {
        METRICS_REQUESTS,   /* key endpoint, number status, api_key, count */
        METRICS_EXECUTIONS, /* key language, label termination, api_key, count */
        METRICS_BOUNDS,     /* number: the duration histogram's upper bounds (ms), ascending */
        METRICS_BUCKETS,    /* key language, number bound, count: executions that took at most that */
        METRICS_DURATIONS,  /* key language, count, sum */
        METRICS_EVENTS,     /* key event, label, count */
        METRICS_SESSIONS,   /* key state, count: none when there is no sessions table */
        _METRICS_TABLE_MAX,
} MetricsTable;

/* Every row of one of them: *ret (malloc'd, the caller's to free) gets *ret_n rows. */
int db_metrics_rows(sqlite3 *db, MetricsTable table, MetricsRow **ret, size_t *ret_n);
