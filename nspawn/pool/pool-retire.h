/* SPDX-License-Identifier: MIT */
#pragma once

/* Why a machine of the pool is destroyed: said in the journal, and counted by reason for
 * GET /metrics (sandboxd_machines_retired_total{reason}). */
typedef enum PoolRetire {
        POOL_RETIRE_NONE, /* it may serve again */
        POOL_RETIRE_SERVED,
        POOL_RETIRE_TIMEOUT,
        POOL_RETIRE_MEMORY_LIMIT,
        POOL_RETIRE_TASKS_LIMIT,
        POOL_RETIRE_SIGNAL,
        POOL_RETIRE_NO_ANSWER,
        POOL_RETIRE_REPLY_TOO_LARGE,
        POOL_RETIRE_REPLY_REFUSED,
        POOL_RETIRE_UNRESPONSIVE,
        POOL_RETIRE_NOT_PUT_BACK,
        POOL_RETIRE_WORKER_DIED,
        POOL_RETIRE_START_FAILED,
        POOL_RETIRE_LOST_RECORD,
        POOL_RETIRE_IDLE,
        POOL_RETIRE_STALE,
        POOL_RETIRE_PREVIOUS_INSTANCE,
        POOL_RETIRE_SHUTDOWN,
        POOL_RETIRE_CLIENT_GONE,
        _POOL_RETIRE_MAX,
} PoolRetire;

/* The reason as a metric's label ("timeout", "memory_limit", ...), and as words for the journal
 * ("its execution timed out"); NULL for POOL_RETIRE_NONE and out of range. Pure. */
const char *pool_retire_label(PoolRetire r);
const char *pool_retire_text(PoolRetire r);
