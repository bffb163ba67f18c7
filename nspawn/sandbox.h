/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

typedef struct NspawnSpec NspawnSpec;

/* One execution: a transient service running systemd-nspawn. Strings are borrowed. */
typedef struct SandboxSpec {
        const char *unit;       /* "<sandbox id>.service" */
        const char *slice;      /* e.g. "sandbox.slice" */
        const char *log_field;  /* "FIELD=value" tagging the unit's journal lines, e.g. REQUEST_ID=… */
        const NspawnSpec *nspawn;
        uint64_t runtime_max_usec; /* wall-clock limit, enforced by systemd */
        uint64_t memory_max;       /* bytes */
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec; /* 1000000 = one CPU */
        size_t max_reply_bytes;          /* what the worker reads of the sandbox's stdout at most */
        /* Optional: a line the payload prints on stdout once it is up. Until it comes the payload
         * has ready_timeout_usec; after it, run_timeout_usec. Past either, the unit is killed. */
        const char *ready_marker;
        uint64_t ready_timeout_usec;
        uint64_t run_timeout_usec;
        /* Optional: a disk image the unit needs mounted on disk_where (a session's): systemd mounts
         * it (a loop device) before it starts the unit, and unmounts it once the unit is gone. */
        const char *disk_image;
        const char *disk_where;
        /* Optional: a command run as root on the host before the payload (ExecStartPre=), in the
         * unit's cgroups; NULL-terminated, [0] absolute. */
        const char *const *exec_start_pre;
        /* Optional: commands run as root on the host once the unit's processes are gone, however it
         * ended (ExecStopPost=), each whatever the one before did: a NULL-terminated list of
         * NULL-terminated argv, each [0] absolute. */
        const char *const *const *exec_stop_post;
} SandboxSpec;

typedef struct SandboxResult {
        char *reply; /* the sandbox's stdout, NUL-terminated */
        size_t reply_len;
        bool reply_truncated; /* more than max_reply_bytes arrived */
        char *diag;           /* its stderr (nspawn's diagnostics), capped, NUL-terminated */
        size_t diag_len;
        char result[48];      /* the service's Result: success, timeout, exit-code, signal, oom-kill … */
        int exit_code;        /* its ExecMainCode: CLD_EXITED, CLD_KILLED or CLD_DUMPED; 0 if unknown */
        int exit_status;      /* its ExecMainStatus: nspawn's exit status, or the signal that ended it */
        uint64_t duration_usec;
        uint64_t cpu_usec;          /* CPUUsageNSec / 1000, or its cgroup's; UINT64_MAX if unknown */
        uint64_t memory_peak_bytes; /* its cgroup's peak, UINT64_MAX if unknown */
        bool ready;            /* the ready marker came (always false without one) */
        bool killed_unready;   /* killed: no ready marker within ready_timeout_usec */
        bool killed_timeout;   /* killed: run_timeout_usec passed after the marker */
} SandboxResult;

/* Starts the sandbox, feeds it input on stdin, collects stdout and stderr and waits until systemd
 * reports the unit inactive, then lets systemd collect it. Returns 0 when the unit ran (whatever
 * its result), or -errno when it could not be started or followed; then *reterr_error may name the
 * D-Bus error. The unit never outlives a failed call. On success the caller owns *ret's buffers. */
int sandbox_run(sd_bus *bus, const SandboxSpec *spec, const char *input, size_t input_len,
                SandboxResult *ret, sd_bus_error *reterr_error);

void sandbox_result_done(SandboxResult *r);

/* The StartTransientUnit call (into *ret, the caller's) of a sandbox that nobody follows (a warm
 * one): stdin is stdin_fd (a listening socket; the message holds its own copy), stdout and stderr go
 * to the journal. Its reply is the start's job. */
int sandbox_start_message(sd_bus *bus, const SandboxSpec *spec, int stdin_fd, sd_bus_message **ret);

/* The ListUnitsByPatterns call (into *ret, the caller's) for the loaded units whose names match any
 * of patterns (NULL-terminated, fnmatch); then sandbox_list_read() on its reply calls
 * f(unit, active_state, userdata) for each. */
typedef void (*SandboxUnitFunc)(const char *unit, const char *active_state, void *userdata);
int sandbox_list_message(sd_bus *bus, const char *const *patterns, sd_bus_message **ret);
int sandbox_list_read(sd_bus_message *reply, SandboxUnitFunc f, void *userdata);

/* Which of its cgroup limits a sandbox unit ran into: kills by the OOM killer under its memory
 * limit, forks refused by its task limit. Reads the unit's cgroup (v2, or v1 memory/pids
 * hierarchies); both false when the cgroup is gone or not readable. */
typedef struct SandboxLimitsHit {
        bool memory;
        bool tasks;
} SandboxLimitsHit;
void sandbox_limits_hit(const char *slice, const char *unit, SandboxLimitsHit *ret);

/* What a machine unit's cgroup counted since it started: CPU time (cgroup v2's cpu.stat, on a
 * hybrid host the unified hierarchy's) and peak memory (v2's memory.peak, or v1's
 * memory.max_usage_in_bytes). UINT64_MAX for what is not readable. For an execution whose machine
 * is killed before its runner answers: the machine's figures are the only ones left. */
typedef struct SandboxUsage {
        uint64_t cpu_usec;
        uint64_t memory_peak_bytes;
} SandboxUsage;
void sandbox_usage(const char *slice, const char *unit, SandboxUsage *ret);

/* Lets systemd unload a failed unit that nothing else will collect. */
int sandbox_reset_failed(sd_bus *bus, const char *unit);

/* Kills every process of a sandbox unit and asks systemd to stop it; for units left by a dead worker. */
int sandbox_kill(sd_bus *bus, const char *unit, sd_bus_error *reterr_error);

/* A session's disk (the broker's SESSION ops): the StartTransientUnit call (into *ret, the
 * caller's) of a oneshot unit named spec->unit of spec->slice that formats a new ext4 file system of
 * bytes in a new sparse file image, its root owned by owner_uid (a host UID); after
 * spec->exec_start_pre, if any. Its reply is the job, which is over when the format is. */
int sandbox_disk_format_message(sd_bus *bus, const SandboxSpec *spec, const char *image, uint64_t bytes, uint32_t owner_uid,
                                sd_bus_message **ret);
/* Waits until unit is inactive or failed (then reset) with no job queued, or gone: 0, -ETIME past
 * timeout_usec. It waits for systemd's signals of the unit, processing bus's messages meanwhile:
 * for a connection of the caller's own, not one an event loop serves. With timeout_usec 0 it only
 * looks once (three calls at most) and processes nothing. (sandbox-wait.c) */
int sandbox_wait_gone(sd_bus *bus, const char *unit, uint64_t timeout_usec);
