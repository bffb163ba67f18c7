/* SPDX-License-Identifier: MIT */
/* sandboxctl machines: every machine sandboxd runs (ctl/machines.h), one line each. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "ctl/ctl.h"
#include "ctl/format.h"
#include "ctl/machines.h"
#include "lib/error.h"
#include "lib/machine-state.h"
#include "lib/macro.h"
#include "lib/time-util.h"

DEFINE_JSON_CLEANUP

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl machines [--json]\n"
                     "\n"
                     "Lists the machines sandboxd runs, as the systemd that runs them has them (units\n"
                     "machine-* of the warm pool, session-* of the sessions, tool-* of tool calls) and as\n"
                     "the pool records its own: whether idle or busy, the language its next sandbox is\n"
                     "made ready for, the executions it served; then how long it has run, its memory, CPU\n"
                     "time and tasks now. Reads only.\n"
                     "\n"
                     "Options:\n"
                     "      --json  the list as JSON\n"
                     "  -h, --help  this text\n",
                     f);
}

/* The pool's words for what an administrator asks: is it free? */
static const char *state_word(const Machine *m) {
        if (machine_state_from_string(m->state) == MACHINE_READY)
                return "idle";
        if (machine_state_from_string(m->state) == MACHINE_CLAIMED)
                return "busy";
        return m->state[0] ? m->state : m->active;
}

static void format_cpu(uint64_t usec, char *ret, size_t size) {
        if (usec == UINT64_MAX)
                (void) snprintf(ret, size, "-");
        else if (usec < 1000000)
                (void) snprintf(ret, size, "%llums", (unsigned long long) (usec / 1000));
        else
                (void) snprintf(ret, size, "%.1fs", (double) usec / 1e6);
}

static void print_table(const Machine *list, size_t n, uint64_t now) {
        printf("%-21s  %-7s  %-10s  %-8s  %-8s  %5s  %5s  %7s  %7s  %5s\n", "MACHINE", "KIND", "STATE", "UNIT", "PREPARED", "EXECS",
               "AGE", "MEMORY", "CPU", "TASKS");
        for (size_t i = 0; i < n; i++) {
                const Machine *m = &list[i];
                char age[16] = "-", mem[16] = "-", cpu[16], execs[24] = "-", tasks[24] = "-";

                if (m->since_usec > 0 && now > m->since_usec)
                        format_span(now - m->since_usec, age, sizeof(age));
                if (m->memory != UINT64_MAX)
                        format_bytes(m->memory, mem, sizeof(mem));
                format_cpu(m->cpu_usec, cpu, sizeof(cpu));
                if (m->executions >= 0)
                        (void) snprintf(execs, sizeof(execs), "%lld", (long long) m->executions);
                if (m->tasks != UINT64_MAX)
                        (void) snprintf(tasks, sizeof(tasks), "%llu", (unsigned long long) m->tasks);
                printf("%-21s  %-7s  %-10s  %-8s  %-8s  %5s  %5s  %7s  %7s  %5s\n", m->id, m->kind, state_word(m), m->sub,
                       m->prepared[0] ? m->prepared : "-", execs, age, mem, cpu, tasks);
        }
}

static struct json_object *u64_or_null(uint64_t v) {
        return v == UINT64_MAX ? NULL : json_object_new_int64((int64_t) v);
}

static struct json_object *machine_json(const Machine *m, uint64_t now) {
        struct json_object *o = json_object_new_object();
        char since[48];

        if (!o)
                return NULL;
        format_time_iso(m->since_usec, since, sizeof(since));
        (void) json_object_object_add(o, "id", json_object_new_string(m->id));
        (void) json_object_object_add(o, "kind", json_object_new_string(m->kind));
        (void) json_object_object_add(o, "state", json_object_new_string(state_word(m)));
        (void) json_object_object_add(o, "pool_state", m->state[0] ? json_object_new_string(m->state) : NULL);
        (void) json_object_object_add(o, "active_state", json_object_new_string(m->active));
        (void) json_object_object_add(o, "sub_state", json_object_new_string(m->sub));
        (void) json_object_object_add(o, "prepared", m->prepared[0] ? json_object_new_string(m->prepared) : NULL);
        (void) json_object_object_add(o, "executions", m->executions >= 0 ? json_object_new_int64(m->executions) : NULL);
        (void) json_object_object_add(o, "started_at", m->since_usec ? json_object_new_string(since) : NULL);
        (void) json_object_object_add(o, "age_s", m->since_usec && now > m->since_usec ? json_object_new_int64((int64_t) ((now - m->since_usec) / 1000000)) : NULL);
        (void) json_object_object_add(o, "memory_bytes", u64_or_null(m->memory));
        (void) json_object_object_add(o, "cpu_usec", u64_or_null(m->cpu_usec));
        (void) json_object_object_add(o, "tasks", u64_or_null(m->tasks));
        return o;
}

int verb_machines(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        cleanup_free Machine *list = NULL;
        uint64_t now = now_usec(CLOCK_REALTIME);
        bool json = o->json;
        int c, r, pool_read = 0;
        Error err = {};
        size_t n = 0;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage("machines", "bad option");
                }
        if (optind < argc)
                return ctl_usage("machines", "no arguments expected, got '%s'", argv[optind]);

        r = machines_list(&list, &n, &pool_read, &err);
        if (r < 0)
                return ctl_fail("%s", error_message(&err, r));
        if (json) {
                cleanup_json struct json_object *out = json_object_new_array();

                for (size_t i = 0; out && i < n; i++)
                        (void) json_object_array_add(out, machine_json(&list[i], now));
                if (!out)
                        return ctl_fail("out of memory");
                puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                return EXIT_SUCCESS;
        }
        print_table(list, n, now);
        if (!pool_read)
                (void) ctl_fail("the pool's records could not be read: STATE, PREPARED and EXECS are systemd's or unknown");
        return EXIT_SUCCESS;
}
