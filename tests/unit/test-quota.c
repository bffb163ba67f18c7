/* SPDX-License-Identifier: MIT */
#include "lib/quota.h"
#include "tests/unit/tap.h"

#define MINUTE_MS 60000
#define DAY_MS 86400000

int main(void) {
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
