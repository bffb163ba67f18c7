/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxctl: the administrator's command for a running sandboxd. Each verb is a file of its own
 * (ctl/verb-*.c) with one entry point and its own --help; sandboxctl.c parses the options every verb
 * shares and dispatches. A verb returns the process's exit status: 0, EXIT_FAILURE, or (run) the
 * snippet's own exit code. Errors go to stderr, one line, prefixed "sandboxctl: ". */

#include <stdbool.h>

typedef struct CtlOptions {
        const char *url;   /* the service's base URL: --url, else $SANDBOXD_URL, else http://127.0.0.1:8080 */
        const char *token; /* an API key for the service, when it requires one: --token, else $SANDBOXD_TOKEN; NULL: none */
        bool json;         /* --json: what a verb lists, as one JSON document on stdout */
} CtlOptions;

typedef struct CtlVerb {
        const char *name;
        const char *summary;                                     /* one line for sandboxctl --help */
        int (*run)(const CtlOptions *o, int argc, char *argv[]); /* argv[0] is the verb */
} CtlVerb;

/* The exit status of a usage error: a bad option, argument or URL. */
#define CTL_EXIT_USAGE 2

/* Prints "sandboxctl: " and the message to stderr; returns EXIT_FAILURE. */
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "sandboxctl: VERB: " and the message, then where to read more, to stderr; returns
 * CTL_EXIT_USAGE. */
int ctl_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The verbs, one file each (ctl/verb-NAME.c). */
int verb_key(const CtlOptions *o, int argc, char *argv[]);
int verb_status(const CtlOptions *o, int argc, char *argv[]);
int verb_sessions(const CtlOptions *o, int argc, char *argv[]);
int verb_machines(const CtlOptions *o, int argc, char *argv[]);
int verb_run(const CtlOptions *o, int argc, char *argv[]);
int verb_logs(const CtlOptions *o, int argc, char *argv[]);
int verb_cluster(const CtlOptions *o, int argc, char *argv[]);
int verb_drain(const CtlOptions *o, int argc, char *argv[]);
int verb_undrain(const CtlOptions *o, int argc, char *argv[]);
