/* SPDX-License-Identifier: MIT */
/* sandboxctl [--url URL] [--token TOKEN] [--json] VERB [ARGS...]: what an administrator asks of sandboxd. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"

/* One row per verb, in the order --help lists them; the empty row ends it. */
static const CtlVerb verbs[] = {
        {"key", "API keys and their quotas: add, list, revoke", verb_key},
        {},
};

int ctl_fail(const char *fmt, ...) {
        va_list ap;

        fputs("sandboxctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return EXIT_FAILURE;
}

static void help(FILE *f) {
        fputs("Usage: sandboxctl [--url URL] [--token TOKEN] [--json] VERB [ARGS...]\n"
              "\n"
              "Looks at and manages a running sandboxd. VERB --help says more of each.\n"
              "\n"
              "Options:\n"
              "  --url URL   the service (default: $SANDBOXD_URL, else http://127.0.0.1:8080)\n"
              "  --token TOKEN  an API key, when the service requires one (default: $SANDBOXD_TOKEN)\n"
              "  --json      print what a verb lists as JSON\n"
              "  -h, --help  this text\n"
              "\n"
              "Verbs:\n",
              f);
        for (const CtlVerb *v = verbs; v->name; v++)
                fprintf(f, "  %-10s  %s\n", v->name, v->summary);
        fputs("\nSee sandboxctl(8).\n", f);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                {"url", required_argument, NULL, 'u'},
                {"token", required_argument, NULL, 't'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
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
                        return 2;
                }
        if (optind >= argc) {
                help(stderr);
                return 2;
        }
        for (const CtlVerb *v = verbs; v->name; v++)
                if (strcmp(v->name, argv[optind]) == 0) {
                        int first = optind;

                        optind = 0; /* the verb parses its own arguments afresh, with getopt too */
                        return v->run(&o, argc - first, argv + first);
                }
        return ctl_fail("unknown verb '%s' (see sandboxctl --help)", argv[optind]);
}
