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

void sandbox_result_done(SandboxResult *r) {
        free(r->reply);
        free(r->diag);
        *r = (SandboxResult){};
}
