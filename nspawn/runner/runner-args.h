/* SPDX-License-Identifier: MIT */
#pragma once

/* The runner's command line (runner.c), read into RunnerArgs; pure, so that the unit tests hold
 * every option to its meaning. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Error Error;

/* The --setenv assignments a runner takes, beyond the snippets' own environment (runner-common.c). */
#define RUNNER_SETENV_MAX 8
/* The room for --preload and --import-allow, as ZygoteConfig carries them (zygote-proto.h). */
#define RUNNER_ARG_TEXT_MAX 256

typedef struct RunnerArgs {
        bool help;             /* --help: the usage, nothing else */
        uint32_t delegate_uid; /* --delegate=UID, on the host, alone (cgroup.h); 0: not asked */
        bool listen;           /* --listen: standard input is the listening socket */
        bool session;          /* --session: one session's machine, not --executions */
        uint64_t executions;   /* a pool machine retires after this many */
        uint32_t uid;          /* the sandbox user, 1..65535 */
        uint64_t workspace_bytes;
        uint64_t tmp_bytes;
        /* Borrowed from argv: */
        const char *zygote_path;               /* absolute */
        const char *seccomp_path;              /* the code's filter */
        const char *machine_seccomp_path;      /* the machine's: the runner's, the zygote's */
        const char *setenv[RUNNER_SETENV_MAX]; /* NAME=VALUE, NAME not empty */
        size_t n_setenv;
        char preload[RUNNER_ARG_TEXT_MAX];      /* modules, comma-separated; "" for none */
        char import_allow[RUNNER_ARG_TEXT_MAX]; /* a path; "" for none */
} RunnerArgs;

/* argv into *ret (its strings borrowed from argv), defaults for what is not given; getopt_long()'s
 * state is reset first, so it may be called again. 0, or -EINVAL with reterr's words for a bad or
 * missing option; with --help, 0 and ret->help set, whatever else was given. */
int runner_args_parse(int argc, char *argv[], RunnerArgs *ret, Error *reterr);

/* The usage text onto f. */
void runner_args_usage(FILE *f);
