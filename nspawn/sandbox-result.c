/* SPDX-License-Identifier: MIT */
/* What the workers read about a sandbox they did not start: the result the broker handed over, and
 * the cgroup limits it ran into. No bus here: the workers link this, not sandbox.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup-util.h"
#include "nspawn/sandbox.h"

/* A count of a flat-keyed cgroup file, 0 if absent or unreadable: nothing counted. */
static uint64_t cgroup_counter(const char *path, const char *key) {
        uint64_t v;

        return cgroup_read_number(path, key, &v) >= 0 ? v : 0;
}

/* A figure of a cgroup file, UINT64_MAX if absent or unreadable: not known. */
static uint64_t cgroup_value(const char *path, const char *key) {
        uint64_t v;

        return cgroup_read_number(path, key, &v) >= 0 ? v : UINT64_MAX;
}

void sandbox_limits_hit(const char *slice, const char *unit, SandboxLimitsHit *ret) {
        char path[512];

        *ret = (SandboxLimitsHit){};
        /* cgroup v2: memory.events and pids.events of the unit. */
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/memory.events", slice, unit);
        if (access(path, R_OK) == 0) {
                ret->memory = cgroup_counter(path, "oom_kill") > 0;
                (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/pids.events", slice, unit);
                ret->tasks = cgroup_counter(path, "max") > 0;
                return;
        }
        /* cgroup v1 (hybrid): the memory and pids hierarchies. */
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/memory/%s/%s/memory.oom_control", slice, unit);
        ret->memory = cgroup_counter(path, "oom_kill") > 0;
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/pids/%s/%s/pids.events", slice, unit);
        ret->tasks = cgroup_counter(path, "max") > 0;
}

void sandbox_usage(const char *slice, const char *unit, SandboxUsage *ret) {
        char path[512];

        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/cpu.stat", slice, unit);
        ret->cpu_usec = cgroup_value(path, "usage_usec");
        if (ret->cpu_usec == UINT64_MAX) {
                (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/unified/%s/%s/cpu.stat", slice, unit);
                ret->cpu_usec = cgroup_value(path, "usage_usec");
        }
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/memory.peak", slice, unit);
        ret->memory_peak_bytes = cgroup_value(path, NULL);
        if (ret->memory_peak_bytes == UINT64_MAX) {
                (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/memory/%s/%s/memory.max_usage_in_bytes", slice, unit);
                ret->memory_peak_bytes = cgroup_value(path, NULL);
        }
}

void sandbox_result_done(SandboxResult *r) {
        free(r->reply);
        free(r->diag);
        *r = (SandboxResult){};
}
