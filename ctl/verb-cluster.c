/* SPDX-License-Identifier: MIT */
/* sandboxctl cluster status, drain, undrain (README, "Several hosts"): the members as etcd's
 * registry has them (cluster/member-record.h), and this member taken out of the front's rotation
 * and back. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cluster/etcd.h"
#include "cluster/member-record.h"
#include "ctl/ctl.h"
#include "ctl/settings.h"
#include "lib/config.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl cluster [status] [--json]\n"
                     "       sandboxctl drain | undrain\n"
                     "\n"
                     "cluster status lists the cluster's members as etcd's registry has them (SANDBOXD_ETCD):\n"
                     "each one's address, state (ready, or draining), pool (warm, in flight, starting,\n"
                     "waiting, most) and sessions (active, paused). A member that died leaves the list a few\n"
                     "seconds later, when its lease ends.\n"
                     "\n"
                     "drain takes this host out of the front's rotation: it takes no new executions, tool\n"
                     "calls or sessions, finishes what runs, and keeps serving its sessions. It lasts\n"
                     "across restarts, until undrain.\n"
                     "\n"
                     "Options:\n"
                     "      --json  the list as JSON\n"
                     "  -h, --help  this text\n",
                     f);
}

/* The cluster's settings as the services check them. */
static int settings(const char *verb, Config *ret) {
        const char *bad = NULL;

        if (config_parse(ctl_setting_get, ret, &bad) < 0)
                return ctl_fail("%s: %s in %s is not valid", verb, bad, ctl_settings_file());
        if (!ret->etcd[0])
                return ctl_usage(verb, "this host is no cluster member: %s sets no SANDBOXD_ETCD", ctl_settings_file());
        return 0;
}

static int records_cmp(const void *a, const void *b) {
        return strcmp(((const MemberRecord *) a)->name, ((const MemberRecord *) b)->name);
}

static int status(bool json) {
        Config config;
        Etcd *etcd = NULL;
        EtcdKv *kvs = NULL;
        MemberRecord *recs;
        size_t n = 0, good = 0;
        int64_t revision;
        Error err = {};
        int r;

        r = settings("cluster", &config);
        if (r != 0)
                return r;
        if (etcd_new(config.etcd, &etcd) < 0)
                return ctl_fail("cluster: SANDBOXD_ETCD names no etcd");
        r = etcd_range_prefix(etcd, MEMBER_PREFIX, &kvs, &n, &revision, &err);
        etcd = etcd_free(etcd);
        if (r < 0)
                return ctl_fail("cluster: %s", error_message(&err, r));
        recs = calloc(n + 1, sizeof(*recs));
        if (!recs) {
                etcd_kvs_free(kvs, n);
                return ctl_fail("out of memory");
        }
        for (size_t i = 0; i < n; i++)
                if (member_record_parse(kvs[i].value, &recs[good]) >= 0)
                        good++;
                else
                        (void) fprintf(stderr, "sandboxctl: cluster: ignoring %s, which is no member's record\n", kvs[i].key);
        etcd_kvs_free(kvs, n);
        qsort(recs, good, sizeof(*recs), records_cmp);

        if (json) {
                cleanup_json struct json_object *list = json_object_new_array();

                for (size_t i = 0; list && i < good; i++) {
                        cleanup_free char *s = member_record_format(&recs[i]);
                        struct json_object *one = s ? json_tokener_parse(s) : NULL;

                        if (!one || json_object_array_add(list, one) < 0) {
                                json_object_put(one);
                                free(recs);
                                return ctl_fail("out of memory");
                        }
                }
                free(recs);
                if (!list)
                        return ctl_fail("out of memory");
                (void) puts(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
                return EXIT_SUCCESS;
        }
        printf("%-16s  %-22s  %-8s  %5s  %8s  %8s  %7s  %5s  %8s  %6s\n", "MEMBER", "ADDRESS", "STATE", "WARM", "INFLIGHT", "STARTING",
               "WAITING", "MAX", "SESSIONS", "PAUSED");
        for (size_t i = 0; i < good; i++) {
                const MemberRecord *m = &recs[i];

                printf("%-16s  %-22s  %-8s  %5lld  %8lld  %8lld  %7lld  %5lld  %8lld  %6lld\n", m->name, m->address,
                       m->draining ? "draining" : "ready", (long long) m->warm, (long long) m->in_flight, (long long) m->starting,
                       (long long) m->waiting, (long long) m->max, (long long) m->sessions_active, (long long) m->sessions_paused);
        }
        printf("%zu member%s\n", good, good == 1 ? "" : "s");
        free(recs);
        return EXIT_SUCCESS;
}

/* The drain file made or removed; sandboxd-member sees it at once and tells the front. */
static int drain(const char *verb, bool on) {
        char path[4096];
        size_t dir_len;
        Config config;
        int r = settings(verb, &config), fd;

        if (r != 0)
                return r;
        if (member_drain_path(config.db_path, path, sizeof(path), &dir_len) < 0)
                return ctl_fail("%s: SANDBOXD_DB is too long", verb);
        if (!on) {
                if (unlink(path) < 0 && errno != ENOENT)
                        return ctl_fail("%s: cannot remove %s: %m", verb, path);
                printf("%s: ready: the front sends it new work again\n", config.member);
                return EXIT_SUCCESS;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return ctl_fail("%s: cannot make %s: %m", verb, path);
        (void) close(fd);
        printf("%s: draining: no new work from the front; what runs finishes, its sessions are served\n", config.member);
        return EXIT_SUCCESS;
}

/* The verb's options: -1 to go on, else the exit status. */
static int parse(const char *verb, int argc, char *argv[], bool *json) {
        static const struct option options[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        *json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage(verb, "unknown option");
                }
        return -1;
}

int verb_cluster(const CtlOptions *o, int argc, char *argv[]) {
        bool json = o->json;
        int r = parse("cluster", argc, argv, &json);

        if (r >= 0)
                return r;
        if (optind < argc && strcmp(argv[optind], "status") != 0)
                return ctl_usage("cluster", "unknown action '%s'", argv[optind]);
        if (optind + 1 < argc)
                return ctl_usage("cluster", "too many arguments");
        return status(json);
}

int verb_drain(const CtlOptions *o, int argc, char *argv[]) {
        bool json = o->json;
        int r = parse("drain", argc, argv, &json);

        if (r >= 0)
                return r;
        if (optind < argc)
                return ctl_usage("drain", "takes no argument");
        return drain("drain", true);
}

int verb_undrain(const CtlOptions *o, int argc, char *argv[]) {
        bool json = o->json;
        int r = parse("undrain", argc, argv, &json);

        if (r >= 0)
                return r;
        if (optind < argc)
                return ctl_usage("undrain", "takes no argument");
        return drain("undrain", false);
}
