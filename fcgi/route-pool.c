/* SPDX-License-Identifier: MIT */
/* GET /v1/pool: the warm pool's counters, from sqlite; on a cluster's member, the cluster's. */
#include <json-c/json.h>
#include <stdlib.h>

#include "cluster/member-record.h"
#include "db/cluster-db.h"
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

/* On a cluster's member: the cluster's totals, from the members' records as sandboxd-member mirrors
 * them from etcd (each written within 200 ms of a change), so that the front's answer is the same
 * whichever member gives it. A member the registry no longer has (its lease ended) counts no more. */
static int cluster_counts(sqlite3 *db, PoolCounts *ret, int64_t *ret_target) {
        char **records = NULL;
        size_t n = 0;
        int r = db_cluster_members(db, &records, &n);

        if (r < 0)
                return r;
        *ret = (PoolCounts){};
        *ret_target = 0;
        for (size_t i = 0; i < n; i++) {
                MemberRecord m;

                if (member_record_parse(records[i], &m) >= 0) {
                        ret->ready += m.warm;
                        ret->claimed += m.in_flight;
                        ret->created_total += m.created_total;
                        *ret_target += m.target;
                }
                free(records[i]);
        }
        free(records);
        return 0;
}

int route_pool(Request *req, Context *ctx) {
        cleanup_json struct json_object *out = NULL;
        int64_t target = ctx->config->pool_target;
        PoolCounts c;
        int r;

        r = ctx->config->etcd[0] ? cluster_counts(ctx->db, &c, &target) : db_pool_counts(ctx->db, &c);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to read the pool counters: %s", db_errmsg(ctx->db));
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        }

        out = json_object_new_object();
        if (!out ||
            json_object_object_add(out, "warm", json_object_new_int64(c.ready)) < 0 ||
            json_object_object_add(out, "target", json_object_new_int64(target)) < 0 ||
            json_object_object_add(out, "in_flight", json_object_new_int64(c.claimed)) < 0 ||
            json_object_object_add(out, "created_total", json_object_new_int64(c.created_total)) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        return reply_json(req, 200, out);
}
