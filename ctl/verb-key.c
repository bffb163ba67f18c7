/* SPDX-License-Identifier: MIT */
/* sandboxctl key add|list|revoke: the API keys (SANDBOXD_API_KEYS=on). The only verb that does not
 * go through the API: the keys are what the API is guarded by, so they live in sqlite, and this
 * writes there directly, as the database's owner (the services' user), so that nothing it creates
 * (a -wal or -shm file) is root's. The database is the one the services use: SANDBOXD_DB from the
 * environment, else from /etc/sandboxd/sandboxd.conf, else the default. A token is printed once,
 * when its key is made; only its SHA-256 is kept.
 *
 * On a cluster's member (SANDBOXD_ETCD), add and revoke write the key to etcd instead
 * (cluster/key-record.h), whence every member's sandboxd-member puts it into its own sqlite within
 * milliseconds; list reads this member's copy. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cluster/etcd.h"
#include "cluster/key-record.h"
#include "ctl/ctl.h"
#include "ctl/settings.h"
#include "db/db.h"
#include "db/keys.h"
#include "db/session-revoke.h"
#include "lib/api-key.h"
#include "lib/config.h"
#include "lib/egress.h"
#include "lib/macro.h"
#include "lib/time-util.h"

DEFINE_JSON_CLEANUP

#define LIMIT_MAX 1000000000LL
/* Bytes: up to a PiB. */
#define BYTES_MAX (1LL << 50)

static int read_settings(Config *ret) {
        const char *bad = NULL;

        if (config_parse(ctl_setting_get, ret, &bad) < 0)
                return ctl_fail("invalid setting %s='%s' (in the environment or %s)", bad, ctl_setting_get(bad), ctl_settings_file());
        return 0;
}

/* Becomes the owner of the database's directory (the services' user) when run as root. */
static int become_owner(const char *db_path) {
        cleanup_free char *copy = strdup(db_path);
        struct stat st;

        if (!copy)
                return ctl_fail("out of memory");
        /* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): copy is cleanup_free, unseen by clang-analyzer 14 */
        if (stat(dirname(copy), &st) < 0 || access(db_path, F_OK) < 0)
                return ctl_fail("no database at '%s': sandboxd makes it when it first starts (make run)", db_path);
        if (geteuid() != 0 || st.st_uid == 0)
                return 0;
        if (setgroups(0, NULL) < 0 || setresgid(st.st_gid, st.st_gid, st.st_gid) < 0 || setresuid(st.st_uid, st.st_uid, st.st_uid) < 0)
                return ctl_fail("cannot become the database's owner (uid %u): %m", (unsigned) st.st_uid);
        return 0;
}

static int open_db(sqlite3 **ret) {
        Config cfg;
        int r;

        if (read_settings(&cfg) != 0 || become_owner(cfg.db_path) != 0)
                return EXIT_FAILURE;
        r = db_open(cfg.db_path, ret);
        if (r < 0)
                return ctl_fail("cannot open the database '%s': %s", cfg.db_path, db_errmsg(NULL));
        return 0;
}

static int parse_limit_max(const char *option, const char *s, long long max, int64_t *ret) {
        char *end = NULL;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || !end || *end || s[0] < '1' || s[0] > '9' || v < 1 || v > max)
                return ctl_fail("--%s must be a whole number from 1 to %lld (leave it out for no limit), not '%s'", option, max, s);
        *ret = v;
        return 0;
}

/* A comma-separated list of image names (as sandboxd-image takes them) into ret, whole. */
static int parse_images(const char *s, char ret[API_KEY_IMAGES_MAX + 1]) {
        size_t n = strlen(s);

        if (n == 0 || n > API_KEY_IMAGES_MAX || s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,"))
                return ctl_fail("--images must be image names separated by commas, %d characters at most, not '%s'", API_KEY_IMAGES_MAX, s);
        for (const char *p = s; *p;) {
                size_t len = strcspn(p, ",");

                if (len > 64 || !((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= '0' && p[0] <= '9')) ||
                    strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") < len)
                        return ctl_fail("'%.*s' is not an image name: a letter or digit, then letters, digits, '.', '_' or '-'; 64 at most",
                                        (int) len, p);
                p += len + (p[len] == ',');
        }
        memcpy(ret, s, n + 1);
        return 0;
}

/* What the key's code may reach, within the operator's egress.allow: "none", or entries separated
 * by commas (lib/egress.h), kept as they print (lower case). */
static int parse_egress(const char *s, char ret[API_KEY_EGRESS_MAX + 1]) {
        EgressList l = {};
        size_t bad = 0, n = 0;
        int r;

        if (strcmp(s, API_KEY_EGRESS_NONE) == 0) {
                memcpy(ret, s, sizeof(API_KEY_EGRESS_NONE));
                return 0;
        }
        r = egress_list_parse_csv(s, &l, &bad);
        if (r == -EINVAL) {
                const char *p = s;

                for (size_t i = 0; i < bad; i++)
                        p += strcspn(p, ",") + 1;
                return ctl_fail("--egress: '%.*s' is not a host name or *.suffix with an optional :port", (int) strcspn(p, ","), p);
        }
        if (r < 0)
                return ctl_fail("--egress: %s", r == -E2BIG ? "too many entries" : "out of memory");
        for (size_t i = 0; i < l.n && r >= 0; i++) {
                char e[EGRESS_ENTRY_MAX + 1];

                r = egress_rule_format(&l.rules[i], e, sizeof(e));
                if (r >= 0 && n + strlen(e) + 1 > API_KEY_EGRESS_MAX)
                        r = -E2BIG;
                if (r >= 0)
                        n += (size_t) sprintf(ret + n, "%s%s", i ? "," : "", e);
        }
        egress_list_done(&l);
        if (r < 0)
                return ctl_fail("--egress must be %d characters at most", API_KEY_EGRESS_MAX);
        return 0;
}

static int parse_limit(const char *option, const char *s, int64_t *ret) {
        return parse_limit_max(option, s, LIMIT_MAX, ret);
}

static void help_add(FILE *f) {
        (void) fputs("Usage: sandboxctl key add NAME [--max-concurrent N] [--executions-per-minute N] [--cpu-seconds-per-day N]\n"
                     "                          [--max-sessions N] [--max-paused-sessions N] [--session-disk-bytes N]\n"
                     "                          [--images IMAGE,...] [--egress NAME,...|none]\n"
                     "\n"
                     "Makes an API key and prints its token, once: only its SHA-256 is kept. Clients send it as\n"
                     "'Authorization: Bearer TOKEN' once SANDBOXD_API_KEYS=on. NAME (letters, digits, '.', '_', '-';\n"
                     "64 at most) is what records, the journal and metrics show; it is never given out again.\n"
                     "\n"
                     "Quotas (each left out: no limit):\n"
                     "  --max-concurrent N         its requests in flight at once\n"
                     "  --executions-per-minute N  executions (/v1/execute, /execute, /v1/call, a session's run\n"
                     "                             and exec), session creates, file uploads and pauses started\n"
                     "                             in the last 60 seconds\n"
                     "  --cpu-seconds-per-day N    CPU time of its executions in the last 24 hours, with what its\n"
                     "                             sessions' background processes used between runs\n"
                     "  --max-sessions N           its active sessions (each holds a machine)\n"
                     "  --max-paused-sessions N    its sessions kept, active or paused: each may be paused, and a\n"
                     "                             paused one keeps its disk until SANDBOXD_SESSION_RETAIN_S\n"
                     "  --session-disk-bytes N     its kept sessions' disks, each counted as\n"
                     "                             SANDBOXD_SESSION_DISK_BYTES (what it may grow to)\n"
                     "\n"
                     "  --images IMAGE,...         the tool images (sandboxd-image build) it may call with POST\n"
                     "                             /v1/call; any other answers as one that does not exist. Left\n"
                     "                             out: every tool image\n"
                     "  --egress NAME,...|none     what its requests may ask to reach (\"network\": {\"allow\"}),\n"
                     "                             within /etc/sandboxd/egress.allow: host names or *.suffix,\n"
                     "                             each with an optional :port (else 80 and 443); none:\n"
                     "                             nothing. Left out: all that egress.allow lets through\n"
                     "  -h, --help                 this text\n",
                     f);
}

static int print_added(const CtlOptions *o, const ApiKey *k, const char *token) {
        cleanup_json struct json_object *j = NULL;

        if (!o->json) {
                printf("%s\n", token);
                fprintf(stderr, "Key '%s' added. Its token, above, is shown this once: give it to its client now.\n", k->name);
                return EXIT_SUCCESS;
        }
        j = json_object_new_object();
        if (!j || json_object_object_add(j, "name", json_object_new_string(k->name)) < 0 ||
            json_object_object_add(j, "token", json_object_new_string(token)) < 0)
                return ctl_fail("out of memory");
        printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        return EXIT_SUCCESS;
}

/* The cluster's etcd when this host is a member (NULL when not): 0, or -EINVAL after an error said. */
static int cluster_etcd(Etcd **ret) {
        Config cfg;

        *ret = NULL;
        if (read_settings(&cfg) != 0)
                return -EINVAL;
        if (cfg.etcd[0] && etcd_new(cfg.etcd, ret) < 0) {
                (void) ctl_fail("SANDBOXD_ETCD names no etcd");
                return -EINVAL;
        }
        return 0;
}

/* A new key into etcd, unless one of its name exists (revoked ones keep their names there too). */
static int cluster_key_add(Etcd *etcd, ApiKey *k) {
        cleanup_free char *record = NULL, *path = NULL;
        Error err = {};
        int r;

        format_time_iso(now_usec(CLOCK_REALTIME), k->created_at, sizeof(k->created_at));
        record = key_record_format(k);
        if (!record || asprintf(&path, KEY_PREFIX "%s", k->name) < 0)
                return ctl_fail("out of memory");
        r = etcd_put_new(etcd, path, record, &err);
        if (r == -EEXIST)
                return ctl_fail("a key named '%s' exists already in the cluster (revoked keys keep their names)", k->name);
        if (r < 0)
                return ctl_fail("cannot add the key to the cluster: %s", error_message(&err, r));
        return 0;
}

/* Gives k a new token, stores it and prints the token. */
static int store_key(const CtlOptions *o, ApiKey *k) {
        char token[API_KEY_TOKEN_LEN + 1];
        sqlite3 *db = NULL;
        Etcd *etcd = NULL;
        int r;

        r = api_key_token_new(token);
        if (r < 0)
                return ctl_fail("no random bytes for a token: %s", strerror(-r));
        r = api_key_hash(token, k->token_sha256);
        if (r < 0)
                return ctl_fail("libcrypto computes no SHA-256: %s", strerror(-r));
        if (cluster_etcd(&etcd) < 0)
                return EXIT_FAILURE;
        if (etcd) {
                r = cluster_key_add(etcd, k);
                etcd = etcd_free(etcd);
                if (r == 0)
                        r = print_added(o, k, token);
                explicit_bzero(token, sizeof(token));
                return r;
        }
        if (open_db(&db) != 0)
                return EXIT_FAILURE;
        r = db_key_add(db, k);
        if (r == -EEXIST)
                r = ctl_fail("a key named '%s' exists already (revoked keys keep their names)", k->name);
        else if (r < 0)
                r = ctl_fail("cannot add the key: %s", db_errmsg(db));
        else
                r = print_added(o, k, token);
        db = db_close(db);
        explicit_bzero(token, sizeof(token));
        return r;
}

static int key_add(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"max-concurrent", required_argument, NULL, 'c'},
                {"executions-per-minute", required_argument, NULL, 'e'},
                {"cpu-seconds-per-day", required_argument, NULL, 'p'},
                {"images", required_argument, NULL, 'i'},
                {"egress", required_argument, NULL, 'E'},
                {"max-sessions", required_argument, NULL, 's'},
                {"max-paused-sessions", required_argument, NULL, 'P'},
                {"session-disk-bytes", required_argument, NULL, 'd'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        ApiKey k = {};
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        if (parse_limit("max-concurrent", optarg, &k.max_concurrent) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'e':
                        if (parse_limit("executions-per-minute", optarg, &k.executions_per_minute) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'p':
                        if (parse_limit("cpu-seconds-per-day", optarg, &k.cpu_seconds_per_day) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'i':
                        if (parse_images(optarg, k.images) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'E':
                        if (parse_egress(optarg, k.egress) != 0)
                                return EXIT_FAILURE;
                        break;
                case 's':
                        if (parse_limit("max-sessions", optarg, &k.max_sessions) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'P':
                        if (parse_limit("max-paused-sessions", optarg, &k.max_paused_sessions) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'd':
                        if (parse_limit_max("session-disk-bytes", optarg, BYTES_MAX, &k.session_disk_bytes) != 0)
                                return EXIT_FAILURE;
                        break;
                case 'h':
                        help_add(stdout);
                        return EXIT_SUCCESS;
                default:
                        help_add(stderr);
                        return 2;
                }
        if (optind != argc - 1) {
                help_add(stderr);
                return 2;
        }
        if (!api_key_name_valid(argv[optind]))
                return ctl_fail("'%s' is not a key name: 1 to %d letters, digits, '.', '_' or '-', not starting with '-'", argv[optind],
                                API_KEY_NAME_MAX);
        (void) snprintf(k.name, sizeof(k.name), "%s", argv[optind]);
        return store_key(o, &k);
}

static struct json_object *limit_json(int64_t v) {
        return v > 0 ? json_object_new_int64(v) : NULL;
}

/* A key's images as a list; null: every tool image. */
static struct json_object *images_json(const char *list) {
        struct json_object *a;

        if (!list[0])
                return NULL;
        a = json_object_new_array();
        for (const char *p = list; a && *p;) {
                size_t len = strcspn(p, ",");

                (void) json_object_array_add(a, json_object_new_string_len(p, (int) len));
                p += len + (p[len] == ',');
        }
        return a;
}

/* A key's egress: its entries; [] for none; null: all the operator allows. */
static struct json_object *egress_json(const char *list) {
        if (strcmp(list, API_KEY_EGRESS_NONE) == 0)
                return json_object_new_array();
        return images_json(list);
}

static int list_json(const ApiKey *keys, size_t n) {
        cleanup_json struct json_object *out = json_object_new_object(), *list = json_object_new_array();

        if (!out || !list)
                return ctl_fail("out of memory");
        for (size_t i = 0; i < n; i++) {
                struct json_object *k = json_object_new_object();

                if (!k || json_object_array_add(list, k) < 0 ||
                    json_object_object_add(k, "name", json_object_new_string(keys[i].name)) < 0 ||
                    json_object_object_add(k, "max_concurrent", limit_json(keys[i].max_concurrent)) < 0 ||
                    json_object_object_add(k, "executions_per_minute", limit_json(keys[i].executions_per_minute)) < 0 ||
                    json_object_object_add(k, "cpu_seconds_per_day", limit_json(keys[i].cpu_seconds_per_day)) < 0 ||
                    json_object_object_add(k, "max_sessions", limit_json(keys[i].max_sessions)) < 0 ||
                    json_object_object_add(k, "max_paused_sessions", limit_json(keys[i].max_paused_sessions)) < 0 ||
                    json_object_object_add(k, "session_disk_bytes", limit_json(keys[i].session_disk_bytes)) < 0 ||
                    json_object_object_add(k, "created_at", json_object_new_string(keys[i].created_at)) < 0 ||
                    json_object_object_add(k, "revoked_at", keys[i].revoked_at[0] ? json_object_new_string(keys[i].revoked_at) : NULL) < 0 ||
                    json_object_object_add(k, "images", images_json(keys[i].images)) < 0 ||
                    json_object_object_add(k, "egress", egress_json(keys[i].egress)) < 0)
                        return ctl_fail("out of memory");
        }
        if (json_object_object_add(out, "keys", TAKE_PTR(list)) < 0)
                return ctl_fail("out of memory");
        printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        return EXIT_SUCCESS;
}

static const char *limit_text(int64_t v, char *buf, size_t size) {
        if (v <= 0)
                return "-";
        (void) snprintf(buf, size, "%lld", (long long) v);
        return buf;
}

static int list_table(const ApiKey *keys, size_t n) {
        int w = 4;

        for (size_t i = 0; i < n; i++)
                if ((int) strlen(keys[i].name) > w)
                        w = (int) strlen(keys[i].name);
        printf("%-*s  %-14s  %-14s  %-10s  %-8s  %-8s  %-14s  %-24s  %-24s  %-16s  %s\n", w, "NAME", "MAX-CONCURRENT", "EXECUTIONS/MIN",
               "CPU-S/DAY", "SESSIONS", "PAUSED", "DISK-BYTES", "CREATED", "REVOKED", "IMAGES", "EGRESS");
        for (size_t i = 0; i < n; i++) {
                char a[24], b[24], c[24], d[24], e[24], f[24];

                printf("%-*s  %-14s  %-14s  %-10s  %-8s  %-8s  %-14s  %-24s  %-24s  %-16s  %s\n", w, keys[i].name,
                       limit_text(keys[i].max_concurrent, a, sizeof(a)), limit_text(keys[i].executions_per_minute, b, sizeof(b)),
                       limit_text(keys[i].cpu_seconds_per_day, c, sizeof(c)), limit_text(keys[i].max_sessions, d, sizeof(d)),
                       limit_text(keys[i].max_paused_sessions, e, sizeof(e)), limit_text(keys[i].session_disk_bytes, f, sizeof(f)),
                       keys[i].created_at, keys[i].revoked_at[0] ? keys[i].revoked_at : "-", keys[i].images[0] ? keys[i].images : "*",
                       keys[i].egress[0] ? keys[i].egress : "*");
        }
        return EXIT_SUCCESS;
}

static void help_list(FILE *f) {
        (void) fputs("Usage: sandboxctl [--json] key list [--json]\n"
                     "\n"
                     "Lists the API keys, revoked ones too, with their quotas ('-' or null: no limit) and the tool\n"
                     "images they may call ('*' or null: every one) and what their code may reach (EGRESS: '*' or\n"
                     "null: all that egress.allow lets through; none or []: nothing). Never a token: only their\n"
                     "hashes are kept.\n",
                     f);
}

static int key_list(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        cleanup_free ApiKey *keys = NULL;
        bool json = o->json;
        sqlite3 *db = NULL;
        size_t n = 0;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help_list(stdout);
                        return EXIT_SUCCESS;
                default:
                        help_list(stderr);
                        return 2;
                }
        if (optind != argc) {
                help_list(stderr);
                return 2;
        }
        if (open_db(&db) != 0)
                return EXIT_FAILURE;
        r = db_key_list(db, false, &keys, &n);
        if (r < 0)
                r = ctl_fail("cannot read the keys: %s", db_errmsg(db));
        else
                r = json ? list_json(keys, n) : list_table(keys, n);
        db = db_close(db);
        return r;
}

static void help_revoke(FILE *f) {
        (void) fputs("Usage: sandboxctl key revoke NAME\n"
                     "\n"
                     "Revokes an API key: its next request is refused (401). Requests already running finish; the\n"
                     "pool manager then pauses its active sessions, which are deleted after the retention\n"
                     "(SANDBOXD_SESSION_RETAIN_S) like any paused session. Its name is not given out again.\n",
                     f);
}

/* The pool manager pauses the key's sessions now, not at their idle end: it watches this file. */
static void revoke_stamp_touch(void) {
        char path[PATH_MAX];
        Config cfg;
        int fd;

        if (read_settings(&cfg) != 0 || db_revoke_stamp_path(cfg.db_path, path, sizeof(path)) < 0)
                return;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
                (void) close(fd);
}

/* The key's record in etcd, revoked: every member's mirror revokes it, and pauses its sessions.
 * -ENOENT (nothing said) when etcd has no key of that name: a key made on this host before it
 * joined the cluster is revoked in its own database, as on a single host. */
static int cluster_key_revoke(Etcd *etcd, const char *name) {
        cleanup_free char *path = NULL, *record = NULL, *revoked = NULL;
        Error err = {};
        ApiKey k;
        int r;

        if (asprintf(&path, KEY_PREFIX "%s", name) < 0)
                return ctl_fail("out of memory");
        r = etcd_get(etcd, path, &record, &err);
        if (r == -ENOENT)
                return -ENOENT; /* maybe this member's own, made before it joined */
        if (r < 0)
                return ctl_fail("cannot read the key from the cluster: %s", error_message(&err, r));
        if (key_record_parse(record, &k) < 0)
                return ctl_fail("the cluster's record of '%s' is no key", name);
        if (k.revoked_at[0])
                return ctl_fail("the key '%s' is revoked already", name);
        format_time_iso(now_usec(CLOCK_REALTIME), k.revoked_at, sizeof(k.revoked_at));
        revoked = key_record_format(&k);
        if (!revoked)
                return ctl_fail("out of memory");
        r = etcd_put(etcd, path, revoked, 0, &err);
        if (r < 0)
                return ctl_fail("cannot revoke the key in the cluster: %s", error_message(&err, r));
        printf("Key '%s' revoked on every member.\n", name);
        return EXIT_SUCCESS;
}

static int key_revoke(int argc, char *argv[]) {
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {},
        };
        sqlite3 *db = NULL;
        Etcd *etcd = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help_revoke(stdout);
                        return EXIT_SUCCESS;
                default:
                        help_revoke(stderr);
                        return 2;
                }
        if (optind != argc - 1) {
                help_revoke(stderr);
                return 2;
        }
        if (cluster_etcd(&etcd) < 0)
                return EXIT_FAILURE;
        if (etcd) {
                r = cluster_key_revoke(etcd, argv[optind]);
                etcd = etcd_free(etcd);
                if (r != -ENOENT)
                        return r;
        }
        if (open_db(&db) != 0)
                return EXIT_FAILURE;
        r = db_key_revoke(db, argv[optind]);
        if (r == -ENOENT)
                r = ctl_fail("no key named '%s'", argv[optind]);
        else if (r == -EALREADY)
                r = ctl_fail("the key '%s' is revoked already", argv[optind]);
        else if (r < 0)
                r = ctl_fail("cannot revoke the key: %s", db_errmsg(db));
        else {
                revoke_stamp_touch();
                printf("Key '%s' revoked.\n", argv[optind]);
                r = EXIT_SUCCESS;
        }
        db = db_close(db);
        return r;
}

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl key add NAME [--max-concurrent N] [--executions-per-minute N] [--cpu-seconds-per-day N]\n"
                     "                          [--max-sessions N] [--max-paused-sessions N] [--session-disk-bytes N]\n"
                     "                          [--images IMAGE,...] [--egress NAME,...|none]\n"
                     "       sandboxctl [--json] key list\n"
                     "       sandboxctl key revoke NAME\n"
                     "\n"
                     "Manages the API keys that sandboxd requires once SANDBOXD_API_KEYS=on. They live in its sqlite\n"
                     "database (SANDBOXD_DB, from the environment or /etc/sandboxd/sandboxd.conf); run as root or as\n"
                     "the services' user. 'sandboxctl key COMMAND --help' says more of each.\n",
                     f);
}

int verb_key(const CtlOptions *o, int argc, char *argv[]) {
        if (argc < 2) {
                help(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                help(stdout);
                return EXIT_SUCCESS;
        }
        if (strcmp(argv[1], "add") == 0)
                return key_add(o, argc - 1, argv + 1);
        if (strcmp(argv[1], "list") == 0)
                return key_list(o, argc - 1, argv + 1);
        if (strcmp(argv[1], "revoke") == 0)
                return key_revoke(argc - 1, argv + 1);
        help(stderr);
        return 2;
}
