/* SPDX-License-Identifier: MIT */
/* sandboxctl logs [-n N] [REQUEST_ID]: the journal's account of requests. Every request has one
 * audit entry (fcgi/audit.c: route, status, sandbox, exit code, what it cost) and may have more
 * (errors, pool and session events), all with its REQUEST_ID: the X-Request-Id of its answer. On a
 * cluster's member, a request another member ran is asked of them all (cluster/logs-ask.h). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <json-c/json.h>
#include <systemd/sd-journal.h>

#include "cluster/etcd.h"
#include "cluster/logs-ask.h"
#include "ctl/ctl.h"
#include "ctl/format.h"
#include "ctl/settings.h"
#include "ctl/systemd.h"
#include "ctl/usage.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/journal-entry.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

#define LOGS_DEFAULT_LINES 20
#define LOGS_MAX_LINES 100000
/* The member that ran a request answers in milliseconds; none answering within this, none has it. */
#define LOGS_ASK_TIMEOUT_MS 3000L
#define LOGS_ASK_LEASE_S 15U

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl logs [-n N] [--json] [REQUEST_ID]\n"
                     "\n"
                     "Without REQUEST_ID: the audit entries of the last N requests, oldest first, one line\n"
                     "each. With it: every journal entry of that request (the X-Request-Id of its answer),\n"
                     "and what it cost, from its audit entry. On a cluster's member, a request that another\n"
                     "member ran comes from that member's journal, asked through etcd.\n"
                     "\n"
                     "Options:\n"
                     "  -n, --lines N  how many requests to list (default 20)\n"
                     "      --json     the entries as JSON, every field of each\n"
                     "  -h, --help     this text\n",
                     f);
}

/* A journal value that is a whole decimal number becomes a JSON number, so that jq can add them. */
static struct json_object *usage_value(const char *v) {
        char *end = NULL;
        long long x;

        errno = 0;
        x = strtoll(v, &end, 10);
        if (*v && end && *end == 0 && errno == 0)
                return json_object_new_int64(x);
        return json_object_new_string(v);
}

/* The usage fields of an audit entry, lower-cased: {"cpu_usec": 31000, "duration_ms": 40, …}. */
static struct json_object *entry_usage(struct json_object *entry) {
        struct json_object *u = json_object_new_object();

        if (!u)
                return NULL;
        json_object_object_foreach (entry, name, value) {
                char lower[128];
                size_t i;

                if (!usage_field(name) || !*json_object_get_string(value))
                        continue;
                for (i = 0; name[i] && i + 1 < sizeof(lower); i++)
                        lower[i] = (char) tolower((unsigned char) name[i]);
                lower[i] = 0;
                (void) json_object_object_add(u, lower, usage_value(json_object_get_string(value)));
        }
        return u;
}

/* What an entry holds that its MESSAGE does not say, for people: "route=… status=…". */
static bool shown_in_message(const char *name) {
        static const char *const skip[] = {"MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER", "SYSLOG_FACILITY",
                                           "SYSLOG_PID", "SYSLOG_TIMESTAMP", "REQUEST_ID", "CODE_FILE", "CODE_LINE",
                                           "CODE_FUNC", "time"};

        for (size_t i = 0; i < ELEMENTSOF(skip); i++)
                if (strcmp(name, skip[i]) == 0)
                        return true;
        return false;
}

static void print_audit_details(struct json_object *entry, struct json_object *usage) {
        const char *sep = "";

        (void) fputs("    ", stdout);
        json_object_object_foreach (entry, name, value) {
                const char *v = json_object_get_string(value);

                if (shown_in_message(name) || usage_field(name) || !*v)
                        continue;
                printf("%s", sep);
                for (const char *c = name; *c; c++)
                        putchar(tolower((unsigned char) *c));
                printf("=%s", v);
                sep = " ";
        }
        (void) fputs("\n    usage:", stdout);
        json_object_object_foreach (usage, uname, uvalue)
                printf(" %s=%s", uname, json_object_get_string(uvalue));
        if (json_object_object_length(usage) == 0)
                (void) fputs(" (none recorded)", stdout);
        putchar('\n');
}

static int read_request(sd_journal *j, const char *id, struct json_object *entries, struct json_object **ret_usage) {
        char match[64];
        int r;

        (void) snprintf(match, sizeof(match), "REQUEST_ID=%s", id);
        r = sd_journal_add_match(j, match, 0);
        if (r < 0)
                return r;
        SD_JOURNAL_FOREACH(j) {
                struct json_object *e = NULL;

                r = entry_to_json(j, &e);
                if (r < 0)
                        return r;
                (void) json_object_array_add(entries, e);
                if (strcmp(entry_get(e, "MESSAGE_ID"), ENTRY_AUDIT_MESSAGE_ID) == 0) {
                        (void) json_object_put(*ret_usage);
                        *ret_usage = entry_usage(e);
                }
        }
        return 0;
}

typedef struct Answer {
        struct json_object *entries;
        char member[32];
} Answer;

static int on_answer(const char *key, const char *value, int64_t revision, void *userdata) {
        Answer *a = userdata;
        struct json_object *list = value ? json_tokener_parse(value) : NULL;
        const char *slash = strrchr(key, '/');

        (void) revision;
        if (!list || !json_object_is_type(list, json_type_array)) {
                json_object_put(list);
                return 0;
        }
        a->entries = list;
        (void) snprintf(a->member, sizeof(a->member), "%s", slash ? slash + 1 : "?");
        return -ECANCELED; /* the one answer waited for */
}

/* On a cluster's member, a request this member's journal does not have: the member that ran it
 * answers through etcd (cluster/logs-ask.h), within LOGS_ASK_TIMEOUT_MS. 0 and its entries, or
 * -ENOENT (no member has it, or this host is no member). */
static int ask_members(const char *id, Answer *ret) {
        cleanup_free char *ask = NULL, *key = NULL, *prefix = NULL;
        uint8_t rnd[8];
        char nonce[2 * sizeof(rnd) + 1];
        const char *bad = NULL;
        Etcd *etcd = NULL;
        int64_t lease = 0, revision = 0;
        Error err = {};
        Config cfg;
        int r;

        if (config_parse(ctl_setting_get, &cfg, &bad) < 0 || !cfg.etcd[0] || etcd_new(cfg.etcd, &etcd) < 0)
                return -ENOENT;
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd)) {
                etcd_free(etcd);
                return -EIO;
        }
        for (size_t i = 0; i < sizeof(rnd); i++)
                (void) snprintf(nonce + 2 * i, 3, "%02x", rnd[i]);
        r = etcd_lease_grant(etcd, LOGS_ASK_LEASE_S, &lease, &err);
        if (r >= 0)
                r = logs_ask_format(id, lease, &ask);
        if (r >= 0 && (asprintf(&key, LOGS_ASK_PREFIX "%s", nonce) < 0 || asprintf(&prefix, LOGS_ANSWER_PREFIX "%s/", nonce) < 0))
                r = -ENOMEM;
        if (r >= 0)
                r = etcd_put_rev(etcd, key, ask, lease, &revision, &err);
        if (r >= 0) {
                r = etcd_watch_prefix(etcd, prefix, revision + 1, LOGS_ASK_TIMEOUT_MS, on_answer, ret, &err);
                r = r == -ECANCELED ? 0 : -ENOENT;
        } else
                (void) fprintf(stderr, "sandboxctl: logs: cannot ask the other members: %s\n", error_message(&err, r));
        /* The ask and every answer go with it. */
        if (lease)
                (void) etcd_lease_revoke(etcd, lease, NULL);
        etcd_free(etcd);
        return r;
}

static int logs_request(sd_journal *j, const char *id, bool json) {
        cleanup_json struct json_object *entries = json_object_new_array(), *usage = NULL, *out = NULL;
        Answer remote = {};
        int r;

        if (!entries)
                return ctl_fail("out of memory");
        r = read_request(j, id, entries, &usage);
        if (r < 0)
                return ctl_fail("cannot read the journal: %s", strerror(-r));
        if (json_object_array_length(entries) == 0 && ask_members(id, &remote) >= 0) {
                json_object_put(entries);
                entries = remote.entries;
                for (size_t i = 0; i < json_object_array_length(entries); i++)
                        if (strcmp(entry_get(json_object_array_get_idx(entries, i), "MESSAGE_ID"), ENTRY_AUDIT_MESSAGE_ID) == 0) {
                                (void) json_object_put(usage);
                                usage = entry_usage(json_object_array_get_idx(entries, i));
                        }
                if (!json)
                        printf("(from member %s's journal)\n", remote.member);
        }
        if (json_object_array_length(entries) == 0)
                return ctl_fail("no journal entry for request %s", id);

        if (json) {
                out = json_object_new_object();
                if (!out)
                        return ctl_fail("out of memory");
                (void) json_object_object_add(out, "request_id", json_object_new_string(id));
                (void) json_object_object_add(out, "entries", json_object_get(entries));
                (void) json_object_object_add(out, "usage", usage ? json_object_get(usage) : NULL);
                puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                return EXIT_SUCCESS;
        }
        printf("request %s\n", id);
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                struct json_object *e = json_object_array_get_idx(entries, i);
                bool audit = strcmp(entry_get(e, "MESSAGE_ID"), ENTRY_AUDIT_MESSAGE_ID) == 0;
                char when[32];

                /* "2026-11-30T22:24:04.123456Z": the date, the time to the millisecond. */
                (void) snprintf(when, sizeof(when), "%.10s %.12s", entry_get(e, "time"), entry_get(e, "time") + 11);
                printf("%s  %-7s  %s\n", when, entry_priority_name(entry_get(e, "PRIORITY")), entry_get(e, "MESSAGE"));
                if (audit)
                        print_audit_details(e, usage);
        }
        if (!usage)
                printf("(no audit entry yet: the request is still running, or was never answered)\n");
        return EXIT_SUCCESS;
}

static void print_request_line(struct json_object *e) {
        const char *exit_code = entry_get(e, "EXIT_CODE"), *ms = entry_get(e, "DURATION_MS"), *error = entry_get(e, "ERROR");
        char when[32];

        (void) snprintf(when, sizeof(when), "%.10s %.8s", entry_get(e, "time"), entry_get(e, "time") + 11);

        /* No blanks at the end of a line without an error: a line is a record to grep. */
        printf("%-19s  %-32s  %-6s  %-22s  %-4s  %7s%s%s\n", when, entry_get(e, "REQUEST_ID"), entry_get(e, "STATUS"),
               entry_get(e, "ROUTE"), *exit_code ? exit_code : "-", *ms ? ms : "-", *error ? "  " : "", error);
}

static int logs_list(sd_journal *j, unsigned lines, bool json) {
        cleanup_json struct json_object *entries = json_object_new_array(), *out = NULL;
        size_t n;
        int r;

        if (!entries)
                return ctl_fail("out of memory");
        r = sd_journal_add_match(j, "MESSAGE_ID=" ENTRY_AUDIT_MESSAGE_ID, 0);
        if (r >= 0)
                r = sd_journal_seek_tail(j);
        /* Newest first from the tail, then printed the other way round. */
        while (r >= 0 && json_object_array_length(entries) < lines && (r = sd_journal_previous(j)) > 0) {
                struct json_object *e = NULL;

                r = entry_to_json(j, &e);
                if (r >= 0)
                        r = json_object_array_add(entries, e);
        }
        if (r < 0)
                return ctl_fail("cannot read the journal: %s", strerror(-r));

        n = json_object_array_length(entries);
        if (json) {
                out = json_object_new_array();
                for (size_t i = n; out && i > 0; i--)
                        (void) json_object_array_add(out, json_object_get(json_object_array_get_idx(entries, i - 1)));
                if (!out)
                        return ctl_fail("out of memory");
                puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                return EXIT_SUCCESS;
        }
        printf("%-19s  %-32s  %-6s  %-22s  %-4s  %7s  %s\n", "TIME", "REQUEST", "STATUS", "ROUTE", "EXIT", "MS", "ERROR");
        for (size_t i = n; i > 0; i--)
                print_request_line(json_object_array_get_idx(entries, i - 1));
        return EXIT_SUCCESS;
}

static bool is_request_id(const char *s) {
        size_t n = strlen(s);

        return n == 32 && strspn(s, "0123456789abcdef") == n;
}

int verb_logs(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"lines", required_argument, NULL, 'n'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        __attribute__((cleanup(sd_journal_closep))) sd_journal *j = NULL;
        unsigned long lines = LOGS_DEFAULT_LINES;
        bool json = o->json;
        Error err = {};
        char *end;
        int c, r;

        while ((c = getopt_long(argc, argv, "n:h", options, NULL)) >= 0)
                switch (c) {
                case 'n':
                        errno = 0;
                        lines = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || errno || lines == 0 || lines > LOGS_MAX_LINES || optarg[0] == '-')
                                return ctl_usage("logs", "-n takes a number from 1 to %u, not '%s'", LOGS_MAX_LINES, optarg);
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage("logs", "bad option");
                }
        if (argc - optind > 1)
                return ctl_usage("logs", "one request id at most");
        if (argc - optind == 1 && !is_request_id(argv[optind]))
                return ctl_usage("logs", "'%s' is not a request id (32 hexadecimal digits: an answer's X-Request-Id)", argv[optind]);

        r = ctl_journal_open(&j, &err);
        if (r < 0)
                return ctl_fail("%s", error_message(&err, r));
        if (argc - optind == 1)
                return logs_request(j, argv[optind], json);
        return logs_list(j, (unsigned) lines, json);
}
