/* SPDX-License-Identifier: MIT */
#pragma once

/* What one sandbox used, counted by the kernel in a cgroup of its own inside the machine's.
 *
 * The machine's cgroup (its unit's) holds the runner, the zygotes and every sandbox the machine
 * made; each sandbox gets a child cgroup, made before its init is forked and removed after it ends,
 * so that its figures are its own:
 *   - CPU time: cpu.stat's usage_usec of the cgroup v2 (unified) hierarchy, which every cgroup v2 has
 *     whatever controllers are on. nspawn hands the machine's payload cgroup to the machine's root;
 *     where it does not mount that hierarchy (a cgroup v1 "hybrid" host), the runner mounts it.
 *   - Peak memory: memory.peak of cgroup v2, where the memory controller is there (a cgroup v2
 *     host: the runner moves itself into a leaf of its own first, because a cgroup with processes
 *     in it cannot give controllers to children); else memory.max_usage_in_bytes of the v1 memory
 *     hierarchy, where the machine's cgroup there was handed to the machine's root (see
 *     sandboxd-runner --delegate).
 * Where a hierarchy is not ours to write, that figure is not counted here (the caller falls back on
 * what its processes' resource usage says); nothing fails for it. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct CgroupUsage {
        bool has_cpu;
        bool has_memory;
        uint64_t cpu_usec;
        uint64_t memory_peak_bytes;
        uint64_t oom_kills; /* processes of the sandbox the kernel killed for memory */
} CgroupUsage;

/* Once, before any zygote starts: finds (or mounts) the hierarchies the runner may use. Returns
 * whether any is usable. */
bool cgroup_setup(void);

/* A new sandbox's cgroups, named after id, and a descriptor for each one's cgroup.procs (at most
 * CGROUP_FDS_MAX, in *ret_fds; their number in *ret_n) for its init to write "0" into before it makes
 * anything: all the sandbox's processes descend from it. 0, or -errno (no fd is left open then). */
#define CGROUP_FDS_MAX 2
int cgroup_sandbox_make(unsigned id, int ret_fds[CGROUP_FDS_MAX], unsigned *ret_n);

/* What sandbox id's cgroups counted so far. */
void cgroup_sandbox_usage(unsigned id, CgroupUsage *ret);

/* Sets sandbox id's peak memory back to what it holds now, for a session's next op: 0, or -EOPNOTSUPP
 * where the hierarchy cannot (cgroup v2's memory.peak is set back per open file from Linux 6.12 only;
 * only cgroup v1's is here). */
int cgroup_sandbox_reset_peak(unsigned id);

/* Kills what is left in sandbox id's cgroups and removes them; one that still has processes dying is
 * removed by a later call (of any id). */
void cgroup_sandbox_remove(unsigned id);

/* On the host, as root, in a machine unit's ExecStartPre=: the unit's cgroup in the v1 memory
 * hierarchy handed to uid (the machine's root), so that the runner can make a cgroup per sandbox in
 * it. Nothing to do on a cgroup v2 host (nspawn hands the payload over itself). */
int cgroup_delegate_v1(uid_t uid);
