/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fcgi/validate.h"
#include "lib/error.h"
#include "nspawn/unit-name.h"

struct json_object;

/* The session routes, under /v1/sessions and (run and exec only) reference 002's /session. */
typedef enum SessionAction {
        SESSION_COLLECTION, /* /v1/sessions: GET lists, POST creates */
        SESSION_ONE,        /* /v1/sessions/{id}: GET, DELETE */
        SESSION_RUN,        /* POST .../{id}/run */
        SESSION_EXEC,       /* POST .../{id}/exec */
        SESSION_PAUSE,      /* POST /v1/sessions/{id}/pause */
        SESSION_RESUME,     /* POST /v1/sessions/{id}/resume */
        SESSION_FILES,      /* GET /v1/sessions/{id}/files?dir=PATH */
        SESSION_FILE,       /* GET, PUT, DELETE /v1/sessions/{id}/files/{path} */
} SessionAction;

typedef struct SessionRoute {
        SessionAction action;
        char id[SANDBOX_ID_MAX];
        char path[4096];   /* SESSION_FILE: the file's path, percent-decoded, not yet checked */
        const char *allow; /* the methods the route takes, for a 405's Allow: */
} SessionRoute;

/* The route of a raw request path (REQUEST_URI without its query: percent-encoded, not normalized, so
 * that a path that climbs out is seen and refused, not resolved away): 0, or -ENOENT when it is none
 * of them (404); *ret->allow then lists the methods the route takes, and session_route_allows() says
 * if method is one. The id is taken as it comes: whether such a session exists is the caller's. Pure. */
int session_route_parse(const char *raw_path, SessionRoute *ret);
bool session_route_allows(const SessionRoute *route, const char *method);

/* Percent-decodes s (n bytes) into ret (size bytes, NUL-terminated): -EINVAL for a bad escape or a
 * NUL, -ENAMETOOLONG when it does not fit. plus_is_space: a query's "+". Pure. */
int percent_decode(const char *s, size_t n, bool plus_is_space, char *ret, size_t size);

/* The value of key in a query string ("a=1&dir=x%2Fy"), decoded into ret: 1 when present, 0 when
 * absent, -EINVAL when malformed. Pure. */
int query_get(const char *query, const char *key, char *ret, size_t size);

/* POST /v1/sessions: its optional body. */
typedef struct SessionCreate {
        long long ttl_s;
        struct json_object *files; /* borrowed, checked as /v1/execute's; NULL when absent */
        struct json_object *network_allow; /* borrowed, as validate_network_field() checks it; NULL: no network */
} SessionCreate;

#define SESSION_TTL_DEFAULT_S 600
#define SESSION_TTL_MAX_S 86400
#define SESSION_RUN_TIMEOUT_DEFAULT_S 30

/* body NULL: no body at all. -EINVAL and *reterr (400) on failure. Pure. */
int validate_session_create(struct json_object *body, const ValidateLimits *limits, SessionCreate *ret, Error *reterr);

/* A run's or an exec's body (reference 002): language, code, timeout; or command, timeout. */
typedef struct SessionRun {
        const char *language; /* "python", "node", "bash"; NULL for an exec */
        const char *code;     /* the code, or the command */
        size_t code_len;
        unsigned timeout_s;
} SessionRun;

/* -EINVAL and *reterr (400) on failure. Pure. */
int validate_session_run(struct json_object *body, bool exec, size_t max_code_bytes, unsigned max_timeout_s, SessionRun *ret, Error *reterr);
