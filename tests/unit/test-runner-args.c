/* SPDX-License-Identifier: MIT */
/* The runner's command line: every option the broker and the tests pass, to its meaning, and what
 * is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/error.h"
#include "lib/macro.h"
#include "nspawn/runner/runner-args.h"
#include "tests/unit/tap.h"

#define MAX_ARGS 24

/* argv[1..] as given (argv[0] added), parsed into *ret. */
static int parse(const char *const *args, RunnerArgs *ret, Error *reterr) {
        char *argv[MAX_ARGS + 2] = {(char *) "sandboxd-runner"};
        int argc = 1;

        for (; args[argc - 1] && argc <= MAX_ARGS; argc++)
                argv[argc] = (char *) args[argc - 1];
        return runner_args_parse(argc, argv, ret, reterr);
}

#define REQUIRED "--listen", "--zygote=/usr/lib/sandboxd/sandboxd-zygote", "--seccomp=s.bpf", "--machine-seccomp=m.bpf"

typedef struct RefusedCase {
        const char *args[MAX_ARGS];
        const char *words; /* in the message */
} RefusedCase;

static const RefusedCase refused_cases[] = {
        {{"--zygote=/z", "--seccomp=s", "--machine-seccomp=m"}, "--listen is required"},
        {{"--listen", "--seccomp=s", "--machine-seccomp=m"}, "--zygote"},
        {{"--listen", "--zygote=z", "--seccomp=s", "--machine-seccomp=m"}, "absolute"},
        {{"--listen", "--zygote=/z", "--machine-seccomp=m"}, "--seccomp"},
        {{"--listen", "--zygote=/z", "--seccomp=s"}, "--machine-seccomp"},
        {{REQUIRED, "--uid=0"}, "--uid"},
        {{REQUIRED, "--uid=65536"}, "--uid"},
        {{REQUIRED, "--uid=-1"}, "--uid"},
        {{REQUIRED, "--uid=1000x"}, "--uid"},
        {{REQUIRED, "--uid="}, "--uid"},
        {{REQUIRED, "--uid=4294968296"}, "--uid"}, /* 2^32 + 1000: not cut to 1000 */
        {{REQUIRED, "--executions=0"}, "--executions"},
        {{REQUIRED, "--executions=18446744073709551616"}, "--executions"},
        {{REQUIRED, "--workspace-bytes=0"}, "--workspace-bytes"},
        {{REQUIRED, "--tmp-bytes=lots"}, "--tmp-bytes"},
        {{REQUIRED, "--setenv="}, "--setenv"},
        {{REQUIRED, "--setenv=NAME"}, "--setenv"},
        {{REQUIRED, "--setenv==VALUE"}, "--setenv"},
        {{REQUIRED, "--setenv=A=1", "--setenv=B=2", "--setenv=C=3", "--setenv=D=4", "--setenv=E=5", "--setenv=F=6",
          "--setenv=G=7", "--setenv=H=8", "--setenv=I=9"},
         "more than 8"},
        {{REQUIRED, "--bogus"}, "bad option '--bogus'"},
        {{REQUIRED, "--listen=yes"}, "bad option"},
        {{REQUIRED, "--uid"}, "bad option"},
        {{REQUIRED, "stray"}, "unexpected argument 'stray'"},
        {{"--delegate=0"}, "--delegate"},
        {{"--delegate=x"}, "--delegate"},
        {{"--delegate=100000", "--listen"}, "--delegate takes no other option"},
        {{REQUIRED, "--delegate=100000"}, "--delegate takes no other option"},
};

static void test_refused(void) {
        for (size_t i = 0; i < ELEMENTSOF(refused_cases); i++) {
                const RefusedCase *c = &refused_cases[i];
                RunnerArgs a = {.uid = 4242};
                Error e = {};
                int r = parse(c->args, &a, &e);

                tap_is_int(r, -EINVAL, "refused %zu: -EINVAL", i);
                if (!tap_ok(strstr(e.message, c->words) != NULL, "refused %zu: the message names '%s'", i, c->words))
                        tap_diag("  message: '%s'", e.message);
                tap_is_int(a.uid, 4242, "refused %zu: *ret untouched", i);
        }
}

/* The broker's command for a pool machine (nspawn/broker/broker.c start_warm()). */
static void test_pool_machine(void) {
        const char *const args[] = {"--listen", "--uid=1000", "--zygote=/usr/lib/sandboxd/sandboxd-zygote",
                                    "--seccomp=/usr/lib/sandboxd/seccomp.bpf", "--machine-seccomp=/usr/lib/sandboxd/seccomp-machine.bpf",
                                    "--import-allow=/usr/lib/sandboxd/import-allow.list", "--workspace-bytes=134217728",
                                    "--tmp-bytes=67108864", "--executions=25", "--preload=numpy,pandas",
                                    "--setenv=OPENBLAS_CORETYPE=Haswell", NULL};
        RunnerArgs a = {};
        Error e = {};

        tap_is_int(parse(args, &a, &e), 0, "a pool machine's command is taken");
        tap_ok(a.listen && !a.session && !a.help && a.delegate_uid == 0, "it listens, for executions");
        tap_is_int((long long) a.executions, 25, "--executions");
        tap_is_int(a.uid, 1000, "--uid");
        tap_is_int((long long) a.workspace_bytes, 134217728, "--workspace-bytes");
        tap_is_int((long long) a.tmp_bytes, 67108864, "--tmp-bytes");
        tap_is_str(a.zygote_path, "/usr/lib/sandboxd/sandboxd-zygote", "--zygote");
        tap_is_str(a.seccomp_path, "/usr/lib/sandboxd/seccomp.bpf", "--seccomp");
        tap_is_str(a.machine_seccomp_path, "/usr/lib/sandboxd/seccomp-machine.bpf", "--machine-seccomp");
        tap_is_str(a.import_allow, "/usr/lib/sandboxd/import-allow.list", "--import-allow");
        tap_is_str(a.preload, "numpy,pandas", "--preload");
        tap_is_int((long long) a.n_setenv, 1, "one --setenv");
        tap_is_str(a.setenv[0], "OPENBLAS_CORETYPE=Haswell", "its assignment");
}

/* The broker's command for a session's machine (session_start()), an empty --preload included. */
static void test_session_machine(void) {
        const char *const args[] = {"--listen", "--session", "--uid=1000", "--zygote=/usr/lib/sandboxd/sandboxd-zygote",
                                    "--seccomp=/usr/lib/sandboxd/seccomp.bpf", "--machine-seccomp=/usr/lib/sandboxd/seccomp-machine.bpf",
                                    "--workspace-bytes=1073741824", "--tmp-bytes=67108864", "--preload=", NULL};
        RunnerArgs a = {};
        Error e = {};

        tap_is_int(parse(args, &a, &e), 0, "a session machine's command is taken");
        tap_ok(a.listen && a.session, "it listens, for a session");
        tap_is_int((long long) a.workspace_bytes, 1073741824, "--workspace-bytes");
        tap_is_str(a.preload, "", "an empty --preload is none");
        tap_is_str(a.import_allow, "", "no --import-allow is none");
        tap_is_int((long long) a.n_setenv, 0, "no --setenv");
}

static void test_defaults_and_forms(void) {
        const char *const least[] = {REQUIRED, NULL};
        const char *const spaced[] = {"--listen", "--zygote", "/z", "--seccomp", "s", "--machine-seccomp", "m", "--uid", "65535", NULL};
        const char *const eight[] = {REQUIRED, "--setenv=A=1", "--setenv=B=2", "--setenv=C=3", "--setenv=D=4",
                                     "--setenv=E=5", "--setenv=F=6", "--setenv=G=7", "--setenv=H=", NULL};
        RunnerArgs a = {};
        Error e = {};

        tap_is_int(parse(least, &a, &e), 0, "the required options alone are taken");
        tap_ok(a.uid == 1000 && a.workspace_bytes == 128U << 20 && a.tmp_bytes == 64U << 20 && a.executions == 1,
               "the defaults: UID 1000, 128 MiB, 64 MiB, one execution");
        tap_ok(!a.session && a.preload[0] == 0 && a.import_allow[0] == 0 && a.n_setenv == 0, "no session, preload, policy or --setenv");
        tap_is_int(parse(spaced, &a, &e), 0, "an option's value may be the next argument");
        tap_ok(a.uid == 65535 && strcmp(a.zygote_path, "/z") == 0, "and means the same");
        tap_is_int(parse(eight, &a, &e), 0, "eight --setenv are taken, an empty value too");
        tap_is_str(a.setenv[7], "H=", "the last one");
}

static void test_text_room(void) {
        char fits[RUNNER_ARG_TEXT_MAX + 16], over[RUNNER_ARG_TEXT_MAX + 16];
        const char *const ok_args[] = {REQUIRED, fits, NULL}, *const over_args[] = {REQUIRED, over, NULL};
        RunnerArgs a = {};
        Error e = {};

        (void) snprintf(fits, sizeof(fits), "--preload=%0*d", RUNNER_ARG_TEXT_MAX - 1, 0);
        (void) snprintf(over, sizeof(over), "--import-allow=%0*d", RUNNER_ARG_TEXT_MAX, 0);
        tap_is_int(parse(ok_args, &a, &e), 0, "a --preload of %d bytes fits", RUNNER_ARG_TEXT_MAX - 1);
        tap_is_int((long long) strlen(a.preload), RUNNER_ARG_TEXT_MAX - 1, "whole");
        tap_is_int(parse(over_args, &a, &e), -EINVAL, "an --import-allow of %d bytes is refused, not cut", RUNNER_ARG_TEXT_MAX);
}

static void test_help_and_delegate(void) {
        const char *const help[] = {"--help", NULL}, *const help_junk[] = {"--bogus", "-h", "stray", NULL};
        const char *const delegate[] = {"--delegate=100000", NULL};
        RunnerArgs a = {};
        Error e = {};

        tap_is_int(parse(help, &a, &e), 0, "--help alone");
        tap_ok(a.help, "asks for the usage");
        a = (RunnerArgs){};
        tap_is_int(parse(help_junk, &a, &e), 0, "-h among bad arguments");
        tap_ok(a.help, "still asks for the usage");
        a = (RunnerArgs){};
        tap_is_int(parse(delegate, &a, &e), 0, "--delegate alone");
        tap_ok(a.delegate_uid == 100000 && !a.listen, "is the cgroup hand-over to that UID");
}

int main(void) {
        test_refused();
        test_pool_machine();
        test_session_machine();
        test_defaults_and_forms();
        test_text_room();
        test_help_and_delegate();
        return tap_done();
}
