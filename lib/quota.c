/* SPDX-License-Identifier: MIT */
#include "lib/quota.h"

static int64_t positive(int64_t v) {
        return v > 0 ? v : 0;
}

unsigned quota_retry_after_s(const QuotaUse *uses, size_t n, int64_t limit, int64_t window_ms) {
        int64_t sum = 0, wait_ms = window_ms;

        for (size_t i = 0; i < n; i++)
                sum += positive(uses[i].amount);
        if (sum < limit)
                return 0;

        /* The oldest leave the window first: wait until the sum of those left is below the limit. */
        for (size_t i = 0; i < n; i++) {
                sum -= positive(uses[i].amount);
                wait_ms = window_ms - uses[i].age_ms;
                if (sum < limit)
                        break;
        }
        if (wait_ms < 1000)
                return 1;
        /* Whole seconds, rounded up: not before the window has really freed. */
        return (unsigned) ((wait_ms + 999) / 1000);
}
