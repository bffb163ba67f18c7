/* SPDX-License-Identifier: MIT */
#pragma once

/* What /proc says of a process of a session sandbox (runner-session.c): where the sandbox's own
 * cgroup does not count an op, the op's interpreter does. */

#include <stdint.h>
#include <sys/types.h>

/* The PID in this PID namespace of init's child whose PID in the sandbox's namespace is inner (the
 * last NSpid of /proc/<child>/status): its /proc/<pid>/stat and status are readable from here. -1
 * if not found. */
pid_t proc_outer_pid(pid_t init, pid_t inner);

/* The CPU time process pid used, with what it waited for (utime + stime + cutime + cstime of
 * /proc/<pid>/stat), in microseconds; -1 if unknown. */
int64_t proc_cpu_usec(pid_t pid);

/* The largest resident set of process pid so far (VmHWM of /proc/<pid>/status), in bytes: an
 * interpreter's, since it started. 0 if unknown. */
int64_t proc_peak_bytes(pid_t pid);
