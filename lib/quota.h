/* SPDX-License-Identifier: MIT */
#pragma once

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
