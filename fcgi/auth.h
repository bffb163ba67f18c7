/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

typedef struct Request Request;
typedef struct Context Context;
typedef struct Route Route;
typedef struct Error Error;

/* Records the request's arrival (its sqlite row). When API keys are on (SANDBOXD_API_KEYS) and the
 * request needs one (needs_key: a route was matched, and it is not /metrics), its key is found and
 * its quotas checked in the same transaction, and a request refused is answered here: 401 without a
 * key in force, 429 over a quota (req->status is set then). route: the one matched, NULL for none.
 * 0 once the row is written; -errno when it could not be (nothing was answered). */
int auth_begin(Request *req, Context *ctx, const Route *route, bool needs_key);

/* nginx's auth_request, before it reads a request's body (nginx/sandboxd.conf): the request's key
 * alone is checked (no quota, no body). Let through (keys off, no key needed, or a key in force):
 * answered 204, nothing recorded, 0; the request itself comes next and is recorded then. Refused:
 * its row written and answered 401 (audited as any request), 1. -errno when the database could not
 * be read or written (nothing answered). */
int auth_check_only(Request *req, Context *ctx, const Route *route, bool needs_key);

/* The quotas of a request made within one let in already (an MCP tool call, req's method and path
 * set to its REST request's): executions-per-minute and cpu-seconds-per-day as that route meets
 * them, and the request's row then counts as it would. 0: let in; 1: refused and answered (429,
 * or 401 for a key revoked since); -errno when the database failed (nothing answered). */
int auth_admit_inner(Request *req, Context *ctx, const Route *route);

/* An MCP batch's n JSON-RPC requests, each counted against the key's executions-per-minute as one
 * use (the /mcp request's row counts them), as far as the quota lets them in: *ret_admitted, the
 * first ones of the batch, may be served. 0 when all are; -EBUSY and *reterr's words (429, its
 * Retry-After set on req) when only *ret_admitted are; -EPERM (401) for a key revoked since;
 * -errno when the database failed. Without API keys every one is let in, uncounted. */
int auth_admit_batch(Request *req, Context *ctx, unsigned n, unsigned *ret_admitted, Error *reterr);
