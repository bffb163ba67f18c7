/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct json_object;

typedef struct ValidateLimits {
        size_t max_code_bytes;
        size_t max_stdin_bytes;
        size_t max_files;
        size_t max_file_bytes; /* decoded size of all files together */
        size_t max_return_files;
        unsigned default_timeout_s;
        unsigned max_timeout_s;
} ValidateLimits;

/* The limits of the API's routes (reference 000 for timeouts and the tool-call fields). */
extern const ValidateLimits validate_execute_limits;
extern const ValidateLimits validate_call_limits;

/* node and bash take the code as one argument (node -e, bash -c): the kernel's limit on one
 * (MAX_ARG_STRLEN), less its NUL. */
#define EXEC_ARG_CODE_MAX ((size_t) 131071)
/* Reference 004's schema: "code" has "maxLength": 2000 (characters), at most 2 attachments. */
#define EXEC_004_CODE_CHARS_MAX ((size_t) 2000)
#define EXEC_004_ATTACHMENTS_MAX ((size_t) 2)

/* A validated /v1/execute (or /execute) request. Strings and arrays are borrowed from the parsed
 * body, but files when made from /execute's attachments: the request owns those (execute_request_done). */
typedef struct ExecRequest {
        const char *code;
        size_t code_len;
        const char *language;   /* "python", "node" or "bash" */
        bool import_policy;     /* under the curated import policy */
        bool reference_004;     /* POST /execute: its shape of response */
        const char *stdin_data; /* NULL when absent */
        size_t stdin_len;
        unsigned timeout_s;
        struct json_object *files;        /* array or NULL, entries checked */
        struct json_object *owned_files;  /* files, when this request made them */
        struct json_object *return_files; /* array or NULL, entries checked */
        bool stream;                      /* the runner sends the output as it comes (lib/stream-frame.h); not the body's */
        struct json_object *network_allow; /* "network": {"allow": [...]}, entries checked; NULL: no network */
} ExecRequest;

/* A validated /v1/call request; strings and args are borrowed from the parsed body. */
typedef struct CallRequest {
        const char *image;
        const char *module;
        const char *function;
        struct json_object *args; /* object or NULL */
        unsigned timeout_s;
} CallRequest;

/* Parses a request body strictly (RFC 8259, valid UTF-8, nesting bounded) into *ret (caller puts);
 * -EINVAL if it is not JSON or not an object; -E2BIG, before json-c builds any of it, when it holds
 * more values than JSON_MAX_VALUES or JSON_MAX_CONTAINERS allow (lib/json-limits.h). */
int validate_parse_body(const char *body, size_t len, struct json_object **ret);

/* Validates a parsed /v1/execute body. On failure returns -EINVAL and fills *reterr (status 400, or
 * 502 with the sandbox's own wording for a path that escapes the working directory). */
int validate_execute(struct json_object *body, const ValidateLimits *limits, ExecRequest *ret, Error *reterr);

/* Validates a parsed POST /execute body (reference 004) into an /v1/execute request of language
 * python under the import policy; its attachments become files. -EINVAL and *reterr (400) on
 * failure; release with execute_request_done(). */
int validate_execute_004(struct json_object *body, const ValidateLimits *limits, ExecRequest *ret, Error *reterr);

void execute_request_done(ExecRequest *x);

/* The runner's request for x (nspawn/runner-request.h), borrowing its strings and arrays,
 * with the operator's caps on the output and on the returned files. */
typedef struct RunnerJob RunnerJob;
void execute_request_job(const ExecRequest *x, size_t output_cap, size_t return_cap, RunnerJob *ret);

/* The "files" field of body as /v1/execute checks it, but with no sandbox's words: a path that
 * climbs out is a 400 naming the field, as any other bad path. *ret the array (borrowed), or NULL
 * when absent. -EINVAL and *reterr (400) on failure. Pure. */
/* The "network" field (README, "Network"): absent, or {"allow": [1..EGRESS_REQUEST_MAX entries]},
 * each an egress entry (lib/egress.h). *ret the array (borrowed), NULL when absent; -EINVAL and
 * *reterr (400) otherwise. Whether the entries may be reached is the route's to say. Pure. */
int validate_network_field(struct json_object *body, struct json_object **ret, Error *reterr);

int validate_files_field(struct json_object *body, const ValidateLimits *limits, struct json_object **ret, Error *reterr);

/* Validates a parsed /v1/call body (timeouts from limits). -EINVAL and *reterr (400) on failure. */
int validate_call(struct json_object *body, const ValidateLimits *limits, CallRequest *ret, Error *reterr);
