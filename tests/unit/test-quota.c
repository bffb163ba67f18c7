/* SPDX-License-Identifier: MIT */
#include "lib/quota.h"
#include "tests/unit/tap.h"

#define MINUTE_MS 60000
#define DAY_MS 86400000

/* A key's session caps: each case one more session made (create) or resumed. */
static void test_session_caps(void) {
        static const struct {
                QuotaSessionCounts have;
                QuotaSessionCaps caps;
                bool create;
                QuotaSession expected;
                const char *name;
        } cases[] = {
                {{0, 0}, {0, 0, 0, 0}, true, QUOTA_SESSION_OK, "no caps: always"},
                {{100, 100}, {0, 0, 0, 1 << 30}, true, QUOTA_SESSION_OK, "no caps, many sessions: still"},
                {{1, 0}, {2, 0, 0, 0}, true, QUOTA_SESSION_OK, "max-sessions 2, 1 active: a second"},
                {{2, 0}, {2, 0, 0, 0}, true, QUOTA_SESSION_ACTIVE, "max-sessions 2, 2 active: not a third"},
                {{2, 5}, {2, 0, 0, 0}, false, QUOTA_SESSION_ACTIVE, "max-sessions 2, 2 active: no resume either"},
                {{1, 5}, {2, 0, 0, 0}, false, QUOTA_SESSION_OK, "max-sessions 2, 1 active: a resume"},
                {{1, 5}, {2, 6, 0, 0}, false, QUOTA_SESSION_OK, "a resume keeps no more sessions: max-paused not asked"},
                {{0, 2}, {0, 3, 0, 0}, true, QUOTA_SESSION_OK, "max-paused 3, 2 kept: a third"},
                {{1, 2}, {0, 3, 0, 0}, true, QUOTA_SESSION_KEPT, "max-paused 3, 1 active + 2 paused: not a fourth"},
                {{3, 0}, {0, 3, 0, 0}, true, QUOTA_SESSION_KEPT, "max-paused 3, 3 active (each may pause): not a fourth"},
                {{1, 0}, {0, 0, 2 << 20, 1 << 20}, true, QUOTA_SESSION_OK, "disk 2 MiB, 1 MiB each, 1 kept: a second"},
                {{1, 1}, {0, 0, 2 << 20, 1 << 20}, true, QUOTA_SESSION_DISK, "disk 2 MiB, 1 MiB each, 2 kept: not a third"},
                {{0, 0}, {0, 0, (1 << 20) - 1, 1 << 20}, true, QUOTA_SESSION_DISK, "disk below one session's: none at all"},
                {{2, 2}, {0, 0, 4 << 20, 1 << 20}, false, QUOTA_SESSION_OK, "disk full: a resume adds no disk"},
                {{2, 0}, {2, 2, 1 << 20, 1 << 20}, true, QUOTA_SESSION_ACTIVE, "several over: max-sessions first"},
                {{INT64_MAX / 2, 0}, {0, 0, INT64_MAX, 1}, true, QUOTA_SESSION_OK, "huge numbers do not overflow"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int(quota_session_check(&cases[i].have, &cases[i].caps, cases[i].create), cases[i].expected, "%s", cases[i].name);
        tap_is_int(quota_seconds_until(1000.0, 900.0), 1, "already free: 1 s, never 0");
        tap_is_int(quota_seconds_until(1000.0, 1000.5), 1, "half a second: 1 s");
        tap_is_int(quota_seconds_until(1000.0, 1030.2), 31, "30.2 s: rounded up to 31");
        tap_is_int(quota_seconds_until(1000.0, 1600.0), 600, "600 s exactly");
        tap_is_int(quota_seconds_until(0, 1e12), 366 * 86400, "far away: a year at most");
}

int main(void) {
        test_session_caps();
        /* Executions per minute: each use is 1. */
        static const QuotaUse three[] = {{50000, 1}, {20000, 1}, {100, 1}};

        tap_is_int(quota_retry_after_s(NULL, 0, 1, MINUTE_MS), 0, "nothing used: one may start");
        tap_is_int(quota_retry_after_s(three, 3, 4, MINUTE_MS), 0, "3 of 4: one more may start");
        /* 3 of 3: when the oldest (50 s ago) leaves the window, in 10 s, 2 are left. */
        tap_is_int(quota_retry_after_s(three, 3, 3, MINUTE_MS), 10, "3 of 3: in 10 s, when the oldest has left");
        /* 3 of 2: two must leave: the second oldest (20 s ago) leaves in 40 s. */
        tap_is_int(quota_retry_after_s(three, 3, 2, MINUTE_MS), 40, "3 of 2 (the limit was lowered): in 40 s");
        /* 3 of 1: all three must leave; the newest in 59.9 s, rounded up. */
        tap_is_int(quota_retry_after_s(three, 3, 1, MINUTE_MS), 60, "3 of 1: in 60 s (59.9 rounded up)");

        /* At least a second, even when the window frees within one. */
        {
                static const QuotaUse edge[] = {{59900, 1}};

                tap_is_int(quota_retry_after_s(edge, 1, 1, MINUTE_MS), 1, "freeing in 100 ms: Retry-After 1, never 0");
        }

        /* CPU seconds per day: each use is its CPU time in ms, the limit too. */
        {
                static const QuotaUse cpu[] = {{DAY_MS - 3600000, 1500}, {7200000, 400}, {1000, 200}};

                tap_is_int(quota_retry_after_s(cpu, 3, 3000, DAY_MS), 0, "2.1 of 3 CPU seconds: one may start");
                tap_is_int(quota_retry_after_s(cpu, 3, 2100, DAY_MS), 3600, "2.1 of 2.1: in an hour, when the 1.5 s run has left");
                tap_is_int(quota_retry_after_s(cpu, 3, 500, DAY_MS), DAY_MS / 1000 - 7200,
                           "2.1 of 0.5: the second must leave too, in 22 h");
        }

        /* A negative amount (no CPU time recorded) counts as none. */
        {
                static const QuotaUse odd[] = {{1000, -5}, {500, 1}};

                tap_is_int(quota_retry_after_s(odd, 2, 2, MINUTE_MS), 0, "negative amounts count as 0");
                tap_is_int(quota_retry_after_s(odd, 2, 1, MINUTE_MS), 60, "and do not free anything when they leave");
        }
        return tap_done();
}
