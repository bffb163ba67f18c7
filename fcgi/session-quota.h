/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

typedef struct Request Request;
typedef struct Context Context;

/* The quotas of session work (docs/security.md, "Quotas"), kept apart from the session routes. A
 * refusal is answered here: -EDQUOT (429, a key's session cap) or -ENOSPC (507, the disk reserve)
 * then mean the request has its answer. */

/* SANDBOXD_DISK_RESERVE_BYTES: 0 when the state filesystem has more free than the reserve (or no
 * reserve is set), else -ENOSPC, answered 507. Called before anything is written. */
int session_disk_reserve(Request *req, Context *ctx);

/* db_session_create() held to the request's key's session caps and to the disk reserve: 0, -EUSERS
 * (too many active in all: the caller's to answer), -EDQUOT or -ENOSPC (answered), or -errno. */
int session_quota_create(Request *req, Context *ctx, const char *id, int64_t ttl_s);

/* db_session_resume() likewise: 0, -EAGAIN, -ENOENT, -EUSERS, -EDQUOT or -ENOSPC (answered), or
 * -errno. */
int session_quota_resume(Request *req, Context *ctx, const char *id);

/* Before a session's machine is stopped (paused or deleted): what its sandbox used since its last
 * run is asked of its runner and recorded, billed to its key. Best effort: a machine that does not
 * answer has nothing to bill. */
void session_quota_bill(Request *req, Context *ctx, const char *id, const char *event);
