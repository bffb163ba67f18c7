/* SPDX-License-Identifier: MIT */
/* sandboxctl [--url URL] [--token TOKEN] [--json] VERB [ARGS...]: what an administrator asks of sandboxd. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/http.h"

/* One row per verb, in the order --help lists them; the empty row ends it. */
static const CtlVerb verbs[] = {
        {"status", "the pool, machines, sessions and recent errors at a glance", verb_status},
        {"sessions", "list the sessions; sessions rm ID deletes one", verb_sessions},
        {"machines", "list the machines: state, language, executions, age, memory, CPU", verb_machines},
        {"run", "run FILE in a sandbox: its output, and its exit code as ours", verb_run},
        {"logs", "the last requests, or every journal entry of one and its cost", verb_logs},
        {"key", "API keys and their quotas: add, list, revoke", verb_key},
        {"cluster", "the cluster's members: address, state, pool, sessions", verb_cluster},
        {"drain", "take this member out of the front's rotation (its sessions stay)", verb_drain},
        {"undrain", "put this member back into the front's rotation", verb_undrain},
        {},
};

int ctl_fail(const char *fmt, ...) {
        va_list ap;

        (void) fputs("sandboxctl: ", stderr);
        va_start(ap, fmt);
        (void) vfprintf(stderr, fmt, ap);
        va_end(ap);
        (void) fputc('\n', stderr);
        return EXIT_FAILURE;
}

int ctl_usage(const char *verb, const char *fmt, ...) {
        va_list ap;

        (void) fprintf(stderr, "sandboxctl: %s: ", verb);
        va_start(ap, fmt);
        (void) vfprintf(stderr, fmt, ap);
        va_end(ap);
        (void) fprintf(stderr, " (see sandboxctl %s --help)\n", verb);
        return CTL_EXIT_USAGE;
}

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl [--url URL] [--token TOKEN] [--json] VERB [ARGS...]\n"
                     "\n"
                     "Looks at and manages a running sandboxd. VERB --help says more of each.\n"
                     "\n"
                     "Options:\n"
                     "  --url URL      the service (default: $SANDBOXD_URL, else http://127.0.0.1:8080)\n"
                     "  --token TOKEN  an API key, when the service requires one (default: $SANDBOXD_TOKEN)\n"
                     "  --json         print what a verb lists as JSON (each verb takes it too)\n"
                     "  -h, --help     this text\n"
                     "\n"
                     "Verbs:\n",
                     f);
        for (const CtlVerb *v = verbs; v->name; v++)
                fprintf(f, "  %-13s  %s\n", v->name, v->summary);
        (void) fputs("\nSee sandboxctl(8).\n", f);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                {"url", required_argument, NULL, 'u'},
                {"token", required_argument, NULL, 't'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        HttpUrl url;
        CtlOptions o = {.url = getenv("SANDBOXD_URL"), .token = getenv("SANDBOXD_TOKEN")};
        int c;

        if (!o.url || !*o.url)
                o.url = "http://127.0.0.1:8080";
        if (o.token && !*o.token)
                o.token = NULL;
        /* "+": options after the verb are the verb's, not ours. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'u':
                        o.url = optarg;
                        break;
                case 't':
                        o.token = optarg;
                        break;
                case 'j':
                        o.json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        help(stderr);
                        return CTL_EXIT_USAGE;
                }
        if (optind >= argc) {
                help(stderr);
                return CTL_EXIT_USAGE;
        }
        if (http_url_parse(o.url, &url) < 0) {
                (void) ctl_fail("'%s' is not a URL sandboxctl can use: http://HOST[:PORT][/PATH]", o.url);
                return CTL_EXIT_USAGE;
        }
        for (const CtlVerb *v = verbs; v->name; v++)
                if (strcmp(v->name, argv[optind]) == 0) {
                        int first = optind;

                        optind = 0; /* the verb parses its own arguments afresh, with getopt too */
                        return v->run(&o, argc - first, argv + first);
                }
        (void) ctl_fail("unknown verb '%s' (see sandboxctl --help)", argv[optind]);
        return CTL_EXIT_USAGE;
}
