/* SPDX-License-Identifier: MIT */
/* What a member keeps of the cluster's shared state in its own sqlite, so that the workers, which
 * reach no network (their unit allows AF_UNIX alone), read it there as they read everything else:
 * the members' records (GET /v1/pool's totals), the other members' sessions (GET /v1/sessions), their
 * use of each key (which the quota checks add to this member's own) and the API keys
 * (cluster/key-record.h). It reads
 * /sandboxd/ whole, then follows etcd's watch of it: a key added or revoked on any member is in
 * force here within milliseconds. Its etcd calls and sqlite writes run on a thread of its own
 * (cluster/follow.h), its retries on the member's loop. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/etcd.h"
#include "cluster/follow.h"
#include "cluster/key-record.h"
#include "cluster/logs-ask.h"
#include "cluster/member-record.h"
#include "cluster/mirror.h"
#include "cluster/session-record.h"
#include "db/cluster-db.h"
#include "db/db.h"
#include "db/keys.h"
#include "db/session-revoke.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/session-state.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "lib/usage-record.h"

#define MIRROR_PREFIX "/sandboxd/"

typedef struct Mirror {
        const Config *config;
        sqlite3 *db;
        Etcd *etcd;
} Mirror;

/* The pool manager pauses a revoked key's sessions at once: it watches this file (session-revoke.h). */
static void revoke_stamp_touch(const Mirror *m) {
        char path[4096];
        int fd;

        if (db_revoke_stamp_path(m->config->db_path, path, sizeof(path)) < 0)
                return;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
                (void) close(fd);
}

static void key_apply(Mirror *m, const char *name, const char *value) {
        ApiKey k, old;
        bool was_in_force;
        int r;

        if (!value) {
                /* sandboxctl revokes and never deletes; a key deleted from etcd by hand is revoked,
                 * rather than left in force here with nobody able to revoke it. */
                r = db_key_revoke(m->db, name);
                if (r >= 0) {
                        log_info("Member: key '%s' deleted from etcd: revoked", name);
                        revoke_stamp_touch(m);
                }
                return;
        }
        if (key_record_parse(value, &k) < 0 || strcmp(k.name, name) != 0) {
                log_warning("Member: ignoring the key record %s%s, which is no key", KEY_PREFIX, name);
                return;
        }
        was_in_force = db_key_get(m->db, k.name, &old) >= 0;
        r = db_key_put(m->db, &k);
        if (r < 0) {
                (void) log_warning_errno(r, "Member: cannot store the key '%s': %s", k.name, db_errmsg(m->db));
                return;
        }
        if (k.revoked_at[0] && was_in_force) {
                log_info("Member: key '%s' revoked", k.name);
                revoke_stamp_touch(m);
        } else if (!k.revoked_at[0] && !was_in_force)
                log_info("Member: key '%s' in force", k.name);
}

static void member_apply(Mirror *m, const char *name, const char *value) {
        MemberRecord rec;
        int r;

        if (!value)
                r = db_cluster_member_delete(m->db, name);
        else if (member_record_parse(value, &rec) < 0 || strcmp(rec.name, name) != 0) {
                log_warning("Member: ignoring %s%s, which is no member's record", MEMBER_PREFIX, name);
                return;
        } else
                r = db_cluster_member_put(m->db, name, value);
        if (r < 0)
                (void) log_warning_errno(r, "Member: cannot store member %s's record: %s", name, db_errmsg(m->db));
}

/* A key's sessions on another member, by state, as its session caps count them (db/sessions.c). */
static int session_counts(const Session *list, size_t n, UsageRow **ret, size_t *ret_n) {
        UsageRow *rows = calloc(2 * n + 1, sizeof(*rows));
        size_t k = 0;

        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *kind = session_state_from_string(list[i].state) == SESSION_PAUSED ? "sessions_paused" : "sessions_active";
                size_t j;

                if (!list[i].key_name[0])
                        continue;
                for (j = 0; j < k; j++)
                        if (strcmp(rows[j].key, list[i].key_name) == 0 && strcmp(rows[j].kind, kind) == 0)
                                break;
                if (j == k) {
                        (void) snprintf(rows[k].key, sizeof(rows[k].key), "%s", list[i].key_name);
                        (void) snprintf(rows[k].kind, sizeof(rows[k].kind), "%s", kind);
                        k++;
                }
                rows[j].amount++;
        }
        *ret = rows;
        *ret_n = k;
        return 0;
}

/* Another member's sessions; this member's own are in its sessions table already. */
static void sessions_apply(Mirror *m, const char *member, const char *value) {
        cleanup_free Session *list = NULL;
        cleanup_free UsageRow *counts = NULL;
        size_t n = 0, k = 0;
        int r;

        if (strcmp(member, m->config->member) == 0)
                return;
        if (!value) {
                r = db_cluster_sessions_delete(m->db, member);
                if (r >= 0)
                        r = db_cluster_usage_replace(m->db, member, true, NULL, 0);
        } else if (!member_name_valid(member) || session_record_parse(value, &list, &n) < 0) {
                log_warning("Member: ignoring %s%s, which is no list of sessions", SESSIONS_PREFIX, member);
                return;
        } else {
                r = db_cluster_sessions_put(m->db, member, value);
                if (r >= 0)
                        r = session_counts(list, n, &counts, &k);
                if (r >= 0)
                        r = db_cluster_usage_replace(m->db, member, true, counts, k); /* NOLINT(clang-analyzer-unix.Malloc): counts is cleanup_free, unseen by clang-analyzer 14 */
        }
        if (r < 0)
                (void) log_warning_errno(r, "Member: cannot store member %s's sessions: %s", member, db_errmsg(m->db));
}

/* Another member's use of the keys, which this member's quota checks add to its own. */
static void usage_apply(Mirror *m, const char *member, const char *value) {
        cleanup_free UsageRow *rows = NULL;
        size_t n = 0;
        int r;

        if (strcmp(member, m->config->member) == 0)
                return;
        if (value && (!member_name_valid(member) || usage_record_parse(value, &rows, &n) < 0)) {
                log_warning("Member: ignoring %s%s, which is no record of the keys' use", USAGE_PREFIX, member);
                return;
        }
        r = db_cluster_usage_replace(m->db, member, false, rows, n);
        if (r < 0)
                (void) log_warning_errno(r, "Member: cannot store member %s's use of the keys: %s", member, db_errmsg(m->db));
}

/* sandboxctl logs ID on another member asks every member for the request's journal entries
 * (cluster/logs-ask.h): the one that ran it answers. */
static void logs_answer(Mirror *m, Etcd *etcd, const char *nonce, const char *value) {
        cleanup_free char *entries = NULL, *key = NULL;
        char request_id[LOGS_REQUEST_ID_MAX];
        Error err = {};
        int64_t lease;
        int r;

        if (!value || logs_ask_parse(value, request_id, &lease) < 0)
                return;
        r = logs_entries(request_id, &entries);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                (void) log_warning_errno(r, "Member: cannot read the journal for request %s", request_id);
                return;
        }
        if (asprintf(&key, LOGS_ANSWER_PREFIX "%s/%s", nonce, m->config->member) < 0)
                return;
        r = etcd_put(etcd, key, entries, lease, &err);
        if (r < 0)
                (void) log_warning_errno(r, "Member: cannot answer for request %s: %s", request_id, error_message(&err, r));
}

static int on_change(const char *key, const char *value, int64_t revision, void *userdata) {
        Mirror *m = userdata;

        (void) revision;
        if (strncmp(key, KEY_PREFIX, strlen(KEY_PREFIX)) == 0)
                key_apply(m, key + strlen(KEY_PREFIX), value);
        else if (strncmp(key, MEMBER_PREFIX, strlen(MEMBER_PREFIX)) == 0)
                member_apply(m, key + strlen(MEMBER_PREFIX), value);
        else if (strncmp(key, SESSIONS_PREFIX, strlen(SESSIONS_PREFIX)) == 0)
                sessions_apply(m, key + strlen(SESSIONS_PREFIX), value);
        else if (strncmp(key, USAGE_PREFIX, strlen(USAGE_PREFIX)) == 0)
                usage_apply(m, key + strlen(USAGE_PREFIX), value);
        else if (strncmp(key, LOGS_ASK_PREFIX, strlen(LOGS_ASK_PREFIX)) == 0 && m->etcd)
                logs_answer(m, m->etcd, key + strlen(LOGS_ASK_PREFIX), value);
        return 0;
}

/* The names of the keys under prefix among kvs, as a JSON list (caller frees). */
static char *names_under(const EtcdKv *kvs, size_t n, const char *prefix) {
        struct json_object *list = json_object_new_array();
        char *out;

        for (size_t i = 0; list && i < n; i++)
                if (strncmp(kvs[i].key, prefix, strlen(prefix)) == 0 &&
                    json_object_array_add(list, json_object_new_string(kvs[i].key + strlen(prefix))) < 0)
                        list = (json_object_put(list), NULL);
        out = list ? strdup(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN)) : NULL;
        json_object_put(list);
        return out;
}

/* Everything under /sandboxd/ read whole: each row put, then those of members no longer there
 * pruned, so that no reader sees the tables empty meanwhile. */
static int sync_all(Mirror *m, Etcd *etcd, int64_t *ret_revision) {
        cleanup_free char *members = NULL, *sessions = NULL, *usage = NULL;
        EtcdKv *kvs = NULL;
        size_t n = 0;
        Error err = {};
        int r = etcd_range_prefix(etcd, MIRROR_PREFIX, &kvs, &n, ret_revision, &err);

        if (r < 0)
                return log_warning_errno(r, "Member: cannot read the cluster's state from etcd, trying again: %s", error_message(&err, r));
        for (size_t i = 0; i < n; i++)
                (void) on_change(kvs[i].key, kvs[i].value, *ret_revision, m);
        members = names_under(kvs, n, MEMBER_PREFIX);
        sessions = names_under(kvs, n, SESSIONS_PREFIX);
        usage = names_under(kvs, n, USAGE_PREFIX);
        etcd_kvs_free(kvs, n);
        if (!members || !sessions || !usage)
                return log_warning_errno(ENOMEM, "Member: out of memory reading the cluster's state"); /* NOLINT(clang-analyzer-unix.Malloc): cleanup_free, unseen by clang-analyzer 14 */
        r = db_cluster_members_keep(m->db, members);
        if (r >= 0)
                r = db_cluster_sessions_keep(m->db, sessions);
        if (r >= 0)
                r = db_cluster_usage_keep(m->db, usage);
        if (r < 0)
                (void) log_warning_errno(r, "Member: cannot prune the members that left: %s", db_errmsg(m->db));
        return 0;
}

static int mirror_sync(void *userdata, int64_t *ret_revision) {
        Mirror *m = userdata;

        return sync_all(m, m->etcd, ret_revision);
}

static int mirror_watch(void *userdata, int64_t from) {
        Mirror *m = userdata;
        Error err = {};
        int r = etcd_watch_prefix(m->etcd, MIRROR_PREFIX, from, 0, on_change, m, &err);

        log_warning("Member: the watch of the cluster's state ended (%s); reading it again", error_message(&err, r));
        return r;
}

static const FollowOps mirror_ops = {.sync = mirror_sync, .watch = mirror_watch};

int mirror_start(sd_event *event, const Config *config) {
        static Mirror m;
        int r;

        m.config = config;
        r = etcd_new(config->etcd, &m.etcd);
        if (r >= 0)
                r = db_open(config->db_path, &m.db);
        if (r >= 0)
                r = follow_start(event, &mirror_ops, &m);
        if (r < 0)
                return log_error_errno(r, "Member: the mirror of the cluster's state cannot start");
        return 0;
}
