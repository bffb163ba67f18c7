/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxctl's calls to sandboxd's HTTP API (docs/openapi.json), and how their failures read. */

#include <stddef.h>

typedef struct CtlOptions CtlOptions;
struct json_object;

/* METHOD path on the service of o, with a JSON body when body is not NULL. On a 2xx answer, 0 and
 * its JSON body in *ret (owned; NULL for an empty body) and its X-Request-Id in ret_request_id (64
 * bytes; either may be NULL). Otherwise prints "sandboxctl: <status> <error>" (the API's
 * {"error": ...}) or why no answer came, and returns -errno. */
int ctl_api(const CtlOptions *o, const char *method, const char *path, const char *body, size_t body_len,
            struct json_object **ret, char *ret_request_id);
