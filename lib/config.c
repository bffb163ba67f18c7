/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/config.h"

static int parse_u64(const char *(*get)(const char *), const char *name, uint64_t min, uint64_t max, uint64_t *v) {
        const char *s = get(name);
        unsigned long long x;
        char *end = NULL;

        if (!s || !*s)
                return 0;
        /* strtoull() would skip white space and take a sign: "-1" and " -1" wrap to 2^64 - 1. */
        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        x = strtoull(s, &end, 10);
        if (errno != 0 || *end != 0 || x < min || x > max)
                return -EINVAL;
        *v = x;
        return 0;
}

static const char *get_str(const char *(*get)(const char *), const char *name, const char *def) {
        const char *s = get(name);

        return s && *s ? s : def;
}

/* Whether s is made of the characters of set only, with a length in [min, max]. */
static bool plain(const char *s, const char *set, size_t min, size_t max) {
        size_t n = strlen(s);

        return n >= min && n <= max && strspn(s, set) == n;
}

/* The cluster's settings: none, or all three. Each etcd URL is http:// or https:// and plain (the members' and
 * sandboxctl's client joins them into requests); the member's name fits a session's id
 * (nspawn/unit-name.h); its address is HOST:PORT, which the front's map and agent check take. */
static const char *cluster_invalid(const Config *c) {
        const char *url = c->etcd;

        if (!c->etcd[0] && !c->member[0] && !c->member_address[0])
                return NULL;
        if (!plain(c->member, "abcdefghijklmnopqrstuvwxyz0123456789", 1, 16))
                return "SANDBOXD_MEMBER";
        if (!plain(c->member_address, "abcdefghijklmnopqrstuvwxyz0123456789.-:[]", 3, 100) || !strrchr(c->member_address, ':'))
                return "SANDBOXD_MEMBER_ADDRESS";
        if (!plain(c->etcd, "abcdefghijklmnopqrstuvwxyz0123456789.-:/[],", 8, 1000))
                return "SANDBOXD_ETCD";
        for (;;) {
                const char *end = strchrnul(url, ',');

                size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7
                                                                                                       : 0;

                if (scheme == 0 || end - url <= (ptrdiff_t) scheme)
                        return "SANDBOXD_ETCD";
                if (!*end)
                        return NULL;
                url = end + 1;
        }
}

/* The numeric settings: name, field, bounds and default. */
static const struct {
        const char *name;
        size_t offset;
        int is_size_t;
        int is_unsigned;
        uint64_t min, max, def;
} knobs[] = {
#define KNOB_U(n, f, lo, hi, d) {n, offsetof(Config, f), 0, 1, lo, hi, d}
#define KNOB_Z(n, f, lo, hi, d) {n, offsetof(Config, f), 1, 0, lo, hi, d}
#define KNOB_T(n, f, lo, hi, d) {n, offsetof(Config, f), 0, 0, lo, hi, d}
        KNOB_U("SANDBOXD_WORKERS", workers, 1, 256, 4),
        /* Unset: from the host's memory (config_host_apply()). */
        KNOB_U("SANDBOXD_MAX_INFLIGHT", max_inflight, 1, 65536, CONFIG_AUTO),
        /* Unset: half the pool's most (config_host_apply()). */
        KNOB_U("SANDBOXD_KEY_MAX_CONCURRENT", key_max_concurrent, 1, 65536, CONFIG_AUTO),
        KNOB_Z("SANDBOXD_MAX_BODY_BYTES", max_body_bytes, 1024, 1ULL << 30, 16ULL << 20),
        KNOB_T("SANDBOXD_MEMORY_MAX", memory_max, 16ULL << 20, UINT64_MAX, 512ULL << 20),
        KNOB_T("SANDBOXD_TASKS_MAX", tasks_max, 8, 1ULL << 20, 128),
        KNOB_U("SANDBOXD_CPU_QUOTA_PERCENT", cpu_quota_percent, 1, 100000, 100),
        KNOB_T("SANDBOXD_WORKSPACE_BYTES", workspace_bytes, 1ULL << 20, 1ULL << 40, 128ULL << 20),
        KNOB_T("SANDBOXD_TMP_BYTES", tmp_bytes, 1ULL << 20, 1ULL << 40, 64ULL << 20),
        KNOB_Z("SANDBOXD_OUTPUT_CAP_BYTES", output_cap_bytes, 1024, 256ULL << 20, 1ULL << 20),
        KNOB_Z("SANDBOXD_RETURN_CAP_BYTES", return_cap_bytes, 1024, 256ULL << 20, 8ULL << 20),
        KNOB_U("SANDBOXD_NOFILE", nofile, 16, 1 << 20, 1024),
        KNOB_U("SANDBOXD_POOL_TARGET", pool_target, 0, 64, 3),
        /* Unset: what the host holds (config_pool_max_for_host()), once config_host_apply() ran. */
        KNOB_U("SANDBOXD_POOL_MAX", pool_max, 0, POOL_MAX_LIMIT, CONFIG_AUTO),
        /* Unset: twice the pool's most, at least QUEUE_MAX_MIN (config_host_apply()). */
        KNOB_U("SANDBOXD_QUEUE_MAX", queue_max, 0, 65536, CONFIG_AUTO),
        KNOB_U("SANDBOXD_POOL_TTL_S", pool_ttl_s, 10, 86400, 600),
        KNOB_U("SANDBOXD_POOL_WAIT_S", pool_wait_s, 1, 300, 30),
        KNOB_U("SANDBOXD_EXECUTIONS_PER_MACHINE", executions_per_machine, 1, 100000, 64),
        KNOB_U("SANDBOXD_CALL_READY_TIMEOUT_S", call_ready_timeout_s, 1, 600, 110),
        KNOB_U("SANDBOXD_SESSIONS_MAX", sessions_max, 0, 4096, 16),
        KNOB_T("SANDBOXD_SESSION_DISK_BYTES", session_disk_bytes, 16ULL << 20, 1ULL << 42, 1ULL << 30),
        KNOB_U("SANDBOXD_SESSION_RETAIN_S", session_retain_s, 1, (uint64_t) 366 * 86400, (uint64_t) 7 * 86400),
        /* nginx waits 1200 s for a session's answer: the run, its turn and a machine start fit. */
        KNOB_U("SANDBOXD_SESSION_TIMEOUT_MAX_S", session_timeout_max_s, 1, 3600, 900),
        KNOB_Z("SANDBOXD_SESSION_UPLOAD_BYTES", session_upload_bytes, 1024, 1ULL << 32, 128ULL << 20),
        /* 0: no reserve. A full state filesystem stops the database too: keep a margin. */
        KNOB_T("SANDBOXD_DISK_RESERVE_BYTES", disk_reserve_bytes, 0, 1ULL << 50, 1ULL << 30),
        /* At least a day: the quotas' windows look back that far. */
        KNOB_U("SANDBOXD_RECORD_RETAIN_DAYS", record_retain_days, 1, 3650, 30),
#undef KNOB_U
#undef KNOB_Z
#undef KNOB_T
};

/* The settings that become command lines, paths and mounts: the name of the first one that is not
 * of their plain shape, or NULL. */
static const char *words_invalid(const Config *c) {
        /* Both travel on a runner's command line and into an image path: plain words only. */
        if (!plain(c->runtime_image, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", 1, 64) || c->runtime_image[0] == '-')
                return "SANDBOXD_RUNTIME_IMAGE";
        if (!plain(c->preload, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,", 0, 200))
                return "SANDBOXD_PRELOAD";
        if (!plain(c->openblas_coretype, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", 0, 32))
                return "SANDBOXD_OPENBLAS_CORETYPE";

        /* Under /usr, as a package installs it; bound into machines with nspawn's --bind-ro=SRC:DST,
         * which takes no ':'. */
        if (strncmp(c->lib_dir, "/usr/", 5) != 0 || strstr(c->lib_dir, "/..") || strchr(c->lib_dir, ':'))
                return "SANDBOXD_LIB_DIR";

        /* Becomes a mount unit's What= and a path nspawn binds: absolute, plain. */
        if (c->session_dir[0] != '/' || strstr(c->session_dir, "/..") ||
            !plain(c->session_dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./", 2, 200))
                return "SANDBOXD_SESSION_DIR";
        /* Bound into machines as SRC:DST as well. */
        if (c->egress_ca_bundle[0] &&
            (c->egress_ca_bundle[0] != '/' || strstr(c->egress_ca_bundle, "/..") ||
             !plain(c->egress_ca_bundle, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./", 2, 200)))
                return "SANDBOXD_EGRESS_CA_BUNDLE";
        return cluster_invalid(c);
}

int config_parse(const char *(*get)(const char *name), Config *ret, const char **reterr_name) {
        Config c = {
                .db_path = get_str(get, "SANDBOXD_DB", "/var/lib/sandboxd/db/sandboxd.db"),
                .user = get_str(get, "SANDBOXD_USER", "sandboxd"),
                .lib_dir = get_str(get, "SANDBOXD_LIB_DIR", SANDBOXD_DEFAULT_LIB_DIR),
                .slice = get_str(get, "SANDBOXD_SLICE", "sandbox.slice"),
                .image_dir = get_str(get, "SANDBOXD_IMAGE_DIR", "/var/lib/machines"),
                .runtime_image = get_str(get, "SANDBOXD_RUNTIME_IMAGE", "sandboxd-runtime"),
                .runtime_state_dir = get_str(get, "SANDBOXD_RUNTIME_STATE_DIR", "/var/lib/sandboxd/runtime"),
                .tool_state_dir = get_str(get, "SANDBOXD_TOOL_STATE_DIR", "/var/lib/sandboxd/tools"),
                .preload = get("SANDBOXD_PRELOAD") ? get("SANDBOXD_PRELOAD") : "numpy,pandas",
                .openblas_coretype = get_str(get, "SANDBOXD_OPENBLAS_CORETYPE", ""),
                .session_dir = get_str(get, "SANDBOXD_SESSION_DIR", "/var/lib/sandboxd/sessions"),
                .mcp_allowed_origins = get_str(get, "SANDBOXD_MCP_ALLOWED_ORIGINS", ""),
                .egress_allow_path = get_str(get, "SANDBOXD_EGRESS_ALLOW", "/etc/sandboxd/egress.allow"),
                .egress_socket = get_str(get, "SANDBOXD_EGRESS_SOCKET", "/run/sandboxd/egress.sock"),
                .egress_ca_bundle = get_str(get, "SANDBOXD_EGRESS_CA_BUNDLE", "/etc/sandboxd/egress-ca.pem"),
                .etcd = get_str(get, "SANDBOXD_ETCD", ""),
                .member = get_str(get, "SANDBOXD_MEMBER", ""),
                .member_address = get_str(get, "SANDBOXD_MEMBER_ADDRESS", ""),
        };
        const char *policy = get_str(get, "SANDBOXD_IMPORT_POLICY", "off");
        const char *keys = get_str(get, "SANDBOXD_API_KEYS", "off");
        const char *bad;

        for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
                uint64_t v = knobs[i].def;
                char *field = (char *) &c + knobs[i].offset;

                if (parse_u64(get, knobs[i].name, knobs[i].min, knobs[i].max, &v) < 0) {
                        *reterr_name = knobs[i].name;
                        return -EINVAL;
                }
                if (knobs[i].is_unsigned)
                        *(unsigned *) (void *) field = (unsigned) v;
                else if (knobs[i].is_size_t)
                        *(size_t *) (void *) field = (size_t) v;
                else
                        *(uint64_t *) (void *) field = v;
        }

        if (c.pool_max != CONFIG_AUTO && c.pool_max < c.pool_target) {
                *reterr_name = "SANDBOXD_POOL_MAX";
                return -EINVAL;
        }

        if (strcmp(policy, "off") != 0 && strcmp(policy, "curated") != 0) {
                *reterr_name = "SANDBOXD_IMPORT_POLICY";
                return -EINVAL;
        }
        c.import_policy_curated = strcmp(policy, "curated") == 0;
        /* Anything but the two words is refused: a typo must not leave the service open. */
        if (strcmp(keys, "off") != 0 && strcmp(keys, "on") != 0) {
                *reterr_name = "SANDBOXD_API_KEYS";
                return -EINVAL;
        }
        c.api_keys = strcmp(keys, "on") == 0;
        bad = words_invalid(&c);
        if (bad) {
                *reterr_name = bad;
                return -EINVAL;
        }

        *ret = c;
        return 0;
}

unsigned config_pool_max_for_host(uint64_t mem_total_bytes, unsigned cpus, unsigned pool_target) {
        uint64_t by_memory = mem_total_bytes / 2 / POOL_MACHINE_BUDGET_BYTES;
        uint64_t by_cpus = (uint64_t) (cpus > 0 ? cpus : 1) * POOL_MACHINES_PER_CPU;
        uint64_t n = by_memory < by_cpus ? by_memory : by_cpus;

        if (n > POOL_MAX_LIMIT)
                n = POOL_MAX_LIMIT;
        if (n < pool_target)
                n = pool_target;
        return n > 0 ? (unsigned) n : 1;
}

/* MemTotal of /proc/meminfo in bytes, or 0 when it cannot be read. */
static uint64_t mem_total(void) {
        char line[256];
        uint64_t kib = 0;
        FILE *f = fopen("/proc/meminfo", "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "MemTotal: %" SCNu64 " kB", &kib) == 1)
                        break;
        (void) fclose(f);
        return kib * 1024;
}

unsigned config_max_inflight_for_host(uint64_t mem_total_bytes, size_t max_body_bytes) {
        uint64_t n = mem_total_bytes / 4 / ((uint64_t) max_body_bytes + INFLIGHT_OVERHEAD_BYTES);

        return n < INFLIGHT_MIN ? INFLIGHT_MIN : n > INFLIGHT_MAX ? INFLIGHT_MAX : (unsigned) n;
}

void config_host_apply(Config *c) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t mem = mem_total();

        if (c->pool_max == CONFIG_AUTO) {

                /* Unreadable (no /proc): the old fixed default, which any host runs. */
                c->pool_max = mem > 0 ? config_pool_max_for_host(mem, cpus > 0 ? (unsigned) cpus : 1, c->pool_target)
                                      : (c->pool_target > 8 ? c->pool_target : 8);
        }
        /* Each waiting claim holds a worker: twice what runs at once waits about two executions. */
        if (c->queue_max == CONFIG_AUTO)
                c->queue_max = 2 * c->pool_max > QUEUE_MAX_MIN ? 2 * c->pool_max : QUEUE_MAX_MIN;
        /* Unreadable memory: the least. */
        if (c->max_inflight == CONFIG_AUTO)
                c->max_inflight = config_max_inflight_for_host(mem, c->max_body_bytes);
        /* No key takes every machine. */
        if (c->key_max_concurrent == CONFIG_AUTO)
                c->key_max_concurrent = c->pool_max / 2 > 0 ? c->pool_max / 2 : 1;
}
