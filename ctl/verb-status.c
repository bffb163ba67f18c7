/* SPDX-License-Identifier: MIT */
/* sandboxctl status: the service at a glance. The pool and the sessions from the API, the machines
 * from systemd (ctl/machines.h), the recent errors from the journal: what sandboxd logged at
 * warning or above (a 5xx answer's audit entry is a warning), which no route of the API gives. And
 * whether the services run with the settings file as it is: each tells systemd which version of it
 * it read (lib/settings.h), which is compared with the file's modification time. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>

#include "ctl/api.h"
#include "ctl/ctl.h"
#include "ctl/format.h"
#include "ctl/machines.h"
#include "ctl/systemd.h"
#include "lib/error.h"
#include "lib/journal-entry.h"
#include "lib/machine-state.h"
#include "lib/macro.h"
#include "lib/settings.h"
#include "lib/time-util.h"

DEFINE_JSON_CLEANUP

#define ERRORS_WINDOW_USEC (3600 * USEC_PER_SEC)
#define ERRORS_SHOWN 10
/* Counting stops there: a flood of errors needs no exact number to be seen. */
#define ERRORS_COUNTED 10000

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl status [--json]\n"
                     "\n"
                     "The service at a glance: the warm pool (GET /v1/pool), the machines by kind and state\n"
                     "(as sandboxctl machines), the sessions by state (GET /v1/sessions), whether the running\n"
                     "services read /etc/sandboxd/sandboxd.conf since it last changed (else: systemctl reload\n"
                     "sandboxd.target) and which of its settings wait for a restart (systemctl restart\n"
                     "sandboxd.target), and the errors of the last hour: sandboxd's journal entries at\n"
                     "priority warning or above, the last 10.\n"
                     "Exits 1 when any of them could not be read (saying why), 0 otherwise.\n"
                     "\n"
                     "Options:\n"
                     "      --json  all of it as one JSON object\n"
                     "  -h, --help  this text\n",
                     f);
}

static long long get_int(struct json_object *o, const char *name) {
        struct json_object *v;

        return json_object_object_get_ex(o, name, &v) ? (long long) json_object_get_int64(v) : -1;
}

static struct json_object *count_add(struct json_object *counts, const char *key) {
        struct json_object *v;

        if (json_object_object_get_ex(counts, key, &v))
                (void) json_object_int_inc(v, 1);
        else
                (void) json_object_object_add(counts, key, json_object_new_int64(1));
        return counts;
}

/* {"total": n, "pool": n, "session": n, "tool": n, "idle": n, "busy": n, "starting": n}: by kind,
 * and the pool's machines by their state. NULL when systemd could not be asked. */
static struct json_object *machines_summary(void) {
        cleanup_free Machine *list = NULL;
        struct json_object *out;
        int r, pool_read = 0;
        Error err = {};
        size_t n = 0;

        r = machines_list(&list, &n, &pool_read, &err);
        if (r < 0) {
                (void) ctl_fail("machines: %s", error_message(&err, r));
                return NULL;
        }
        out = json_object_new_object();
        if (!out)
                return NULL;
        (void) json_object_object_add(out, "total", json_object_new_int64((int64_t) n));
        for (const char *const *k = (const char *const[]){"pool", "session", "tool", "idle", "busy", "starting", NULL}; *k; k++)
                (void) json_object_object_add(out, *k, json_object_new_int64(0));
        for (size_t i = 0; i < n; i++) {
                MachineState state = machine_state_from_string(list[i].state);

                count_add(out, list[i].kind);
                if (state == MACHINE_READY)
                        count_add(out, "idle");
                else if (state == MACHINE_CLAIMED)
                        count_add(out, "busy");
                else if (state == MACHINE_STARTING)
                        count_add(out, "starting");
        }
        return out;
}

/* {"total": n, "active": n, "paused": n, …}: the sessions by state. */
static struct json_object *sessions_summary(const CtlOptions *o) {
        cleanup_json struct json_object *answer = NULL;
        struct json_object *list, *out;

        if (ctl_api(o, "GET", "/v1/sessions", NULL, 0, &answer, NULL) < 0)
                return NULL;
        if (!json_object_object_get_ex(answer, "sessions", &list) || !json_object_is_type(list, json_type_array)) {
                (void) ctl_fail("GET /v1/sessions: no list of sessions in the answer");
                return NULL;
        }
        out = json_object_new_object();
        if (!out)
                return NULL;
        (void) json_object_object_add(out, "total", json_object_new_int64((int64_t) json_object_array_length(list)));
        (void) json_object_object_add(out, "active", json_object_new_int64(0));
        (void) json_object_object_add(out, "paused", json_object_new_int64(0));
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                struct json_object *state;

                if (json_object_object_get_ex(json_object_array_get_idx(list, i), "state", &state))
                        count_add(out, json_object_get_string(state));
        }
        return out;
}

/* The services that read the settings file. */
static const char *const settings_units[] = {"sandbox-api.service", "sandboxd-broker.service", "sandboxd-poold.service"};

static SettingsStamp settings_file_stamp(void) {
        struct stat st;

        if (stat(SETTINGS_FILE, &st) < 0)
                return (SettingsStamp){};
        return (SettingsStamp){.sec = st.st_mtim.tv_sec, .nsec = st.st_mtim.tv_nsec};
}

/* One running unit's settings, as its status text says, into out: in "reload" when it read an
 * older file than there is, in "restart" ({unit: names}) when settings it read wait for a restart.
 * A unit that is not running, or says nothing of its settings, is left out. */
static int unit_settings(sd_bus *bus, const char *unit, const SettingsStamp *file, struct json_object *out) {
        cleanup_free char *state = NULL, *text = NULL;
        char pending[1024];
        SettingsStamp stamp;
        Error err = {};
        int r;

        r = ctl_unit_property(bus, unit, "org.freedesktop.systemd1.Unit", "ActiveState", &state, &err);
        if (r >= 0 && (strcmp(state, "active") == 0 || strcmp(state, "reloading") == 0))
                r = ctl_unit_property(bus, unit, "org.freedesktop.systemd1.Service", "StatusText", &text, &err);
        if (r < 0)
                return ctl_fail("settings: %s", error_message(&err, r));
        if (!text || settings_status_parse(text, &stamp, pending, sizeof(pending)) < 0)
                return 0;
        if (stamp.sec != file->sec || stamp.nsec != file->nsec)
                (void) json_object_array_add(json_object_object_get(out, "reload"), json_object_new_string(unit));
        else if (pending[0])
                (void) json_object_object_add(json_object_object_get(out, "restart"), unit, json_object_new_string(pending));
        return 0;
}

/* {"file": path, "reload": [units], "restart": {unit: "NAMES"}}: the running services that have not
 * read the settings file since it changed, and those that wait for a restart to apply some. NULL
 * when systemd could not be asked. */
static struct json_object *settings_summary(void) {
        __attribute__((cleanup(sd_bus_unrefp))) sd_bus *bus = NULL;
        cleanup_json struct json_object *out = json_object_new_object();
        SettingsStamp file = settings_file_stamp();
        Error err = {};
        int r;

        r = ctl_bus_open(&bus, &err);
        if (r < 0) {
                (void) ctl_fail("settings: %s", error_message(&err, r));
                return NULL;
        }
        if (!out)
                return NULL;
        (void) json_object_object_add(out, "file", json_object_new_string(SETTINGS_FILE));
        (void) json_object_object_add(out, "reload", json_object_new_array());
        (void) json_object_object_add(out, "restart", json_object_new_object());
        for (size_t i = 0; i < ELEMENTSOF(settings_units); i++)
                if (unit_settings(bus, settings_units[i], &file, out) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

static void print_settings(struct json_object *settings) {
        struct json_object *reload = json_object_object_get(settings, "reload"), *restart = json_object_object_get(settings, "restart");
        size_t n = json_object_array_length(reload);

        if (n == 0 && json_object_object_length(restart) == 0) {
                printf("settings:  as in %s\n", SETTINGS_FILE);
                return;
        }
        if (n > 0) {
                printf("settings:  %s changed since ", SETTINGS_FILE);
                for (size_t i = 0; i < n; i++)
                        printf("%s%s", i > 0 ? ", " : "", json_object_get_string(json_object_array_get_idx(reload, i)));
                printf(" read it: run systemctl reload sandboxd.target\n");
        }
        json_object_object_foreach (restart, unit, names)
                printf("settings:  %s runs without %s of %s, which only a restart applies: run systemctl restart sandboxd.target\n", unit,
                       json_object_get_string(names), SETTINGS_FILE);
}

/* sandboxd's entries at warning or above since the window began, the newest ERRORS_SHOWN (oldest
 * first), and how many there were in all. */
static struct json_object *recent_errors(size_t *ret_count) {
        __attribute__((cleanup(sd_journal_closep))) sd_journal *j = NULL;
        cleanup_json struct json_object *shown = json_object_new_array(), *out = NULL;
        uint64_t since = now_usec(CLOCK_REALTIME) - ERRORS_WINDOW_USEC;
        Error err = {};
        size_t count = 0;
        int r;

        r = ctl_journal_open(&j, &err);
        if (r < 0) {
                (void) ctl_fail("recent errors: %s", error_message(&err, r));
                return NULL;
        }
        r = sd_journal_add_match(j, "SYSLOG_IDENTIFIER=sandboxd", 0);
        for (char p = '0'; r >= 0 && p <= '4'; p++) {
                char match[16];

                (void) snprintf(match, sizeof(match), "PRIORITY=%c", p);
                r = sd_journal_add_match(j, match, 0);
        }
        if (r >= 0)
                r = sd_journal_seek_tail(j);
        while (r >= 0 && count < ERRORS_COUNTED && (r = sd_journal_previous(j)) > 0 && entry_realtime(j) >= since) {
                struct json_object *e = NULL;

                if (++count > ERRORS_SHOWN || !shown)
                        continue;
                r = entry_to_json(j, &e);
                if (r >= 0)
                        (void) json_object_array_add(shown, e);
        }
        if (r < 0 || !shown) {
                (void) ctl_fail("recent errors: cannot read the journal: %s", strerror(r < 0 ? -r : ENOMEM));
                return NULL;
        }
        out = json_object_new_array();
        for (size_t i = json_object_array_length(shown); out && i > 0; i--)
                (void) json_object_array_add(out, json_object_get(json_object_array_get_idx(shown, i - 1)));
        *ret_count = count;
        return TAKE_PTR(out);
}

static void print_status(const CtlOptions *o, struct json_object *pool, struct json_object *machines, struct json_object *sessions,
                         struct json_object *settings, struct json_object *errors, size_t error_count) {
        printf("service:   %s\n", o->url);
        if (pool)
                printf("pool:      %lld warm of a target of %lld, %lld executions running, %lld sandboxes made in all\n",
                       get_int(pool, "warm"), get_int(pool, "target"), get_int(pool, "in_flight"), get_int(pool, "created_total"));
        else
                printf("pool:      unknown (the API did not answer)\n");
        if (machines)
                printf("machines:  %lld: %lld of the pool (%lld idle, %lld busy, %lld starting), %lld of sessions, %lld of tool calls\n",
                       get_int(machines, "total"), get_int(machines, "pool"), get_int(machines, "idle"), get_int(machines, "busy"),
                       get_int(machines, "starting"), get_int(machines, "session"), get_int(machines, "tool"));
        else
                printf("machines:  unknown (systemd could not be asked)\n");
        if (sessions)
                printf("sessions:  %lld: %lld active, %lld paused\n", get_int(sessions, "total"), get_int(sessions, "active"),
                       get_int(sessions, "paused"));
        else
                printf("sessions:  unknown (the API did not answer)\n");
        if (settings)
                print_settings(settings);
        else
                printf("settings:  unknown (systemd could not be asked)\n");
        if (!errors) {
                printf("errors:    unknown (the journal could not be read)\n");
                return;
        }
        printf("errors:    %zu%s in the last hour%s\n", error_count, error_count >= ERRORS_COUNTED ? " or more" : "",
               error_count > ERRORS_SHOWN ? ", the last 10:" : (error_count > 0 ? ":" : ""));
        for (size_t i = 0; i < json_object_array_length(errors); i++) {
                struct json_object *e = json_object_array_get_idx(errors, i);

                printf("  %.10s %.8s  %-7s  %s\n", entry_get(e, "time"), entry_get(e, "time") + 11,
                       entry_priority_name(entry_get(e, "PRIORITY")), entry_get(e, "MESSAGE"));
        }
}

int verb_status(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        cleanup_json struct json_object *pool = NULL, *machines = NULL, *sessions = NULL, *settings = NULL, *errors = NULL, *out = NULL;
        bool json = o->json;
        size_t error_count = 0;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage("status", "bad option");
                }
        if (optind < argc)
                return ctl_usage("status", "no arguments expected, got '%s'", argv[optind]);

        if (ctl_api(o, "GET", "/v1/pool", NULL, 0, &pool, NULL) < 0)
                pool = NULL;
        machines = machines_summary();
        sessions = pool ? sessions_summary(o) : NULL; /* one "cannot connect" is enough */
        settings = machines ? settings_summary() : NULL; /* likewise for systemd */
        errors = recent_errors(&error_count);

        if (json) {
                out = json_object_new_object();
                if (!out)
                        return ctl_fail("out of memory");
                (void) json_object_object_add(out, "url", json_object_new_string(o->url));
                (void) json_object_object_add(out, "pool", json_object_get(pool));
                (void) json_object_object_add(out, "machines", json_object_get(machines));
                (void) json_object_object_add(out, "sessions", json_object_get(sessions));
                (void) json_object_object_add(out, "settings", json_object_get(settings));
                (void) json_object_object_add(out, "recent_errors", json_object_get(errors));
                (void) json_object_object_add(out, "recent_error_count", errors ? json_object_new_int64((int64_t) error_count) : NULL);
                puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        } else
                print_status(o, pool, machines, sessions, settings, errors, error_count);
        return pool && machines && sessions && settings && errors ? EXIT_SUCCESS : EXIT_FAILURE;
}
