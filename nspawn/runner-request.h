/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

struct json_object;

/* The largest output or returned-files cap a request to the runner may carry. */
#define RUNNER_CAP_MAX ((int64_t) 1 << 30)

/* One execution as the runner reads it: what the worker wrote with runner_request_new(), checked in
 * full by runner_request_parse() before the runner does anything with it. Borrowed from the parsed
 * request. */
typedef struct RunnerRequest {
        struct json_object *code;         /* string */
        const char *language;             /* "python", "node" or "bash" */
        const char *policy;               /* "none" or "curated" */
        struct json_object *stdin_text;   /* string, or NULL */
        int64_t output_cap;               /* 0..RUNNER_CAP_MAX */
        int64_t return_cap;               /* 0..RUNNER_CAP_MAX */
        struct json_object *files;        /* array of {path, content_b64}, or NULL */
        struct json_object *return_files; /* array of path strings, or NULL */
        bool stream;                      /* answered in frames, the output as it comes (lib/stream-frame.h) */
        /* The code reaches the network through the egress relay: the runner binds the sandbox's proxy
         * port and hands the socket to the worker first thing (RUNNER_EGRESS_MARK), and the code's
         * environment names it (README, "Network: egress by name"). */
        bool egress;
} RunnerRequest;

/* Where a machine has the operator's CA bundle for code with network (SANDBOXD_EGRESS_CA_BUNDLE),
 * when there is one: bootstrap.py names it in the code's environment. */
#define MACHINE_EGRESS_CA "/run/sandboxd-egress/ca.pem"

/* Where the code finds the egress proxy, in its own network namespace. */
#define RUNNER_EGRESS_PORT 3128
/* The byte that carries the sandbox's listening socket to the worker, ahead of anything else. */
#define RUNNER_EGRESS_MARK 'E'

/* One execution as the worker asks for it: what runner_request_new() writes, and nothing else.
 * Strings and arrays are borrowed; the worker checked them (fcgi/validate.c). */
typedef struct RunnerJob {
        const char *code;
        size_t code_len;
        const char *language;   /* "python", "node" or "bash" */
        bool import_policy;     /* under the curated import policy */
        const char *stdin_data; /* NULL: none */
        size_t stdin_len;
        struct json_object *files;        /* array of {path, content_b64}, or NULL */
        struct json_object *return_files; /* array of path strings, or NULL */
        bool stream;                      /* the output as it comes (lib/stream-frame.h) */
        bool egress;                      /* the code reaches the network through the egress relay */
        size_t output_cap;                /* at most RUNNER_CAP_MAX */
        size_t return_cap;                /* at most RUNNER_CAP_MAX */
} RunnerJob;

/* The worker's side: the request for job, holding the fields the runner reads and nothing else (a
 * files entry is rebuilt from its path and content, so whatever else a client put in it never
 * reaches the machine). NULL on allocation failure. */
struct json_object *runner_request_new(const RunnerJob *job);

/* The runner's side: len bytes of data parsed (nesting bounded by JSON_MAX_DEPTH, as the worker's
 * parser is) and checked field by field into *ret, the parsed root into *ret_root (the caller's to
 * put). -EINVAL with *reterr's words, which the worker passes on, or -ENOMEM. Pure: the
 * fuzzer drives it with what runner_request_new() makes of every body the worker accepts. */
int runner_request_parse(const char *data, size_t len, struct json_object **ret_root, RunnerRequest *ret, Error *reterr);
