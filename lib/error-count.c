/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "lib/error-count.h"

/* Per thread: each of a worker's request threads (many at once) flushes what it counted
 * (db_error_counts_flush()) before it ends; a daemon that counts on one thread has one set. */
static _Thread_local uint64_t pending[_ERROR_COUNT_MAX];

static const struct {
        const char *event, *label;
} names[_ERROR_COUNT_MAX] = {
        [ERROR_COUNT_SQLITE] = {"sqlite_error", ""},
        [ERROR_COUNT_BROKER_START] = {"broker_error", "start"},
        [ERROR_COUNT_BROKER_KILL] = {"broker_error", "kill"},
        [ERROR_COUNT_BROKER_RESET_FAILED] = {"broker_error", "reset_failed"},
        [ERROR_COUNT_BROKER_LIST] = {"broker_error", "list"},
        [ERROR_COUNT_BROKER_RUN_TOOL] = {"broker_error", "run_tool"},
        [ERROR_COUNT_BROKER_SESSION_START] = {"broker_error", "session_start"},
        [ERROR_COUNT_BROKER_SESSION_STOP] = {"broker_error", "session_stop"},
        [ERROR_COUNT_BROKER_SESSION_DELETE] = {"broker_error", "session_delete"},
        [ERROR_COUNT_BROKER_SESSION_CREATE] = {"broker_error", "session_create"},
};

void error_count_inc(ErrorCount which) {
        if (which >= 0 && which < _ERROR_COUNT_MAX)
                pending[which]++;
}

void error_count_pending(uint64_t ret[_ERROR_COUNT_MAX]) {
        for (size_t i = 0; i < _ERROR_COUNT_MAX; i++)
                ret[i] = pending[i];
}

void error_count_written(const uint64_t written[_ERROR_COUNT_MAX]) {
        for (size_t i = 0; i < _ERROR_COUNT_MAX; i++)
                pending[i] -= written[i] <= pending[i] ? written[i] : pending[i];
}

const char *error_count_event(ErrorCount which) {
        return which >= 0 && which < _ERROR_COUNT_MAX ? names[which].event : NULL;
}

const char *error_count_label(ErrorCount which) {
        return which >= 0 && which < _ERROR_COUNT_MAX ? names[which].label : NULL;
}
