/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/session-record.h"
#include "db/cluster-db.h"
#include "db/db.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/session-view.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/session-state.h"

DEFINE_JSON_CLEANUP

/* RFC 3339, UTC, to the second, as reference 002 writes its times. */
static struct json_object *time_json(double t) {
        time_t s = (time_t) t;
        struct tm tm;
        char buf[32];

        if (!gmtime_r(&s, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return NULL;
        return json_object_new_string(buf);
}

/* What the API calls a session's state: one being paused is paused already for its clients. */
static const char *state_word(const Session *s) {
        return session_state_from_string(s->state) == SESSION_PAUSING ? session_state_to_string(SESSION_PAUSED) : s->state;
}

/* What a session made with network may reach, as its create asked: "network": {"allow": [...]}
 * in o. Nothing for one made without; nor, said in the journal, when its row cannot be read now
 * (the session is no less there). -ENOMEM. */
static int add_network(struct json_object *o, sqlite3 *db, const char *id) {
        cleanup_free char *text = NULL;
        cleanup_json struct json_object *network = NULL, *allow = NULL;
        int r = db_session_network(db, id, &text);

        if (r < 0 || !text) {
                if (r < 0 && r != -ENOENT)
                        (void) log_warning_errno(r, "Failed to read the network of session '%s': %s", id, db_errmsg(db));
                return 0;
        }
        allow = json_tokener_parse(text);
        if (!json_object_is_type(allow, json_type_array)) {
                (void) log_warning_errno(EBADMSG, "The network of session '%s' is unreadable", id);
                return 0;
        }
        network = json_object_new_object();
        if (!network || json_object_object_add(network, "allow", allow) < 0)
                return -ENOMEM;
        allow = NULL; /* network's now */
        if (json_object_object_add(o, "network", network) < 0)
                return -ENOMEM;
        network = NULL;
        return 0;
}

struct json_object *session_json(const Session *s, bool brief, sqlite3 *db) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if ((!brief && json_object_object_add(o, "session_id", json_object_new_string(s->id)) < 0) ||
            json_object_object_add(o, "state", json_object_new_string(state_word(s))) < 0 ||
            (!brief && json_object_object_add(o, "created_at", time_json(s->created_at)) < 0) ||
            json_object_object_add(o, "last_used", time_json(s->last_used)) < 0 ||
            json_object_object_add(o, "expires_at", time_json(s->last_used + (double) s->ttl_s)) < 0 ||
            json_object_object_add(o, "run_count", json_object_new_int64(s->run_count)) < 0 ||
            (!brief && json_object_object_add(o, "ttl_s", json_object_new_int64(s->ttl_s)) < 0))
                return NULL;
        if (!brief && s->paused_at > 0 && json_object_object_add(o, "paused_at", time_json(s->paused_at)) < 0)
                return NULL;
        if (!brief && db && add_network(o, db, s->id) < 0)
                return NULL;
        return TAKE_PTR(o);
}

bool session_visible(const Request *req, const Context *ctx, const Session *s) {
        return !ctx->config->api_keys || (req->key_name[0] && strcmp(s->key_name, req->key_name) == 0);
}

/* The sessions of list the request's key may see, added to out; db for their network (this
 * member's own sessions only). */
static int sessions_add(Request *req, Context *ctx, const Session *list, size_t n, sqlite3 *db, struct json_object *out) {
        for (size_t i = 0; i < n; i++) {
                struct json_object *one;

                if (!session_visible(req, ctx, &list[i]))
                        continue;
                one = session_json(&list[i], false, db);
                if (!one || json_object_array_add(out, one) < 0) {
                        json_object_put(one);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* On a cluster's member, the other members' sessions too, as their mirrored lists have them
 * (cluster/session-record.h: at most some 200 ms behind). */
static int cluster_sessions_add(Request *req, Context *ctx, struct json_object *out) {
        char **records = NULL;
        size_t n = 0;
        int r = db_cluster_sessions(ctx->db, &records, &n);

        for (size_t i = 0; i < n; i++) {
                Session *list = NULL;
                size_t k = 0;

                if (r >= 0 && session_record_parse(records[i], &list, &k) >= 0)
                        r = sessions_add(req, ctx, list, k, NULL, out);
                free(list);
                free(records[i]);
        }
        free(records);
        return r;
}

int session_list(Request *req, Context *ctx) {
        cleanup_json struct json_object *out = json_object_new_object(), *list = json_object_new_array();
        cleanup_free Session *sessions = NULL;
        size_t n = 0;
        int r;

        if (!out || !list)
                return -ENOMEM;
        r = db_session_list(ctx->db, &sessions, &n);
        if (r >= 0 && ctx->config->etcd[0])
                r = cluster_sessions_add(req, ctx, list);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        r = sessions_add(req, ctx, sessions, n, ctx->db, list);
        if (r < 0)
                return r;
        if (json_object_object_add(out, "sessions", TAKE_PTR(list)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

