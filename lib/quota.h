/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The arithmetic of a quota over a sliding window (an API key's executions per minute, CPU
 * seconds per day): what it has used in the window decides whether one more use may start, and if
 * not, when it may. */

/* One past use within the window: how long ago it started, and how much it used (1 for an
 * execution, its CPU time in ms for CPU). */
typedef struct QuotaUse {
        int64_t age_ms;
        int64_t amount;
} QuotaUse;

/* With uses (n of them, oldest first) in a window of window_ms, under a limit on their sum: 0 when
 * their sum is below limit (one more may start); otherwise the seconds, at least 1, until enough of
 * them have left the window that it is. Pure. */
unsigned quota_retry_after_s(const QuotaUse *uses, size_t n, int64_t limit, int64_t window_ms);

/* An API key's caps on its sessions (0: none), and what it holds now. A session that is kept
 * (active or paused) may be paused and then holds its disk until it is deleted: max_kept bounds
 * the paused ones by bounding all that may become so, and disk_bytes bounds their disks, each
 * counted as large as it may grow (disk_each). */
typedef struct QuotaSessionCaps {
        int64_t max_active;
        int64_t max_kept;
        int64_t disk_bytes;
        uint64_t disk_each;
} QuotaSessionCaps;

typedef struct QuotaSessionCounts {
        int64_t active; /* active or being paused */
        int64_t paused;
} QuotaSessionCounts;

typedef enum QuotaSession {
        QUOTA_SESSION_OK,
        QUOTA_SESSION_ACTIVE, /* max_active: one more active is too many */
        QUOTA_SESSION_KEPT,   /* max_kept: one more kept is too many */
        QUOTA_SESSION_DISK,   /* disk_bytes: one more disk is too many */
} QuotaSession;

/* Whether one more session may be made (create: one more active and one more kept) or resumed (one
 * more active): the first cap it would exceed, in the order above. Pure. */
QuotaSession quota_session_check(const QuotaSessionCounts *have, const QuotaSessionCaps *caps, bool create);

/* Whole seconds, at least 1, from now until at (both unix time). Pure. */
unsigned quota_seconds_until(double now, double at);
