/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* Errors a thread met where they happened (db.c, broker-client.c), counted in its memory until they
 * are added to the database's totals (db_error_counts_flush()): an sqlite error cannot always be
 * written down at the moment it happens, and the broker's client has no database at all. */

typedef enum ErrorCount {
        ERROR_COUNT_SQLITE,
        /* The broker, by operation. */
        ERROR_COUNT_BROKER_START,
        ERROR_COUNT_BROKER_KILL,
        ERROR_COUNT_BROKER_RESET_FAILED,
        ERROR_COUNT_BROKER_LIST,
        ERROR_COUNT_BROKER_RUN_TOOL,
        ERROR_COUNT_BROKER_SESSION_START,
        ERROR_COUNT_BROKER_SESSION_STOP,
        ERROR_COUNT_BROKER_SESSION_DELETE,
        ERROR_COUNT_BROKER_SESSION_CREATE,
        _ERROR_COUNT_MAX,
        _ERROR_COUNT_NONE = -1,
} ErrorCount;

void error_count_inc(ErrorCount which);

/* The counts not yet written down, into ret. */
void error_count_pending(uint64_t ret[_ERROR_COUNT_MAX]);

/* What was written down (a copy of what error_count_pending() gave) is no longer pending. */
void error_count_written(const uint64_t written[_ERROR_COUNT_MAX]);

/* The event and label its total is kept under: "sqlite_error" and "", "broker_error" and the
 * operation ("start", "kill", "reset_failed", "list", "run_tool"). Pure. */
const char *error_count_event(ErrorCount which);
const char *error_count_label(ErrorCount which);
