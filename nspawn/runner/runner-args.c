/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "nspawn/runner/runner-args.h"

enum {
        ARG_DELEGATE = 0x100,
        ARG_LISTEN,
        ARG_SESSION,
        ARG_EXECUTIONS,
        ARG_UID,
        ARG_ZYGOTE,
        ARG_SECCOMP,
        ARG_MACHINE_SECCOMP,
        ARG_WORKSPACE_BYTES,
        ARG_TMP_BYTES,
        ARG_PRELOAD,
        ARG_IMPORT_ALLOW,
        ARG_SETENV,
};

void runner_args_usage(FILE *f) {
        (void) fputs("Usage: sandboxd-runner --listen --zygote=PATH --seccomp=FILTER --machine-seccomp=FILTER [OPTION]...\n"
                     "       sandboxd-runner --delegate=UID\n"
                     "\n"
                     "A machine's first process: serves the requests that come on standard input, a listening\n"
                     "unix socket, each in a sandbox forked by the zygote.\n"
                     "\n"
                     "  --listen                 standard input is the listening socket (required)\n"
                     "  --zygote=PATH            the zygote's binary, an absolute path (required)\n"
                     "  --seccomp=FILTER         the code's compiled system-call filter (required)\n"
                     "  --machine-seccomp=FILTER the runner's and the zygote's filter (required)\n"
                     "  --uid=UID                the sandbox user, 1 to 65535 (1000)\n"
                     "  --workspace-bytes=N      the size of each sandbox's /workspace (134217728)\n"
                     "  --tmp-bytes=N            the size of each sandbox's /tmp, /var/tmp, /dev/shm (67108864)\n"
                     "  --executions=N           serve N executions, then exit (1)\n"
                     "  --session                serve one session, until stopped, instead\n"
                     "  --preload=MODULE,...     what a second zygote imports ahead, for the code that does\n"
                     "  --import-allow=FILE      the curated import policy's allow-list\n"
                     "  --setenv=NAME=VALUE      added to the code's environment (at most 8)\n"
                     "  --delegate=UID           on the host, before a machine starts: hand the machine's\n"
                     "                           memory cgroup (cgroup v1) over to UID, and exit\n"
                     "  -h, --help               this text\n",
                     f);
}

/* A positive decimal number; 0 for anything else (0 itself is never a valid value here). */
static uint64_t parse_positive(const char *s) {
        char *end = NULL;
        unsigned long long v;

        if (!s || !(*s >= '0' && *s <= '9'))
                return 0;
        errno = 0;
        v = strtoull(s, &end, 10);
        return errno || !end || *end ? 0 : (uint64_t) v;
}

static int copy_text(char *dst, const char *src, const char *option, Error *reterr) {
        size_t n = strlen(src);

        if (n >= RUNNER_ARG_TEXT_MAX)
                return error_set(reterr, -EINVAL, "%s is longer than %d bytes", option, RUNNER_ARG_TEXT_MAX - 1);
        memcpy(dst, src, n + 1);
        return 0;
}

static int add_setenv(RunnerArgs *a, const char *assignment, Error *reterr) {
        if (!assignment[0] || assignment[0] == '=' || !strchr(assignment, '='))
                return error_set(reterr, -EINVAL, "--setenv takes NAME=VALUE, not '%s'", assignment);
        if (a->n_setenv == RUNNER_SETENV_MAX)
                return error_set(reterr, -EINVAL, "more than %d --setenv", RUNNER_SETENV_MAX);
        a->setenv[a->n_setenv++] = assignment;
        return 0;
}

static int parse_count(uint64_t *ret, const char *v, const char *option, Error *reterr) {
        uint64_t n = parse_positive(v);

        if (n == 0)
                return error_set(reterr, -EINVAL, "%s takes a positive number, not '%s'", option, v);
        *ret = n;
        return 0;
}

/* One option's argument into *a. */
static int parse_one(RunnerArgs *a, int c, const char *v, Error *reterr) {
        uint64_t n = parse_positive(v);

        switch (c) {
        case ARG_DELEGATE:
                if (n == 0 || n > UINT32_MAX)
                        return error_set(reterr, -EINVAL, "--delegate takes a UID, not '%s'", v);
                a->delegate_uid = (uint32_t) n;
                return 0;
        case ARG_UID:
                if (n == 0 || n > 65535)
                        return error_set(reterr, -EINVAL, "--uid takes a UID from 1 to 65535, not '%s'", v);
                a->uid = (uint32_t) n;
                return 0;
        case ARG_WORKSPACE_BYTES:
                return parse_count(&a->workspace_bytes, v, "--workspace-bytes", reterr);
        case ARG_TMP_BYTES:
                return parse_count(&a->tmp_bytes, v, "--tmp-bytes", reterr);
        case ARG_EXECUTIONS:
                return parse_count(&a->executions, v, "--executions", reterr);
        case ARG_ZYGOTE:
                a->zygote_path = v;
                return 0;
        case ARG_SECCOMP:
                a->seccomp_path = v;
                return 0;
        case ARG_MACHINE_SECCOMP:
                a->machine_seccomp_path = v;
                return 0;
        case ARG_PRELOAD:
                return copy_text(a->preload, v, "--preload", reterr);
        case ARG_IMPORT_ALLOW:
                return copy_text(a->import_allow, v, "--import-allow", reterr);
        case ARG_SETENV:
                return add_setenv(a, v, reterr);
        default:
                return error_set(reterr, -EINVAL, "unknown option");
        }
}

/* What a machine's runner cannot do without; --delegate is a command of its own. */
static int check(const RunnerArgs *a, int argc, Error *reterr) {
        if (a->delegate_uid)
                return argc == 2 ? 0 : error_set(reterr, -EINVAL, "--delegate takes no other option");
        if (!a->listen)
                return error_set(reterr, -EINVAL, "--listen is required");
        if (!a->zygote_path || a->zygote_path[0] != '/')
                return error_set(reterr, -EINVAL, "--zygote takes an absolute path");
        if (!a->seccomp_path || !a->machine_seccomp_path)
                return error_set(reterr, -EINVAL, "--seccomp and --machine-seccomp are required");
        return 0;
}

int runner_args_parse(int argc, char *argv[], RunnerArgs *ret, Error *reterr) {
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"delegate", required_argument, NULL, ARG_DELEGATE},
                {"listen", no_argument, NULL, ARG_LISTEN},
                {"session", no_argument, NULL, ARG_SESSION},
                {"executions", required_argument, NULL, ARG_EXECUTIONS},
                {"uid", required_argument, NULL, ARG_UID},
                {"zygote", required_argument, NULL, ARG_ZYGOTE},
                {"seccomp", required_argument, NULL, ARG_SECCOMP},
                {"machine-seccomp", required_argument, NULL, ARG_MACHINE_SECCOMP},
                {"workspace-bytes", required_argument, NULL, ARG_WORKSPACE_BYTES},
                {"tmp-bytes", required_argument, NULL, ARG_TMP_BYTES},
                {"preload", required_argument, NULL, ARG_PRELOAD},
                {"import-allow", required_argument, NULL, ARG_IMPORT_ALLOW},
                {"setenv", required_argument, NULL, ARG_SETENV},
                {},
        };
        RunnerArgs a = {.executions = 1, .uid = 1000, .workspace_bytes = 128U << 20, .tmp_bytes = 64U << 20};
        int c, r = 0;

        /* Errors are said by the caller, with the usage: getopt_long() says nothing itself. */
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                if (c == 'h')
                        a.help = true;
                else if (c == ARG_LISTEN)
                        a.listen = true;
                else if (c == ARG_SESSION)
                        a.session = true;
                else if (c == '?' || c == ':')
                        r = r < 0 ? r : error_set(reterr, -EINVAL, "bad option '%s'", argv[optind - 1]);
                else if (r >= 0)
                        r = parse_one(&a, c, optarg, reterr);
        }
        if (!a.help && r >= 0 && optind < argc)
                r = error_set(reterr, -EINVAL, "unexpected argument '%s'", argv[optind]);
        if (!a.help && r >= 0)
                r = check(&a, argc, reterr);
        if (r < 0 && !a.help)
                return r;
        *ret = a;
        return 0;
}
