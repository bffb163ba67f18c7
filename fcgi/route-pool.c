/* SPDX-License-Identifier: MIT */
/* GET /v1/pool: the warm pool's counters, from sqlite. */
#include <json-c/json.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

int route_pool(Request *req, Context *ctx) {
        cleanup_json struct json_object *out = NULL;
        PoolCounts c;
        int r;

        r = db_pool_counts(ctx->db, &c);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to read the pool counters: %s", db_errmsg(ctx->db));
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        }

        out = json_object_new_object();
        if (!out ||
            json_object_object_add(out, "warm", json_object_new_int64(c.ready)) < 0 ||
            json_object_object_add(out, "target", json_object_new_int64(ctx->config->pool_target)) < 0 ||
            json_object_object_add(out, "in_flight", json_object_new_int64(c.claimed)) < 0 ||
            json_object_object_add(out, "created_total", json_object_new_int64(c.created_total)) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        return reply_json(req, 200, out);
}
