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

QuotaSession quota_session_check(const QuotaSessionCounts *have, const QuotaSessionCaps *caps, bool create) {
        int64_t kept = have->active + have->paused;

        if (caps->max_active > 0 && have->active + 1 > caps->max_active)
                return QUOTA_SESSION_ACTIVE;
        if (!create)
                return QUOTA_SESSION_OK;
        if (caps->max_kept > 0 && kept + 1 > caps->max_kept)
                return QUOTA_SESSION_KEPT;
        /* In whole disks, so that nothing overflows: (kept + 1) disks must fit in disk_bytes. */
        if (caps->disk_bytes > 0 && caps->disk_each > 0 && (uint64_t) kept + 1 > (uint64_t) caps->disk_bytes / caps->disk_each)
                return QUOTA_SESSION_DISK;
        return QUOTA_SESSION_OK;
}

unsigned quota_seconds_until(double now, double at) {
        double d = at - now;

        if (d <= 1)
                return 1;
        if (d > 366.0 * 86400)
                d = 366.0 * 86400;
        return (unsigned) d + (d > (double) (unsigned) d);
}
