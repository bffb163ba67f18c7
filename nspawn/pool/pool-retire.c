/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "nspawn/pool/pool-retire.h"

static const struct {
        const char *label, *text;
} reasons[_POOL_RETIRE_MAX] = {
        [POOL_RETIRE_SERVED] = {"served", "it served its executions"},
        [POOL_RETIRE_TIMEOUT] = {"timeout", "its execution timed out"},
        [POOL_RETIRE_MEMORY_LIMIT] = {"memory_limit", "its execution hit the memory limit"},
        [POOL_RETIRE_TASKS_LIMIT] = {"tasks_limit", "its execution hit the task limit"},
        [POOL_RETIRE_SIGNAL] = {"signal", "its code died of a signal"},
        [POOL_RETIRE_NO_ANSWER] = {"no_answer", "it ended before it answered"},
        [POOL_RETIRE_REPLY_TOO_LARGE] = {"reply_too_large", "its reply was too large"},
        [POOL_RETIRE_REPLY_REFUSED] = {"reply_refused", "its reply was refused"},
        [POOL_RETIRE_UNRESPONSIVE] = {"unresponsive", "it did not answer"},
        [POOL_RETIRE_NOT_PUT_BACK] = {"not_put_back", "it could not be put back in the pool"},
        [POOL_RETIRE_WORKER_DIED] = {"worker_died", "its worker died"},
        [POOL_RETIRE_START_FAILED] = {"start_failed", "it failed to start"},
        [POOL_RETIRE_LOST_RECORD] = {"lost_record", "it lost its record"},
        [POOL_RETIRE_IDLE] = {"idle", "idle"},
        [POOL_RETIRE_STALE] = {"stale", "made with an older runtime image"},
        [POOL_RETIRE_PREVIOUS_INSTANCE] = {"previous_instance", "left by a previous instance"},
        [POOL_RETIRE_SHUTDOWN] = {"shutdown", "pool manager stopping"},
        [POOL_RETIRE_CLIENT_GONE] = {"client_gone", "its client went away before the code ended"},
};

const char *pool_retire_label(PoolRetire r) {
        return r > POOL_RETIRE_NONE && r < _POOL_RETIRE_MAX ? reasons[r].label : NULL;
}

const char *pool_retire_text(PoolRetire r) {
        return r > POOL_RETIRE_NONE && r < _POOL_RETIRE_MAX ? reasons[r].text : NULL;
}
