/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/config.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

/* The fake environment: NULL-terminated {name, value} pairs that fake_get() looks up. */
typedef struct Var {
        const char *name, *value;
} Var;

static const Var *fake_env;

static const char *fake_get(const char *name) {
        for (const Var *v = fake_env; v && v->name; v++)
                if (strcmp(v->name, name) == 0)
                        return v->value;
        return NULL;
}

static int parse(const Var *env, Config *ret, const char **reterr_name) {
        fake_env = env;
        return config_parse(fake_get, ret, reterr_name);
}

static const Config defaults = {
        .workers = 4,
        .db_path = "/var/lib/sandboxd/db/sandboxd.db",
        .user = "sandboxd",
        .max_body_bytes = 16ULL << 20,
        .memory_max = 512ULL << 20,
        .tasks_max = 128,
        .cpu_quota_percent = 100,
        .workspace_bytes = 128ULL << 20,
        .tmp_bytes = 64ULL << 20,
        .output_cap_bytes = 1ULL << 20,
        .return_cap_bytes = 8ULL << 20,
        .nofile = 1024,
        .executions_per_machine = 64,
        .lib_dir = SANDBOXD_DEFAULT_LIB_DIR,
        .slice = "sandbox.slice",
        .sessions_max = 16,
        .session_disk_bytes = 1ULL << 30,
        .session_retain_s = 7 * 86400,
        .session_timeout_max_s = 900,
        .session_upload_bytes = 128ULL << 20,
        .session_dir = "/var/lib/sandboxd/sessions",
        .disk_reserve_bytes = 1ULL << 30,
        .record_retain_days = 30,
};

/* Field by field, so a failure says which one differs. */
static void check_config(const Config *got, const Config *want, const char *what) {
#define FIELD(f) tap_is_int((long long) got->f, (long long) want->f, "%s: " #f, what)
#define STR(f) tap_is_str(got->f, want->f, "%s: " #f, what)
        FIELD(workers);
        STR(db_path);
        STR(user);
        FIELD(max_body_bytes);
        FIELD(memory_max);
        FIELD(tasks_max);
        FIELD(cpu_quota_percent);
        FIELD(workspace_bytes);
        FIELD(tmp_bytes);
        FIELD(output_cap_bytes);
        FIELD(return_cap_bytes);
        FIELD(nofile);
        FIELD(executions_per_machine);
        STR(lib_dir);
        STR(slice);
        FIELD(sessions_max);
        FIELD(session_disk_bytes);
        FIELD(session_retain_s);
        FIELD(session_timeout_max_s);
        FIELD(session_upload_bytes);
        STR(session_dir);
        FIELD(disk_reserve_bytes);
        FIELD(record_retain_days);
#undef FIELD
#undef STR
}

static void test_defaults(void) {
        static const Var unset[] = {{NULL, NULL}};
        static const Var empty[] = {
                {"SANDBOXD_WORKERS", ""},
                {"SANDBOXD_DB", ""},
                {"SANDBOXD_USER", ""},
                {"SANDBOXD_MAX_BODY_BYTES", ""},
                {"SANDBOXD_MEMORY_MAX", ""},
                {"SANDBOXD_TASKS_MAX", ""},
                {"SANDBOXD_CPU_QUOTA_PERCENT", ""},
                {"SANDBOXD_WORKSPACE_BYTES", ""},
                {"SANDBOXD_TMP_BYTES", ""},
                {"SANDBOXD_OUTPUT_CAP_BYTES", ""},
                {"SANDBOXD_RETURN_CAP_BYTES", ""},
                {"SANDBOXD_NOFILE", ""},
                {"SANDBOXD_LIB_DIR", ""},
                {"SANDBOXD_SLICE", ""},
                {"SANDBOXD_SESSIONS_MAX", ""},
                {"SANDBOXD_SESSION_DISK_BYTES", ""},
                {"SANDBOXD_SESSION_DIR", ""},
                {NULL, NULL},
        };
        Config c = {};
        const char *name = "untouched";

        tap_is_int(parse(unset, &c, &name), 0, "nothing set: parses");
        tap_is_str(name, "untouched", "nothing set: no error name");
        check_config(&c, &defaults, "nothing set");

        c = (Config){};
        tap_is_int(parse(empty, &c, &name), 0, "all set to \"\": parses");
        check_config(&c, &defaults, "all empty");
}

static void test_override(void) {
        static const Var env[] = {
                {"SANDBOXD_WORKERS", "16"},
                {"SANDBOXD_DB", "/tmp/x.db"},
                {"SANDBOXD_USER", "other"},
                {"SANDBOXD_MAX_BODY_BYTES", "2048"},
                {"SANDBOXD_MEMORY_MAX", "1073741824"},
                {"SANDBOXD_TASKS_MAX", "64"},
                {"SANDBOXD_CPU_QUOTA_PERCENT", "250"},
                {"SANDBOXD_WORKSPACE_BYTES", "1048576"},
                {"SANDBOXD_TMP_BYTES", "2097152"},
                {"SANDBOXD_OUTPUT_CAP_BYTES", "4096"},
                {"SANDBOXD_RETURN_CAP_BYTES", "8192"},
                {"SANDBOXD_NOFILE", "256"},
                {"SANDBOXD_EXECUTIONS_PER_MACHINE", "1"},
                {"SANDBOXD_LIB_DIR", "/usr/lib/sandboxd"},
                {"SANDBOXD_SLICE", "other.slice"},
                {"SANDBOXD_SESSIONS_MAX", "3"},
                {"SANDBOXD_SESSION_DISK_BYTES", "33554432"},
                {"SANDBOXD_SESSION_RETAIN_S", "120"},
                {"SANDBOXD_SESSION_TIMEOUT_MAX_S", "9"},
                {"SANDBOXD_SESSION_UPLOAD_BYTES", "4096"},
                {"SANDBOXD_SESSION_DIR", "/srv/sandboxd-sessions"},
                {"SANDBOXD_DISK_RESERVE_BYTES", "0"},
                {"SANDBOXD_RECORD_RETAIN_DAYS", "1"},
                {"SANDBOXD_UNKNOWN", "ignored"},
                {NULL, NULL},
        };
        static const Config want = {
                .workers = 16,
                .db_path = "/tmp/x.db",
                .user = "other",
                .max_body_bytes = 2048,
                .memory_max = 1ULL << 30,
                .tasks_max = 64,
                .cpu_quota_percent = 250,
                .workspace_bytes = 1ULL << 20,
                .tmp_bytes = 2ULL << 20,
                .output_cap_bytes = 4096,
                .return_cap_bytes = 8192,
                .nofile = 256,
                .executions_per_machine = 1,
                .lib_dir = "/usr/lib/sandboxd",
                .slice = "other.slice",
                .sessions_max = 3,
                .session_disk_bytes = 32ULL << 20,
                .session_retain_s = 120,
                .session_timeout_max_s = 9,
                .session_upload_bytes = 4096,
                .session_dir = "/srv/sandboxd-sessions",
                .disk_reserve_bytes = 0,
                .record_retain_days = 1,
        };
        Config c = {};
        const char *name = NULL;

        tap_is_int(parse(env, &c, &name), 0, "every variable set: parses");
        check_config(&c, &want, "override");
}

/* One variable set to one value: 0 and the parsed value, or -EINVAL naming that variable. */
typedef struct OneCase {
        const char *name, *value;
        int expected;
        unsigned long long parsed; /* when expected == 0 */
} OneCase;

static const OneCase one_cases[] = {
        /* range boundaries of each knob */
        {"SANDBOXD_RECORD_RETAIN_DAYS", "0", -EINVAL, 0},
        {"SANDBOXD_RECORD_RETAIN_DAYS", "3650", 0, 3650},
        {"SANDBOXD_RECORD_RETAIN_DAYS", "3651", -EINVAL, 0},
        {"SANDBOXD_DISK_RESERVE_BYTES", "-1", -EINVAL, 0},
        {"SANDBOXD_DISK_RESERVE_BYTES", "1099511627776", 0, 1099511627776ULL},
        {"SANDBOXD_WORKERS", "1", 0, 1},
        {"SANDBOXD_WORKERS", "256", 0, 256},
        {"SANDBOXD_WORKERS", "0", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "257", -EINVAL, 0},
        {"SANDBOXD_MAX_BODY_BYTES", "1024", 0, 1024},
        {"SANDBOXD_MAX_BODY_BYTES", "1023", -EINVAL, 0},
        {"SANDBOXD_MAX_BODY_BYTES", "1073741824", 0, 1ULL << 30},
        {"SANDBOXD_MAX_BODY_BYTES", "1073741825", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "16777216", 0, 16ULL << 20},
        {"SANDBOXD_MEMORY_MAX", "16777215", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "18446744073709551615", 0, UINT64_MAX},
        {"SANDBOXD_MEMORY_MAX", "18446744073709551616", -EINVAL, 0},
        {"SANDBOXD_TASKS_MAX", "8", 0, 8},
        {"SANDBOXD_TASKS_MAX", "7", -EINVAL, 0},
        {"SANDBOXD_TASKS_MAX", "1048577", -EINVAL, 0},
        {"SANDBOXD_CPU_QUOTA_PERCENT", "100000", 0, 100000},
        {"SANDBOXD_CPU_QUOTA_PERCENT", "0", -EINVAL, 0},
        {"SANDBOXD_CPU_QUOTA_PERCENT", "100001", -EINVAL, 0},
        {"SANDBOXD_WORKSPACE_BYTES", "1048575", -EINVAL, 0},
        {"SANDBOXD_WORKSPACE_BYTES", "1099511627776", 0, 1ULL << 40},
        {"SANDBOXD_WORKSPACE_BYTES", "1099511627777", -EINVAL, 0},
        {"SANDBOXD_TMP_BYTES", "1048575", -EINVAL, 0},
        {"SANDBOXD_TMP_BYTES", "1099511627777", -EINVAL, 0},
        {"SANDBOXD_OUTPUT_CAP_BYTES", "1023", -EINVAL, 0},
        {"SANDBOXD_OUTPUT_CAP_BYTES", "268435457", -EINVAL, 0},
        {"SANDBOXD_RETURN_CAP_BYTES", "268435456", 0, 256ULL << 20},
        {"SANDBOXD_RETURN_CAP_BYTES", "1023", -EINVAL, 0},
        {"SANDBOXD_NOFILE", "16", 0, 16},
        {"SANDBOXD_NOFILE", "15", -EINVAL, 0},
        {"SANDBOXD_NOFILE", "1048577", -EINVAL, 0},
        {"SANDBOXD_EXECUTIONS_PER_MACHINE", "1", 0, 1},
        {"SANDBOXD_EXECUTIONS_PER_MACHINE", "100000", 0, 100000},
        {"SANDBOXD_EXECUTIONS_PER_MACHINE", "0", -EINVAL, 0},
        {"SANDBOXD_EXECUTIONS_PER_MACHINE", "100001", -EINVAL, 0},
        /* a value that would wrap an unsigned field must not slip through as a small number */
        {"SANDBOXD_WORKERS", "4294967300", -EINVAL, 0},
        {"SANDBOXD_NOFILE", "4294968320", -EINVAL, 0},
        /* malformed */
        {"SANDBOXD_WORKERS", "four", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "4x", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "4 ", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "4.0", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "0x10", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "-1", -EINVAL, 0},
        {"SANDBOXD_WORKERS", "-0", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "-1", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "512M", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "1e9", -EINVAL, 0},
        {"SANDBOXD_MEMORY_MAX", "99999999999999999999999", -EINVAL, 0},
        {"SANDBOXD_TASKS_MAX", "infinity", -EINVAL, 0},
        {"SANDBOXD_NOFILE", " ", -EINVAL, 0},
};

/* Reads back the field a variable sets. */
static unsigned long long field_of(const Config *c, const char *name) {
        static const struct {
                const char *name;
                size_t offset, size;
        } fields[] = {
                {"SANDBOXD_WORKERS", offsetof(Config, workers), sizeof(unsigned)},
                {"SANDBOXD_MAX_BODY_BYTES", offsetof(Config, max_body_bytes), sizeof(size_t)},
                {"SANDBOXD_MEMORY_MAX", offsetof(Config, memory_max), sizeof(uint64_t)},
                {"SANDBOXD_TASKS_MAX", offsetof(Config, tasks_max), sizeof(uint64_t)},
                {"SANDBOXD_CPU_QUOTA_PERCENT", offsetof(Config, cpu_quota_percent), sizeof(unsigned)},
                {"SANDBOXD_WORKSPACE_BYTES", offsetof(Config, workspace_bytes), sizeof(uint64_t)},
                {"SANDBOXD_TMP_BYTES", offsetof(Config, tmp_bytes), sizeof(uint64_t)},
                {"SANDBOXD_OUTPUT_CAP_BYTES", offsetof(Config, output_cap_bytes), sizeof(size_t)},
                {"SANDBOXD_RETURN_CAP_BYTES", offsetof(Config, return_cap_bytes), sizeof(size_t)},
                {"SANDBOXD_NOFILE", offsetof(Config, nofile), sizeof(unsigned)},
                {"SANDBOXD_EXECUTIONS_PER_MACHINE", offsetof(Config, executions_per_machine), sizeof(unsigned)},
                {"SANDBOXD_DISK_RESERVE_BYTES", offsetof(Config, disk_reserve_bytes), sizeof(uint64_t)},
                {"SANDBOXD_RECORD_RETAIN_DAYS", offsetof(Config, record_retain_days), sizeof(unsigned)},
        };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *p = (const char *) c + fields[i].offset;

                if (strcmp(fields[i].name, name) != 0)
                        continue;
                if (fields[i].size == sizeof(unsigned))
                        return *(const unsigned *) (const void *) p;
                return *(const uint64_t *) (const void *) p;
        }
        abort();
}

static void test_one(void) {
        for (size_t i = 0; i < ELEMENTSOF(one_cases); i++) {
                const OneCase *c = &one_cases[i];
                const Var env[] = {{c->name, c->value}, {NULL, NULL}};
                Config cfg = {.workers = 12345};
                const char *name = NULL;
                int r = parse(env, &cfg, &name);

                if (c->expected == 0)
                        tap_ok(r == 0 && field_of(&cfg, c->name) == c->parsed, "%s='%s' gives %llu", c->name, c->value, c->parsed);
                else
                        tap_ok(r == c->expected && name && strcmp(name, c->name) == 0 && cfg.workers == 12345,
                               "%s='%s' is rejected, naming the variable, *ret untouched", c->name, c->value);
        }
}

/* strtoull() skips leading white space before the sign: " -1" must not wrap to 2^64 - 1. */
static void test_negative_after_space(void) {
        static const Var env[] = {{"SANDBOXD_MEMORY_MAX", " -1"}, {NULL, NULL}};
        Config cfg = {};
        const char *name = NULL;
        int r = parse(env, &cfg, &name);

        tap_ok(r == -EINVAL && name && strcmp(name, "SANDBOXD_MEMORY_MAX") == 0, "SANDBOXD_MEMORY_MAX=' -1' is rejected");
        if (r == 0)
                tap_diag("  memory_max parsed as %llu", (unsigned long long) cfg.memory_max);
}

static void test_lib_dir(void) {
        static const struct {
                const char *value;
                int expected;
        } cases[] = {
                {"/usr/lib/sandboxd", 0},
                {"/usr/local/lib/sandboxd", 0},
                {"/usr/x", 0},
                {"/opt/sandboxd", -EINVAL},
                {"/var/lib/sandboxd", -EINVAL},
                {"/usr", -EINVAL},
                {"/usrlocal/lib", -EINVAL},
                {"usr/lib/sandboxd", -EINVAL},
                {"lib/sandboxd", -EINVAL},
                {"/", -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Var env[] = {{"SANDBOXD_LIB_DIR", cases[i].value}, {NULL, NULL}};
                Config cfg = {};
                const char *name = NULL;
                int r = parse(env, &cfg, &name);

                if (cases[i].expected == 0)
                        tap_ok(r == 0 && cfg.lib_dir && strcmp(cfg.lib_dir, cases[i].value) == 0, "SANDBOXD_LIB_DIR='%s' accepted", cases[i].value);
                else
                        tap_ok(r == -EINVAL && name && strcmp(name, "SANDBOXD_LIB_DIR") == 0 && cfg.lib_dir == NULL,
                               "SANDBOXD_LIB_DIR='%s' rejected, naming the variable", cases[i].value);
        }
}

/* A string prefix is not enough: ".." climbs back out of /usr. */
static void test_lib_dir_dotdot(void) {
        static const Var env[] = {{"SANDBOXD_LIB_DIR", "/usr/../opt/sandboxd"}, {NULL, NULL}};
        Config cfg = {};
        const char *name = NULL;
        int r = parse(env, &cfg, &name);

        tap_ok(r == -EINVAL && name && strcmp(name, "SANDBOXD_LIB_DIR") == 0, "SANDBOXD_LIB_DIR='/usr/../opt/sandboxd' (outside /usr) is rejected");
}

/* A bad variable among good ones is still found and named. */
static void test_bad_among_good(void) {
        static const Var env[] = {{"SANDBOXD_WORKERS", "8"}, {"SANDBOXD_TMP_BYTES", "64MiB"}, {"SANDBOXD_NOFILE", "2048"}, {NULL, NULL}};
        const char *name = NULL;
        Config cfg = {};

        tap_ok(parse(env, &cfg, &name) == -EINVAL && name && strcmp(name, "SANDBOXD_TMP_BYTES") == 0,
               "one bad variable among good ones is named");
}

/* The runtime image's knobs: plain words (they travel on a command line and into a path), the
 * import policy one of two, the preload list empty when set empty. */
static void test_runtime_knobs(void) {
        static const struct {
                const char *name, *value;
                int expected;
        } cases[] = {
                {"SANDBOXD_RUNTIME_IMAGE", "my-runtime_2", 0},
                {"SANDBOXD_RUNTIME_IMAGE", "../etc", -EINVAL},
                {"SANDBOXD_RUNTIME_IMAGE", "a/b", -EINVAL},
                {"SANDBOXD_RUNTIME_IMAGE", "-x", -EINVAL},
                {"SANDBOXD_PRELOAD", "numpy,pandas,matplotlib.pyplot", 0},
                {"SANDBOXD_PRELOAD", "numpy pandas", -EINVAL},
                {"SANDBOXD_PRELOAD", "os;rm", -EINVAL},
                {"SANDBOXD_OPENBLAS_CORETYPE", "Haswell", 0},
                {"SANDBOXD_OPENBLAS_CORETYPE", "Has well", -EINVAL},
                {"SANDBOXD_OPENBLAS_CORETYPE", "--x=y", -EINVAL},
                {"SANDBOXD_IMPORT_POLICY", "curated", 0},
                {"SANDBOXD_IMPORT_POLICY", "off", 0},
                {"SANDBOXD_IMPORT_POLICY", "on", -EINVAL},
        };
        static const Var unset[] = {{NULL, NULL}}, no_preload[] = {{"SANDBOXD_PRELOAD", ""}, {NULL, NULL}},
                         curated[] = {{"SANDBOXD_IMPORT_POLICY", "curated"}, {NULL, NULL}};
        Config cfg = {};
        const char *name = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Var env[] = {{cases[i].name, cases[i].value}, {NULL, NULL}};
                int r;

                cfg = (Config){};
                name = NULL;
                r = parse(env, &cfg, &name);
                if (cases[i].expected == 0)
                        tap_ok(r == 0, "%s='%s' accepted", cases[i].name, cases[i].value);
                else
                        tap_ok(r == -EINVAL && name && strcmp(name, cases[i].name) == 0, "%s='%s' rejected, naming it", cases[i].name,
                               cases[i].value);
        }
        cfg = (Config){};
        tap_ok(parse(unset, &cfg, &name) == 0 && strcmp(cfg.runtime_image, "sandboxd-runtime") == 0 &&
                       strcmp(cfg.preload, "numpy,pandas") == 0 && strcmp(cfg.openblas_coretype, "") == 0 && !cfg.import_policy_curated &&
                       strcmp(cfg.runtime_state_dir, "/var/lib/sandboxd/runtime") == 0,
               "runtime knobs: defaults");
        cfg = (Config){};
        tap_ok(parse(no_preload, &cfg, &name) == 0 && strcmp(cfg.preload, "") == 0, "SANDBOXD_PRELOAD='': nothing preloaded");
        cfg = (Config){};
        tap_ok(parse(curated, &cfg, &name) == 0 && cfg.import_policy_curated, "SANDBOXD_IMPORT_POLICY=curated: on");
}

/* API keys: off unless the one knob says on; any other word is refused, so that a typo cannot
 * leave the service open while its administrator believes it closed. */
static void test_api_keys(void) {
        static const struct {
                const char *value;
                int expected;
                bool on;
        } cases[] = {
                {"on", 0, true},
                {"off", 0, false},
                {"", 0, false},
                {"yes", -EINVAL, false},
                {"ON", -EINVAL, false},
                {"1", -EINVAL, false},
        };
        static const Var unset[] = {{NULL, NULL}};
        Config cfg = {.api_keys = true};
        const char *name = NULL;

        tap_ok(parse(unset, &cfg, &name) == 0 && !cfg.api_keys, "SANDBOXD_API_KEYS unset: off");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Var env[] = {{"SANDBOXD_API_KEYS", cases[i].value}, {NULL, NULL}};
                int r;

                cfg = (Config){.api_keys = !cases[i].on};
                name = NULL;
                r = parse(env, &cfg, &name);
                if (cases[i].expected == 0)
                        tap_ok(r == 0 && cfg.api_keys == cases[i].on, "SANDBOXD_API_KEYS='%s': %s", cases[i].value, cases[i].on ? "on" : "off");
                else
                        tap_ok(r == -EINVAL && name && strcmp(name, "SANDBOXD_API_KEYS") == 0, "SANDBOXD_API_KEYS='%s' rejected, naming it",
                               cases[i].value);
        }
}

/* The sessions' disk directory becomes a mount unit's What=: absolute and plain. */
static void test_session_dir(void) {
        static const char *const bad[] = {"relative/dir", "/var/lib/../etc", "/var/lib/with space", "/var/lib/a:b", "/"};

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const Var env[] = {{"SANDBOXD_SESSION_DIR", bad[i]}, {NULL, NULL}};
                Config cfg = {};
                const char *name = NULL;
                int r = parse(env, &cfg, &name);

                tap_ok(r == -EINVAL && name && strcmp(name, "SANDBOXD_SESSION_DIR") == 0, "SANDBOXD_SESSION_DIR='%s' rejected", bad[i]);
        }
}

/* The pool's most follows the host: half its memory in machine budgets, bounded by its CPUs. */
static void test_cluster(void) {
        static const struct {
                const char *etcd, *member, *address, *bad; /* bad: the name refused, NULL for none */
        } cases[] = {
                {"", "", "", NULL},
                {"http://10.0.0.1:2379", "m1", "10.0.0.1:8080", NULL},
                {"http://e1:2379,http://e2:2379,http://e3:2379", "host7", "h7.example:8080", NULL},
                {"http://10.0.0.1:2379", "", "10.0.0.1:8080", "SANDBOXD_MEMBER"},
                {"", "m1", "", "SANDBOXD_MEMBER_ADDRESS"},
                {"", "m1", "10.0.0.1:8080", "SANDBOXD_ETCD"},
                {"http://10.0.0.1:2379", "M1", "10.0.0.1:8080", "SANDBOXD_MEMBER"},
                {"http://10.0.0.1:2379", "m-1", "10.0.0.1:8080", "SANDBOXD_MEMBER"},
                {"http://10.0.0.1:2379", "abcdefghijklmnopq", "10.0.0.1:8080", "SANDBOXD_MEMBER"},
                {"http://10.0.0.1:2379", "m1", "10.0.0.1", "SANDBOXD_MEMBER_ADDRESS"},
                {"http://10.0.0.1:2379", "m1", "10.0.0.1:80 80", "SANDBOXD_MEMBER_ADDRESS"},
                {"https://10.0.0.1:2379", "m1", "10.0.0.1:8080", NULL},
                {"ftp://10.0.0.1:2379", "m1", "10.0.0.1:8080", "SANDBOXD_ETCD"},
                {"https://", "m1", "10.0.0.1:8080", "SANDBOXD_ETCD"},
                {"http://10.0.0.1:2379,", "m1", "10.0.0.1:8080", "SANDBOXD_ETCD"},
                {"http://a?b", "m1", "10.0.0.1:8080", "SANDBOXD_ETCD"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const Var env[] = {{"SANDBOXD_ETCD", cases[i].etcd},
                                   {"SANDBOXD_MEMBER", cases[i].member},
                                   {"SANDBOXD_MEMBER_ADDRESS", cases[i].address},
                                   {NULL, NULL}};
                const char *name = NULL;
                Config c;
                int r = parse(env, &c, &name);

                if (cases[i].bad)
                        tap_ok(r == -EINVAL && name && strcmp(name, cases[i].bad) == 0, "etcd '%s', member '%s', address '%s': %s refused",
                               cases[i].etcd, cases[i].member, cases[i].address, cases[i].bad);
                else
                        tap_ok(r == 0 && strcmp(c.member, cases[i].member) == 0, "etcd '%s', member '%s', address '%s' taken",
                               cases[i].etcd, cases[i].member, cases[i].address);
        }
}

static void test_pool_max(void) {
        static const struct {
                uint64_t mem;
                unsigned cpus, target, want;
        } cases[] = {
                {24ULL << 30, 2, 3, 128}, /* 2 vCPUs, 24 GiB: 64 sleeping snippets leave room for a 65th */
                {1ULL << 30, 1, 3, 8},    /* 1 GiB: half in 64 MiB budgets */
                {256ULL << 20, 1, 3, 3},  /* tiny: never below the target */
                {256ULL << 20, 1, 0, 2},
                {0, 4, 0, 1},              /* nothing known: at least one */
                {1ULL << 40, 64, 3, 1024}, /* a large host: the hard limit */
                {64ULL << 30, 1, 3, 64},   /* many GiB, one CPU: its share */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_int(config_pool_max_for_host(cases[i].mem, cases[i].cpus, cases[i].target), cases[i].want, "pool max for %llu MiB, %u CPUs",
                           (unsigned long long) (cases[i].mem >> 20), cases[i].cpus);
}

/* Unset, the pool's most and the queue's bound wait for the host; set, they are as set. */
static void test_pool_auto(void) {
        static const Var unset[] = {{NULL, NULL}};
        static const Var set[] = {{"SANDBOXD_POOL_MAX", "5"}, {"SANDBOXD_QUEUE_MAX", "0"}, {NULL, NULL}};
        Config c = {};
        const char *name = NULL;

        tap_is_int(parse(unset, &c, &name), 0, "unset: parses");
        tap_ok(c.pool_max == CONFIG_AUTO && c.queue_max == CONFIG_AUTO, "unset: left to the host");
        config_host_apply(&c);
        tap_ok(c.pool_max >= c.pool_target && c.pool_max <= POOL_MAX_LIMIT && c.queue_max >= 2 * c.pool_max && c.queue_max >= QUEUE_MAX_MIN, "the host decides: %u, %u",
               c.pool_max, c.queue_max);
        tap_is_int(parse(set, &c, &name), 0, "set: parses");
        config_host_apply(&c);
        tap_ok(c.pool_max == 5 && c.queue_max == 0, "set: as set");
}

/* What is left unset is sized from the host; what is set stays as set. */
static void test_inflight_auto(void) {
        static const Var unset[] = {{NULL, NULL}};
        static const Var set[] = {{"SANDBOXD_MAX_INFLIGHT", "100"}, {"SANDBOXD_KEY_MAX_CONCURRENT", "3"}, {"SANDBOXD_POOL_MAX", "10"}, {NULL, NULL}};
        Config c = {};
        const char *name = NULL;

        /* A quarter of 24 GiB over (16 MiB of body + 1 MiB): 361. */
        tap_is_int(config_max_inflight_for_host(24ULL << 30, 16U << 20), 361, "24 GiB holds 361 requests of the largest body in a quarter of it");
        tap_is_int(config_max_inflight_for_host(512ULL << 20, 16U << 20), 64, "a small host still takes 64 in flight");
        tap_is_int(config_max_inflight_for_host(0, 16U << 20), 64, "memory unknown: 64");
        tap_is_int(config_max_inflight_for_host(4ULL << 40, 16U << 20), 4096, "a huge host is capped at 4096");
        tap_is_int(config_max_inflight_for_host(24ULL << 30, 1024), 4096, "small bodies: more, up to the cap");

        tap_is_int(parse(unset, &c, &name), 0, "inflight unset: parses");
        tap_ok(c.max_inflight == CONFIG_AUTO && c.key_max_concurrent == CONFIG_AUTO, "inflight unset: left to the host");
        config_host_apply(&c);
        tap_ok(c.max_inflight >= 64 && c.max_inflight <= 4096, "the host decides the requests in flight: %u", c.max_inflight);
        tap_is_int(c.key_max_concurrent, c.pool_max / 2, "a key's default max-concurrent is half the pool's most");
        tap_is_int(parse(set, &c, &name), 0, "inflight set: parses");
        config_host_apply(&c);
        tap_ok(c.max_inflight == 100 && c.key_max_concurrent == 3, "set: as set");
}

int main(void) {
        test_cluster();
        test_inflight_auto();
        test_pool_max();
        test_pool_auto();
        test_session_dir();
        test_runtime_knobs();
        test_api_keys();
        test_defaults();
        test_override();
        test_one();
        test_negative_after_space();
        test_lib_dir();
        test_lib_dir_dotdot();
        test_bad_among_good();
        return tap_done();
}
