/* SPDX-License-Identifier: MIT */
/* What the workers read about a sandbox they did not start: the result the broker handed over, and
 * the cgroup limits it ran into. No bus here: the workers link this, not sandbox.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nspawn/sandbox.h"

/* The number after "key " in a flat-keyed cgroup file, 0 if absent or unreadable. */
static uint64_t cgroup_counter(const char *path, const char *key) {
        char line[256];
        uint64_t v = 0;
        size_t n = strlen(key);
        FILE *f = fopen(path, "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, n) == 0 && line[n] == ' ')
                        v = strtoull(line + n + 1, NULL, 10);
        (void) fclose(f);
        return v;
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

/* The one number of a cgroup file, or after "key " in a flat-keyed one; UINT64_MAX if unreadable. */
static uint64_t cgroup_value(const char *path, const char *key) {
        char line[256];
        size_t n = key ? strlen(key) : 0;
        uint64_t v = UINT64_MAX;
        FILE *f = fopen(path, "re");

        if (!f)
                return UINT64_MAX;
        while (fgets(line, sizeof(line), f))
                if (!key || (strncmp(line, key, n) == 0 && line[n] == ' ')) {
                        v = strtoull(line + n + (key ? 1 : 0), NULL, 10);
                        break;
                }
        (void) fclose(f);
        return v;
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
