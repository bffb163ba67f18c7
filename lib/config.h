/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SANDBOXD_LIB_DIR's default: where `make install` puts the binaries, PREFIX/lib/sandboxd (the
 * Makefile defines it from PREFIX; /usr for the Debian package). */
#ifndef SANDBOXD_DEFAULT_LIB_DIR
#        define SANDBOXD_DEFAULT_LIB_DIR "/usr/local/lib/sandboxd"
#endif

/* Settings read once at start-up from the environment (the unit's Environment= lines). */
typedef struct Config {
        unsigned workers;
        /* Requests of work (executions, tool calls, session operations) in flight at once, across
         * every worker: past it, 503 with Retry-After. 0 in the environment: sized from the host
         * (config_host_apply()). */
        unsigned max_inflight;
        /* An API key's requests in flight at once when its own max-concurrent is unset; 0 in the
         * environment: half the pool's most machines, so that no key takes all of them. */
        unsigned key_max_concurrent;
        const char *db_path;
        const char *user; /* the workers' and the pool manager's: everything but the broker runs as it */
        size_t max_body_bytes;
        uint64_t memory_max;
        uint64_t tasks_max;
        unsigned cpu_quota_percent;
        uint64_t workspace_bytes;
        uint64_t tmp_bytes;
        size_t output_cap_bytes;
        size_t return_cap_bytes;
        unsigned nofile;
        unsigned pool_target;   /* warm sandboxes kept ready */
        unsigned pool_max;      /* machines at most, idle and busy (CONFIG_AUTO until config_host_apply()) */
        unsigned queue_max;     /* claims waiting for a machine at most; past it, 503 at once */
        unsigned pool_ttl_s;    /* a warm sandbox idle this long is replaced */
        unsigned pool_wait_s;   /* how long a request waits for a warm sandbox before 503 */
        unsigned executions_per_machine; /* executions a machine serves, one at a time, before it retires */
        unsigned call_ready_timeout_s; /* how long a tool sandbox may take to come up */
        const char *image_dir;         /* machine images: /v1/call's, and the runtime image */
        const char *runtime_image;     /* the root of every execution machine: its name in image_dir */
        const char *runtime_state_dir; /* what sandboxd-image says of it: its tree in use, its versions */
        const char *tool_state_dir;    /* the manifests of the tool images sandboxd-image built, NAME.json */
        const char *preload;           /* modules each machine's zygote imports once, comma-separated */
        const char *openblas_coretype; /* OPENBLAS_CORETYPE for the code, "" to let OpenBLAS detect it */
        bool import_policy_curated;    /* /v1/execute's python runs under the import policy */
        bool api_keys;                 /* every route but /metrics needs an API key (sandboxctl key) */
        /* Sessions: a machine each, for the session's whole life (README, "Sessions"). */
        unsigned sessions_max;          /* active sessions (holding a machine) at most */
        uint64_t session_disk_bytes;    /* each session's own disk for its files */
        unsigned session_retain_s;      /* a paused session is deleted after this long */
        unsigned session_timeout_max_s; /* a run's or exec's timeout at most */
        size_t session_upload_bytes;    /* one uploaded file at most */
        const char *session_dir;        /* the sessions' disk images */
        uint64_t disk_reserve_bytes;    /* free space kept on the state filesystem: below it, no new disk or upload */
        unsigned record_retain_days;    /* request records older than this are pruned */
        /* Origins (comma-separated, e.g. "https://agent.example") a browser's request to /mcp may
         * come from, besides loopback's: against DNS rebinding, any other is refused (403). */
        const char *mcp_allowed_origins;
        /* What a sandbox's code may ever reach through the egress proxy (lib/egress.h), read at each
         * request that asks for network: an edit holds from the next one. */
        const char *egress_allow_path;
        const char *egress_socket; /* the egress relay's (sandboxd-egress) */
        /* CA certificates given to the clients of code that asks for network (README): a PEM
         * bundle bound read-only into every machine started while it exists (MACHINE_EGRESS_CA);
         * absent or "": the image's own only. */
        const char *egress_ca_bundle;
        /* Several hosts (README, "Several hosts"): etcd's client URLs, comma-separated ("" for a single
         * host), this member's name (its sessions' ids carry it, unit-name.h) and the address the
         * front reaches its nginx at, HOST:PORT. All three or none. */
        const char *etcd;
        const char *member;
        const char *member_address;
        const char *lib_dir; /* sandboxd-runner, toolrunner.py and etc/ for the sandbox user; must lie under /usr */
        const char *slice;
} Config;

/* A setting left to config_host_apply(): what the host holds decides it. */
#define CONFIG_AUTO UINT32_MAX
/* What one machine of the pool is budgeted: an idle one holds about 7 MiB, a snippet that sleeps
 * little more; the budget leaves room for the code's own use. Half of the host's memory goes to
 * the pool at most. */
#define POOL_MACHINE_BUDGET_BYTES (64ULL << 20)
/* A sleeping snippet costs no CPU, a busy one a core's share: machines per CPU at most. */
#define POOL_MACHINES_PER_CPU 64
#define POOL_MAX_LIMIT 1024
#define QUEUE_MAX_MIN 16

/* Fills *ret from get(name) (getenv in production), defaults for what is unset. On a malformed
 * value returns -EINVAL and sets *reterr_name to the variable's name. Pure given get. */
int config_parse(const char *(*get)(const char *name), Config *ret, const char **reterr_name);

/* The pool's most for a host with mem_total_bytes of memory and cpus CPUs: half the memory in
 * POOL_MACHINE_BUDGET_BYTES shares, at most POOL_MACHINES_PER_CPU a CPU and POOL_MAX_LIMIT, at
 * least pool_target and 1. Pure. */
unsigned config_pool_max_for_host(uint64_t mem_total_bytes, unsigned cpus, unsigned pool_target);

/* A request in flight holds its body (up to SANDBOXD_MAX_BODY_BYTES) and about 1 MiB besides at
 * worst (its thread's stack, its sqlite connection, its reply): a quarter of the host's memory is
 * what they may take together, were every one of them the largest. Waiting costs no CPU, so the
 * CPUs do not bound it. */
#define INFLIGHT_OVERHEAD_BYTES (1ULL << 20)
#define INFLIGHT_MIN 64U
#define INFLIGHT_MAX 4096U

/* SANDBOXD_MAX_INFLIGHT for a host with mem_total_bytes of memory, between INFLIGHT_MIN and
 * INFLIGHT_MAX. Pure. */
unsigned config_max_inflight_for_host(uint64_t mem_total_bytes, size_t max_body_bytes);

/* Settings left to the host (CONFIG_AUTO) decided from it: the pool's most from /proc/meminfo and
 * the CPUs online, the queue's bound from the pool's most (twice it, at least QUEUE_MAX_MIN), the requests in flight from
 * the memory, a key's default max-concurrent from the pool's most (half of it). */
void config_host_apply(Config *c);
