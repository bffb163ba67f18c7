/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "lib/error-count.h"
#include "tests/unit/tap.h"

static void test_names(void) {
        tap_is_str(error_count_event(ERROR_COUNT_SQLITE), "sqlite_error", "sqlite: its event");
        tap_is_str(error_count_label(ERROR_COUNT_SQLITE), "", "sqlite: no label");
        for (ErrorCount e = ERROR_COUNT_SQLITE + 1; e < _ERROR_COUNT_MAX; e++) {
                const char *l = error_count_label(e);

                tap_is_str(error_count_event(e), "broker_error", "%d: a broker error", (int) e);
                tap_ok(l && *l && strspn(l, "abcdefghijklmnopqrstuvwxyz_") == strlen(l), "%d: operation '%s'", (int) e, l ? l : "(null)");
                for (ErrorCount u = ERROR_COUNT_SQLITE + 1; l && u < e; u++)
                        if (strcmp(l, error_count_label(u)) == 0)
                                tap_ok(0, "%d: operation '%s' is also %d's", (int) e, l, (int) u);
        }
        tap_ok(error_count_event(_ERROR_COUNT_MAX) == NULL && error_count_label(_ERROR_COUNT_MAX) == NULL, "out of range: none");
}

/* What is written is no longer pending; what was counted meanwhile still is. */
static void test_pending(void) {
        uint64_t snap[_ERROR_COUNT_MAX], now[_ERROR_COUNT_MAX];

        error_count_inc(ERROR_COUNT_SQLITE);
        error_count_inc(ERROR_COUNT_SQLITE);
        error_count_inc(ERROR_COUNT_BROKER_LIST);
        error_count_inc(_ERROR_COUNT_MAX); /* ignored */
        error_count_pending(snap);
        tap_ok(snap[ERROR_COUNT_SQLITE] == 2 && snap[ERROR_COUNT_BROKER_LIST] == 1 && snap[ERROR_COUNT_BROKER_KILL] == 0, "2 sqlite, 1 list pending");
        error_count_inc(ERROR_COUNT_SQLITE);
        error_count_written(snap);
        error_count_pending(now);
        tap_ok(now[ERROR_COUNT_SQLITE] == 1 && now[ERROR_COUNT_BROKER_LIST] == 0, "after writing the snapshot: the one counted since");
        error_count_written(snap);
        error_count_pending(now);
        tap_ok(now[ERROR_COUNT_SQLITE] == 0, "writing more than is pending leaves 0, not a wrap-around");
}

int main(void) {
        test_names();
        test_pending();
        return tap_done();
}
