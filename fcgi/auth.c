/* SPDX-License-Identifier: MIT */
/* API keys: a request's key is found and its quotas checked before any handler runs, in the one
 * sqlite transaction (BEGIN IMMEDIATE) that also writes the request's row. Requests are served by
 * many threads of several processes: counting a key's requests and adding this one at once is what
 * keeps two of them from both taking its last place. Without keys, there is nothing to count: the
 * row is written alone. A request refused is recorded with its key, not as an
 * execution, and never reaches a machine. The token itself is hashed at once and never stored,
 * logged or echoed; only the key's name is. */
#include <errno.h>
#include <fcgiapp.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/keys.h"
#include "db/requests.h"
#include "fcgi/auth.h"
#include "fcgi/inflight.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/session-route.h"
#include "lib/api-key.h"
#include "lib/config.h"
#include "lib/macro.h"
#include "lib/quota.h"

#define MINUTE_S 60
#define DAY_S 86400

typedef enum Quota {
        QUOTA_NONE,
        QUOTA_CONCURRENT,
        QUOTA_PER_MINUTE,
        QUOTA_CPU,
} Quota;

/* One request's admission: what it asks, and what was decided in the transaction. */
typedef struct Admission {
        const Request *req;
        const char *endpoint;
        bool needs_key;
        bool execution;   /* it runs code: held to the CPU quota */
        bool rated;       /* counted by executions-per-minute: an execution, or other work (is_rated_work()) */
        bool work;        /* it may wait (fcgi/inflight.h): control is never refused for max-concurrent */
        const char *hash; /* of the token it came with; NULL: none that could be a key */
        int64_t default_max_concurrent; /* a key's max-concurrent when its own is unset */

        bool refused; /* no key in force: 401 */
        Quota over;   /* the quota it is over: 429 */
        int64_t limit;
        unsigned retry_after_s;
        char key_name[API_KEY_NAME_MAX + 1];
} Admission;

/* Whether a request runs code: /v1/execute, /execute, /v1/call, a session's run and exec. */
static bool is_execution(const Request *req, const Route *route) {
        SessionRoute s;

        if (!route || strcmp(req->method, "POST") != 0)
                return false;
        switch (route->id) {
        case ROUTE_EXECUTE:
        case ROUTE_EXECUTE_004:
        case ROUTE_CALL:
                return true;
        case ROUTE_SESSIONS:
                return session_route_parse(req->raw_path, &s) == 0 && (s.action == SESSION_RUN || s.action == SESSION_EXEC);
        default:
                return false;
        }
}

/* Work other than executions that executions-per-minute counts: a session create, a file upload
 * and a pause, each of which writes to disk or stops a machine. */
static bool is_rated_work(const Request *req, const Route *route) {
        SessionRoute s;

        if (!route || route->id != ROUTE_SESSIONS || session_route_parse(req->raw_path, &s) < 0)
                return false;
        switch (s.action) {
        case SESSION_COLLECTION:
        case SESSION_PAUSE:
                return strcmp(req->method, "POST") == 0;
        case SESSION_FILE:
                return strcmp(req->method, "PUT") == 0;
        default:
                return false;
        }
}

/* A windowed quota of the key's: 0 within it, else the seconds until it frees (a->over set). */
static int window_check(sqlite3 *db, Admission *a, KeyWindow what, int64_t limit, int64_t window_s, Quota quota) {
        cleanup_free QuotaUse *uses = NULL;
        int64_t used = 0;
        size_t n = 0;
        unsigned wait_s;
        int r;

        /* The sum first (an index's range): the uses one by one only to say when it frees. */
        r = db_key_used(db, a->key_name, what, window_s, &used);
        if (r < 0 || used < limit)
                return r;
        r = db_key_uses(db, a->key_name, what, window_s, &uses, &n);
        if (r < 0)
                return r;
        wait_s = quota_retry_after_s(uses, n, limit, window_s * 1000);
        if (wait_s > 0) {
                a->over = quota;
                a->retry_after_s = wait_s;
        }
        return 0;
}

static int quota_check(sqlite3 *db, const ApiKey *k, Admission *a) {
        /* Every key has one: no key may take every machine. */
        int64_t max_concurrent = k->max_concurrent > 0 ? k->max_concurrent : a->default_max_concurrent;
        int r;

        /* Control (the pool's state, a session's status) ends in milliseconds: an agent whose work
         * fills its places still sees how that work is doing. */
        if (max_concurrent > 0 && a->work) {
                int64_t in_flight = 0;

                r = db_key_in_flight(db, k->name, &in_flight);
                if (r < 0)
                        return r;
                if (in_flight >= max_concurrent) {
                        /* No window to wait for: one may end any moment. */
                        a->over = QUOTA_CONCURRENT;
                        a->limit = max_concurrent;
                        a->retry_after_s = 1;
                        return 0;
                }
        }
        if (a->rated && k->executions_per_minute > 0) {
                a->limit = k->executions_per_minute;
                r = window_check(db, a, KEY_WINDOW_EXECUTIONS, k->executions_per_minute, MINUTE_S, QUOTA_PER_MINUTE);
                if (r < 0 || a->over)
                        return r;
        }
        if (a->execution && k->cpu_seconds_per_day > 0) {
                a->limit = k->cpu_seconds_per_day;
                r = window_check(db, a, KEY_WINDOW_CPU, k->cpu_seconds_per_day * 1000, DAY_S, QUOTA_CPU);
                if (r < 0 || a->over)
                        return r;
        }
        return 0;
}

/* The key in force whose hash is the token's, looked up by that hash. The search's time depends on
 * the presented token's digest and on the stored digests near it in the index: what it could leak
 * is how close the digest of a token the client chose is to a stored one, and the client knows its
 * own digest already. Knowing the stored digests themselves would not help either: a key is its
 * token, and finding a token with a given SHA-256 is a preimage attack. What could still leak is
 * whether the found row really is the token's, should a lookup ever match loosely (a collation, a
 * prefix): that is why the digest found is compared again, whole and in constant time. */
static int key_find(sqlite3 *db, const char *hash, ApiKey *ret) {
        ApiKey k;
        int r;

        r = db_key_find(db, hash, &k);
        if (r < 0)
                return r;
        if (!api_key_hash_equal(hash, k.token_sha256))
                return -ENOENT;
        *ret = k;
        return 0;
}

/* The request's row, marked as counted by executions-per-minute when it is let in as such. */
static int admission_record(sqlite3 *db, const Admission *a) {
        bool admitted = !a->refused && a->over == QUOTA_NONE;
        int r = db_request_begin_key(db, a->req->id, a->req->route, a->endpoint, (int) getpid(), a->key_name[0] ? a->key_name : NULL,
                                     a->execution && admitted);

        if (r >= 0 && a->rated && admitted && a->key_name[0])
                r = db_request_set_rated(db, a->req->id);
        return r;
}

static int admit_locked(sqlite3 *db, void *userdata) {
        Admission *a = userdata;
        ApiKey k;
        int r;

        if (a->needs_key) {
                r = a->hash ? key_find(db, a->hash, &k) : -ENOENT;
                if (r == -ENOENT)
                        a->refused = true;
                else if (r < 0)
                        return r;
                else {
                        memcpy(a->key_name, k.name, sizeof(a->key_name));
                        r = quota_check(db, &k, a);
                        if (r < 0)
                                return r;
                }
        }
        return admission_record(db, a);
}

/* A request made within one let in already (an MCP tool call): its key's quotas as its route's own
 * request would meet them, but max-concurrent, which the request it is made in was counted for. */
static int admit_inner_locked(sqlite3 *db, void *userdata) {
        Admission *a = userdata;
        ApiKey k;
        int r;

        r = db_key_get(db, a->key_name, &k);
        if (r == -ENOENT) {
                a->refused = true; /* revoked since */
                return 0;
        }
        if (r < 0)
                return r;
        r = quota_check(db, &k, a);
        if (r < 0 || a->over != QUOTA_NONE)
                return r;
        if (a->execution)
                return db_request_set_execution(db, a->req->id);
        /* One more: the request's row may count a batch's JSON-RPC requests already. */
        return a->rated ? db_request_add_rated(db, a->req->id, 1) : 0;
}

/* A batch's n JSON-RPC requests, each one use of executions-per-minute. */
typedef struct BatchAdmission {
        Admission a;
        int64_t n;
        int64_t admitted;
} BatchAdmission;

static int admit_batch_locked(sqlite3 *db, void *userdata) {
        BatchAdmission *b = userdata;
        ApiKey k;
        int64_t used = 0;
        int r;

        r = db_key_get(db, b->a.key_name, &k);
        if (r == -ENOENT) {
                b->a.refused = true; /* revoked since */
                return 0;
        }
        if (r < 0)
                return r;
        b->admitted = b->n;
        if (k.executions_per_minute > 0) {
                r = db_key_used(db, k.name, KEY_WINDOW_EXECUTIONS, MINUTE_S, &used);
                if (r < 0)
                        return r;
                b->admitted = used >= k.executions_per_minute ? 0 : k.executions_per_minute - used;
                if (b->admitted > b->n)
                        b->admitted = b->n;
        }
        r = b->admitted > 0 ? db_request_add_rated(db, b->a.req->id, b->admitted) : 0;
        if (r < 0 || b->admitted == b->n)
                return r;
        /* The rest are over: when the window frees, counting those just let in. */
        b->a.limit = k.executions_per_minute;
        return window_check(db, &b->a, KEY_WINDOW_EXECUTIONS, k.executions_per_minute, MINUTE_S, QUOTA_PER_MINUTE);
}

int auth_admit_batch(Request *req, Context *ctx, unsigned n, unsigned *ret_admitted, Error *reterr) {
        BatchAdmission b = {.a = {.req = req}, .n = n};
        int r;

        /* Without a key, nothing to count against. */
        if (!ctx->config->api_keys || !req->key_name[0]) {
                *ret_admitted = n;
                return 0;
        }
        memcpy(b.a.key_name, req->key_name, sizeof(b.a.key_name));
        r = db_transaction(ctx->db, admit_batch_locked, &b);
        if (r < 0)
                return r;
        if (b.a.refused) {
                *ret_admitted = 0;
                return error_set_status(reterr, 401, -EPERM, MSG_UNAUTHORIZED);
        }
        *ret_admitted = (unsigned) b.admitted;
        if (b.admitted < b.n) {
                req->retry_after_s = b.a.retry_after_s;
                return error_set_status(reterr, 429, -EBUSY, MSG_QUOTA_PER_MINUTE, (long long) b.a.limit, b.a.retry_after_s);
        }
        return 0;
}

static int reply_refusal(Request *req, const Admission *a) {
        req->retry_after_s = a->retry_after_s;
        switch (a->over) {
        case QUOTA_CONCURRENT:
                return reply_error(req, 429, MSG_QUOTA_CONCURRENT, (long long) a->limit);
        case QUOTA_PER_MINUTE:
                return reply_error(req, 429, MSG_QUOTA_PER_MINUTE, (long long) a->limit, a->retry_after_s);
        case QUOTA_CPU:
                return reply_error(req, 429, MSG_QUOTA_CPU, (long long) a->limit, a->retry_after_s);
        default:
                return reply_error(req, 401, MSG_UNAUTHORIZED);
        }
}

int auth_check_only(Request *req, Context *ctx, const Route *route, bool needs_key) {
        char token[API_KEY_BEARER_MAX + 1], hash[API_KEY_HASH_SIZE];
        bool have = false;
        ApiKey k;
        int r;

        if (!needs_key)
                return reply_text(req, 204, "text/plain", "", 0), 0;
        if (api_key_parse_bearer(FCGX_GetParam("HTTP_AUTHORIZATION", req->fcgx->envp), token) == 0) {
                /* A digest that could not be made is no key: never a lookup on what it left. */
                have = api_key_hash(token, hash) == 0;
                explicit_bzero(token, sizeof(token));
        }
        r = have ? key_find(ctx->db, hash, &k) : -ENOENT;
        if (r >= 0)
                return reply_text(req, 204, "text/plain", "", 0), 0;
        if (r != -ENOENT)
                return r;
        /* Refused: this is the request's only row and answer (nginx answers the client 401 itself). */
        r = db_request_begin_key(ctx->db, req->id, req->route, route ? route->path : NULL, (int) getpid(), NULL, false);
        if (r < 0)
                return r;
        (void) reply_error(req, 401, MSG_UNAUTHORIZED);
        return 1;
}

int auth_begin(Request *req, Context *ctx, const Route *route, bool needs_key) {
        char token[API_KEY_BEARER_MAX + 1], hash[API_KEY_HASH_SIZE];
        Admission a = {
                .req = req,
                .endpoint = route ? route->path : NULL,
                .needs_key = needs_key,
                .execution = is_execution(req, route),
                .rated = is_execution(req, route) || is_rated_work(req, route),
                .default_max_concurrent = ctx->config->key_max_concurrent,
                .work = inflight_load(req->method, req->path, req->raw_path) == LOAD_WORK,
        };
        int r;

        if (needs_key && api_key_parse_bearer(FCGX_GetParam("HTTP_AUTHORIZATION", req->fcgx->envp), token) == 0) {
                if (api_key_hash(token, hash) == 0)
                        a.hash = hash;
                explicit_bzero(token, sizeof(token));
        }
        /* Without a key to count against, the row alone: one write, no transaction that would take
         * sqlite's write lock before it is needed. */
        r = needs_key ? db_transaction(ctx->db, admit_locked, &a) : admission_record(ctx->db, &a);
        if (r < 0)
                return r;
        memcpy(req->key_name, a.key_name, sizeof(req->key_name));
        if (a.refused || a.over != QUOTA_NONE)
                (void) reply_refusal(req, &a);
        return 0;
}

int auth_admit_inner(Request *req, Context *ctx, const Route *route) {
        Admission a = {
                .req = req,
                .endpoint = route->path,
                .execution = is_execution(req, route),
                .rated = is_execution(req, route) || is_rated_work(req, route),
        };
        int r;

        if (!a.rated)
                return 0;
        /* Without a key, nothing to count against: an execution is still recorded as one. */
        if (!ctx->config->api_keys || !req->key_name[0])
                return a.execution ? db_request_set_execution(ctx->db, req->id) : 0;
        memcpy(a.key_name, req->key_name, sizeof(a.key_name));
        r = db_transaction(ctx->db, admit_inner_locked, &a);
        if (r < 0)
                return r;
        if (a.refused || a.over != QUOTA_NONE) {
                (void) reply_refusal(req, &a);
                return 1;
        }
        return 0;
}
