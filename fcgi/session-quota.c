/* SPDX-License-Identifier: MIT */
/* Session work under quotas: an API key's caps on its sessions (active, kept, their disks), the
 * disk reserve of the state filesystem, and the billing of a session's CPU between runs. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "db/db.h"
#include "db/keys.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/session-quota.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/quota.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/session-usage.h"

/* The runner answers a usage op at once; a machine that does not is stopped unbilled. */
#define USAGE_TIMEOUT_USEC (5 * USEC_PER_SEC)

/* The request's key and its session caps: false when it has none to hold it to. */
static bool key_caps(const Request *req, Context *ctx, ApiKey *ret_key, QuotaSessionCaps *ret) {
        if (!ctx->config->api_keys || !req->key_name[0] || db_key_get(ctx->db, req->key_name, ret_key) < 0)
                return false;
        *ret = (QuotaSessionCaps){
                .max_active = ret_key->max_sessions,
                .max_kept = ret_key->max_paused_sessions,
                .disk_bytes = ret_key->session_disk_bytes,
                .disk_each = ctx->config->session_disk_bytes,
        };
        return ret->max_active > 0 || ret->max_kept > 0 || ret->disk_bytes > 0;
}

static int refusal_reply(Request *req, Context *ctx, const ApiKey *k, const SessionRefusal *f) {
        unsigned wait_s = quota_seconds_until((double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC, f->free_at);

        req->retry_after_s = wait_s;
        switch (f->which) {
        case QUOTA_SESSION_ACTIVE:
                (void) reply_error(req, 429, MSG_QUOTA_SESSIONS, (long long) k->max_sessions, wait_s);
                break;
        case QUOTA_SESSION_KEPT:
                (void) reply_error(req, 429, MSG_QUOTA_PAUSED, (long long) k->max_paused_sessions, wait_s);
                break;
        default:
                (void) reply_error(req, 429, MSG_QUOTA_DISK, (long long) k->session_disk_bytes,
                                   (unsigned long long) ctx->config->session_disk_bytes, wait_s);
                break;
        }
        return -EDQUOT;
}

int session_disk_reserve(Request *req, Context *ctx) {
        uint64_t reserve = ctx->config->disk_reserve_bytes, free_bytes;
        struct statvfs st;

        if (reserve == 0)
                return 0;
        /* The sessions' disks, and (by default) the database, are on this filesystem. */
        if (statvfs(ctx->config->session_dir, &st) < 0) {
                (void) log_warning_errno(errno, "Failed to read the free space of '%s', ignoring", ctx->config->session_dir);
                return 0;
        }
        /* What an unprivileged writer may still use: the root-reserved blocks are not ours to count. */
        free_bytes = (uint64_t) st.f_bavail * (uint64_t) st.f_frsize;
        if (free_bytes >= reserve)
                return 0;
        (void) reply_error(req, 507, MSG_DISK_RESERVE, (unsigned long long) free_bytes, (unsigned long long) reserve);
        return -ENOSPC;
}

int session_quota_create(Request *req, Context *ctx, const char *id, int64_t ttl_s) {
        QuotaSessionCaps caps;
        SessionRefusal refusal = {};
        ApiKey k = {};
        bool capped;
        int r;

        r = session_disk_reserve(req, ctx);
        if (r < 0)
                return r;
        capped = key_caps(req, ctx, &k, &caps);
        r = db_session_create_capped(ctx->db, id, ttl_s, ctx->config->sessions_max, req->key_name[0] ? req->key_name : NULL,
                                     capped ? &caps : NULL, (double) ctx->config->session_retain_s, &refusal);
        if (r == -EDQUOT)
                return refusal_reply(req, ctx, &k, &refusal);
        return r;
}

int session_quota_resume(Request *req, Context *ctx, const char *id) {
        QuotaSessionCaps caps;
        SessionRefusal refusal = {};
        ApiKey k = {};
        bool capped;
        int r;

        /* Its machine mounts its disk again, and writes to it from then on. */
        r = session_disk_reserve(req, ctx);
        if (r < 0)
                return r;
        capped = key_caps(req, ctx, &k, &caps);
        r = db_session_resume_capped(ctx->db, id, ctx->config->sessions_max, req->key_name[0] ? req->key_name : NULL, capped ? &caps : NULL,
                                     &refusal);
        if (r == -EDQUOT)
                return refusal_reply(req, ctx, &k, &refusal);
        return r;
}

void session_quota_bill(Request *req, Context *ctx, const char *id, const char *event) {
        char path[POOL_SOCKET_MAX];
        int64_t cpu_ms = 0;
        int r;

        session_socket_path(id, path, sizeof(path));
        r = session_usage_fetch(path, now_usec(CLOCK_MONOTONIC) + USAGE_TIMEOUT_USEC, &cpu_ms);
        if (r < 0 || cpu_ms <= 0)
                return;
        r = db_session_usage_add(ctx->db, id, event, req->id, cpu_ms);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record the CPU time of session '%s' since its last run, ignoring: %s", id, db_errmsg(ctx->db));
}
