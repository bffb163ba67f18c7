/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/sessions.h"
#include "lib/alloc-util.h"
#include "lib/macro.h"
#include "lib/quota.h"
#include "lib/session-state.h"
#include "lib/time-util.h"

#define SESSION_COLUMNS "session_id, state, ttl_s, created_at, last_used, coalesce(paused_at, 0), run_count, up, state_reset, coalesce(key_name, '')"

static void read_row(sqlite3_stmt *st, Session *ret) {
        *ret = (Session){};
        (void) snprintf(ret->id, sizeof(ret->id), "%s", (const char *) sqlite3_column_text(st, 0));
        (void) snprintf(ret->state, sizeof(ret->state), "%s", (const char *) sqlite3_column_text(st, 1));
        ret->ttl_s = sqlite3_column_int64(st, 2);
        ret->created_at = sqlite3_column_double(st, 3);
        ret->last_used = sqlite3_column_double(st, 4);
        ret->paused_at = sqlite3_column_double(st, 5);
        ret->run_count = sqlite3_column_int64(st, 6);
        ret->up = sqlite3_column_int(st, 7) != 0;
        ret->state_reset = sqlite3_column_int(st, 8) != 0;
        (void) snprintf(ret->key_name, sizeof(ret->key_name), "%s", (const char *) sqlite3_column_text(st, 9));
}

static int count_active(sqlite3 *db, int64_t *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT count(*) FROM sessions WHERE state IN ('active', 'pausing')", "");

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret = sqlite3_column_int64(st, 0);
        return 0;
}

typedef struct Create {
        const char *id;
        int64_t ttl_s;
        unsigned max_active;
        const char *key_name;
        const QuotaSessionCaps *caps; /* the key's; NULL: none */
        double retain_s;
        SessionRefusal *refusal;
} Create;

/* The key's sessions by state, and when the soonest of them frees a place by itself: an active one
 * paused when idle, a kept one deleted once paused for retain_s. */
static int key_sessions(sqlite3 *db, const char *key_name, double retain_s, QuotaSessionCounts *ret, double *ret_idle_at, double *ret_gone_at) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st,
                           /* On a cluster's member, the key's sessions on the others too (schema.sql, step 19;
                            * their lists at most some 200 ms old); when those free a place, this one cannot say. */
                           "SELECT coalesce(sum(state IN ('active', 'pausing')), 0) + (SELECT coalesce(sum(amount), 0) FROM cluster_usage "
                           "WHERE key_name = ?1 AND kind = 'sessions_active'), coalesce(sum(state = 'paused'), 0) + "
                           "(SELECT coalesce(sum(amount), 0) FROM cluster_usage WHERE key_name = ?1 AND kind = 'sessions_paused'), "
                           "min(CASE WHEN state = 'active' THEN last_used + ttl_s END), "
                           "min(coalesce(paused_at, last_used + ttl_s) + ?2) "
                           "FROM sessions WHERE key_name = ?1 AND state != 'deleted'",
                           "td", key_name, retain_s);

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret = (QuotaSessionCounts){.active = sqlite3_column_int64(st, 0), .paused = sqlite3_column_int64(st, 1)};
        *ret_idle_at = sqlite3_column_double(st, 2);
        *ret_gone_at = sqlite3_column_double(st, 3);
        return 0;
}

/* The key's caps, inside the transaction: -EDQUOT with *c->refusal when one more would exceed one. */
static int key_caps_check(sqlite3 *db, const Create *c, bool create) {
        QuotaSessionCounts have;
        double idle_at = 0, gone_at = 0;
        int r;

        if (!c->caps || !c->key_name)
                return 0;
        r = key_sessions(db, c->key_name, c->retain_s, &have, &idle_at, &gone_at);
        if (r < 0)
                return r;
        c->refusal->which = (int) quota_session_check(&have, c->caps, create);
        if (c->refusal->which == QUOTA_SESSION_OK)
                return 0;
        c->refusal->free_at = c->refusal->which == QUOTA_SESSION_ACTIVE ? idle_at : gone_at;
        return -EDQUOT;
}

static int create_locked(sqlite3 *db, void *userdata) {
        const Create *c = userdata;
        double now = now_unix();
        int64_t active = 0;
        int r = count_active(db, &active);

        if (r < 0)
                return r;
        if (active >= c->max_active)
                return -EUSERS;
        r = key_caps_check(db, c, true);
        if (r < 0)
                return r;
        r = db_run(db, "INSERT INTO sessions (session_id, state, ttl_s, created_at, last_used, key_name) VALUES (?1, 'active', ?2, ?3, ?3, ?4)",
                   "tIdt", c->id, c->ttl_s, now, c->key_name);
        return r < 0 ? r : 0;
}

int db_session_create(sqlite3 *db, const char *id, int64_t ttl_s, unsigned max_active, const char *key_name) {
        return db_transaction(db, create_locked, &(Create){id, ttl_s, max_active, key_name});
}

int db_session_create_capped(sqlite3 *db, const char *id, int64_t ttl_s, unsigned max_active, const char *key_name, const QuotaSessionCaps *caps,
                             double retain_s, SessionRefusal *ret) {
        return db_transaction(db, create_locked,
                              &(Create){.id = id, .ttl_s = ttl_s, .max_active = max_active, .key_name = key_name, .caps = caps, .retain_s = retain_s, .refusal = ret});
}

int db_session_get(sqlite3 *db, const char *id, Session *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT " SESSION_COLUMNS " FROM sessions WHERE session_id = ?1 AND state != 'deleted'", "t", id);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        read_row(st, ret);
        return 0;
}

int db_session_list(sqlite3 *db, Session **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free Session *list = NULL;
        size_t n = 0, cap = 0;
        int r = db_prepare(db, &st, "SELECT " SESSION_COLUMNS " FROM sessions WHERE state != 'deleted' ORDER BY created_at, session_id", "");

        while (r >= 0 && (r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(list, cap, n, 16) < 0)
                        return -ENOMEM;
                read_row(st, &list[n++]);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}

int db_session_event(sqlite3 *db, const char *id, const char *event, const char *request_id, const char *detail) {
        int r = db_run(db, "INSERT INTO session_events (session_id, event, request_id, detail) VALUES (?1, ?2, ?3, ?4)", "tttt", id, event,
                       request_id, detail);

        return r < 0 ? r : 0;
}

int db_session_enqueue(sqlite3 *db, const char *id, int pid, int64_t *ret_ticket) {
        int r = db_run(db, "INSERT INTO session_queue (session_id, worker_pid, arrived) VALUES (?1, ?2, ?3)", "tid", id, pid, now_unix());

        if (r < 0)
                return r;
        *ret_ticket = (int64_t) sqlite3_last_insert_rowid(db);
        return 0;
}

int db_session_turn(sqlite3 *db, const char *id, int64_t ticket) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT count(*) FROM session_queue WHERE session_id = ?1 AND ticket < ?2", "tI", id, ticket);

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        return sqlite3_column_int64(st, 0) == 0 ? 1 : 0;
}

int db_session_queued(sqlite3 *db, const char *id, int64_t ticket) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, "SELECT count(*) FROM session_queue WHERE session_id = ?1 AND ticket < ?2", "tI", id, ticket);

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        return (int) sqlite3_column_int64(st, 0);
}

int db_session_queue_pids(sqlite3 *db, int **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free int *pids = NULL;
        size_t n = 0, cap = 0;
        int r = db_prepare(db, &st, "SELECT DISTINCT worker_pid FROM session_queue", "");

        while (r >= 0 && (r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(pids, cap, n, 16) < 0)
                        return -ENOMEM;
                pids[n++] = sqlite3_column_int(st, 0);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

int db_session_dequeue(sqlite3 *db, int64_t ticket) {
        int r = db_run(db, "DELETE FROM session_queue WHERE ticket = ?1", "I", ticket);

        return r < 0 ? r : 0;
}

int db_session_dequeue_worker(sqlite3 *db, int pid) {
        return db_run(db, "DELETE FROM session_queue WHERE worker_pid = ?1 OR ?1 = 0", "i", pid);
}

int db_session_used(sqlite3 *db, const char *id, int runs) {
        int r = db_run(db, "UPDATE sessions SET last_used = ?2, run_count = run_count + ?3 WHERE session_id = ?1", "tdi", id, now_unix(), runs);

        return r < 0 ? r : 0;
}

int db_session_set_up(sqlite3 *db, const char *id, bool up) {
        int r = db_run(db, "UPDATE sessions SET up = ?2 WHERE session_id = ?1", "ti", id, (int) up);

        return r < 0 ? r : 0;
}

int db_session_set_network(sqlite3 *db, const char *id, const char *allow_json) {
        int r = db_run(db, "UPDATE sessions SET network = ?2 WHERE session_id = ?1", "tt", id, allow_json);

        return r < 0 ? r : 0;
}

int db_session_network(sqlite3 *db, const char *id, char **ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        const unsigned char *text;
        int r = db_prepare(db, &st, "SELECT network FROM sessions WHERE session_id = ?1 AND state != 'deleted'", "t", id);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        text = sqlite3_column_text(st, 0);
        *ret = NULL;
        if (text && !(*ret = strdup((const char *) text)))
                return -ENOMEM;
        return 0;
}

int db_session_set_reset(sqlite3 *db, const char *id, bool reset) {
        int r = db_run(db, "UPDATE sessions SET state_reset = ?2 WHERE session_id = ?1", "ti", id, (int) reset);

        return r < 0 ? r : 0;
}

static int resume_locked(sqlite3 *db, void *userdata) {
        const Create *c = userdata;
        Session s;
        int64_t active = 0;
        int r = db_session_get(db, c->id, &s);

        if (r < 0)
                return r;
        if (session_state_from_string(s.state) == SESSION_ACTIVE)
                return 0;
        if (session_state_from_string(s.state) == SESSION_PAUSING)
                return -EAGAIN;
        r = count_active(db, &active);
        if (r < 0)
                return r;
        if (active >= c->max_active)
                return -EUSERS;
        r = key_caps_check(db, c, false);
        if (r < 0)
                return r;
        r = db_run(db, "UPDATE sessions SET state = 'active', paused_at = NULL, up = 0, last_used = ?2 WHERE session_id = ?1", "td", c->id,
                   now_unix());
        return r < 0 ? r : 0;
}

int db_session_resume(sqlite3 *db, const char *id, unsigned max_active) {
        return db_transaction(db, resume_locked, &(Create){.id = id, .max_active = max_active});
}

int db_session_resume_capped(sqlite3 *db, const char *id, unsigned max_active, const char *key_name, const QuotaSessionCaps *caps,
                             SessionRefusal *ret) {
        return db_transaction(db, resume_locked, &(Create){.id = id, .max_active = max_active, .key_name = key_name, .caps = caps, .refusal = ret});
}

int db_session_usage_add(sqlite3 *db, const char *id, const char *event, const char *request_id, int64_t cpu_ms) {
        int r = db_run(db,
                       "INSERT INTO session_usage (session_id, key_name, event, request_id, cpu_ms) "
                       "SELECT ?1, key_name, ?2, ?3, ?4 FROM sessions WHERE session_id = ?1",
                       "tttI", id, event, request_id, cpu_ms);

        return r < 0 ? r : 0;
}

int db_session_delete(sqlite3 *db, const char *id) {
        int r = db_run(db, "UPDATE sessions SET state = 'deleted', deleted_at = ?2, up = 0 WHERE session_id = ?1 AND state != 'deleted'", "td",
                       id, now_unix());

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

typedef struct Claim {
        const char *sql;
        const char *types;
        double when;
        char *id;
        size_t size;
} Claim;

static int claim_locked(sqlite3 *db, void *userdata) {
        Claim *c = userdata;
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st, c->sql, c->types, c->when);

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        (void) snprintf(c->id, c->size, "%s", (const char *) sqlite3_column_text(st, 0));
        return 0;
}

int db_session_claim_expired(sqlite3 *db, double now, char *ret_id, size_t size) {
        Claim c = {.sql = "UPDATE sessions SET state = 'pausing' WHERE session_id = (SELECT session_id FROM sessions s WHERE state = 'active' "
                          "AND last_used + ttl_s < ?1 AND NOT EXISTS (SELECT 1 FROM session_queue q WHERE q.session_id = s.session_id) "
                          "ORDER BY last_used LIMIT 1) RETURNING session_id",
                   .types = "d",
                   .when = now,
                   .id = ret_id,
                   .size = size};

        return db_transaction(db, claim_locked, &c);
}

int db_session_claim_down(sqlite3 *db, const char *id) {
        int r = db_run(db,
                       "UPDATE sessions SET state = 'pausing' WHERE session_id = ?1 AND state = 'active' "
                       "AND NOT EXISTS (SELECT 1 FROM session_queue q WHERE q.session_id = ?1)",
                       "t", id);

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

int db_session_paused(sqlite3 *db, const char *id) {
        int r = db_run(db, "UPDATE sessions SET state = 'paused', paused_at = ?2, up = 0, state_reset = 1 WHERE session_id = ?1 AND state = 'pausing'",
                       "td", id, now_unix());

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

int db_session_unpause(sqlite3 *db, const char *id) {
        int r = db_run(db, "UPDATE sessions SET state = 'active' WHERE session_id = ?1 AND state = 'pausing'", "t", id);

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

int db_session_claim_retained(sqlite3 *db, double before, char *ret_id, size_t size) {
        Claim c = {.sql = "UPDATE sessions SET state = 'deleted', deleted_at = strftime('%s', 'now') WHERE session_id = (SELECT session_id "
                          "FROM sessions WHERE state = 'paused' AND paused_at < ?1 ORDER BY paused_at LIMIT 1) RETURNING session_id",
                   .types = "d",
                   .when = before,
                   .id = ret_id,
                   .size = size};

        return db_transaction(db, claim_locked, &c);
}

int db_session_counts(sqlite3 *db, int64_t *ret_active, int64_t *ret_paused) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st,
                           "SELECT coalesce(sum(state IN ('active', 'pausing')), 0), coalesce(sum(state = 'paused'), 0) FROM sessions", "");

        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret_active = sqlite3_column_int64(st, 0);
        *ret_paused = sqlite3_column_int64(st, 1);
        return 0;
}
