/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* The number after "key " in a flat-keyed cgroup file (cpu.stat, memory.events, pids.events,
 * memory.oom_control), or the number of a file that holds one (key NULL: memory.peak,
 * memory.max_usage_in_bytes). 0, -errno when the file cannot be read, -ENOENT for a key it does
 * not have, -EBADMSG for no number there. */
int cgroup_read_number(const char *path, const char *key, uint64_t *ret);
