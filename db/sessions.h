/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;
typedef struct QuotaSessionCaps QuotaSessionCaps;

/* A session's row (schema.sql, step 6). */
typedef struct Session {
        char id[64];
        char state[16]; /* active, pausing, paused (deleted ones are not found) */
        int64_t ttl_s;
        double created_at, last_used, paused_at; /* unix time; paused_at 0 when not paused */
        int64_t run_count;
        bool up;          /* its machine was started and not seen to end */
        bool state_reset; /* its interpreters' state was lost since its last run */
        char key_name[65]; /* the API key that made it; "": none (made while keys were off) */
} Session;

/* A new active session of the API key key_name (NULL: none), unless max_active are active already
 * (-EUSERS). */
int db_session_create(sqlite3 *db, const char *id, int64_t ttl_s, unsigned max_active, const char *key_name);

/* What an API key's session caps refused (a QuotaSession, lib/quota.h), and when (unix time) the
 * soonest of its sessions frees a place by itself: paused when idle (max-sessions), or deleted
 * after SANDBOXD_SESSION_RETAIN_S paused (the others). */
typedef struct SessionRefusal {
        int which;
        double free_at;
} SessionRefusal;

/* db_session_create(), also held to the key's caps (caps NULL: none): -EDQUOT and *ret when one
 * more would exceed one. retain_s: how long a paused session is kept. */
int db_session_create_capped(sqlite3 *db, const char *id, int64_t ttl_s, unsigned max_active, const char *key_name, const QuotaSessionCaps *caps,
                             double retain_s, SessionRefusal *ret);
/* db_session_resume(), also held to the key's max_active: -EDQUOT and *ret past it. */
int db_session_resume_capped(sqlite3 *db, const char *id, unsigned max_active, const char *key_name, const QuotaSessionCaps *caps,
                             SessionRefusal *ret);

/* Records CPU the session's sandbox used since its last run, which no run reported (it was paused
 * or deleted first), billed to the session's key. request_id NULL: the pool manager's. */
int db_session_usage_add(sqlite3 *db, const char *id, const char *event, const char *request_id, int64_t cpu_ms);

/* -ENOENT when there is no such session, or it was deleted. */
int db_session_get(sqlite3 *db, const char *id, Session *ret);

/* Every session not deleted, oldest first: *ret (malloc'd, the caller's) gets *ret_n. */
int db_session_list(sqlite3 *db, Session **ret, size_t *ret_n);

/* One event of a session's life, for the record; request_id and detail may be NULL. */
int db_session_event(sqlite3 *db, const char *id, const char *event, const char *request_id, const char *detail);

/* The session's queue: a ticket in arrival order; it is worker pid's turn when no earlier ticket of
 * the session is left (1), not yet (0). A ticket is removed when its operation is over, and a dead
 * worker's (pid 0: every one, after a restart of the service) by the master. */
int db_session_enqueue(sqlite3 *db, const char *id, int pid, int64_t *ret_ticket);
int db_session_turn(sqlite3 *db, const char *id, int64_t ticket);
/* How many of the session's tickets are ahead of ticket. */
int db_session_queued(sqlite3 *db, const char *id, int64_t ticket);
/* The workers holding tickets, all of them: *ret (malloc'd, the caller's) gets *ret_n. */
int db_session_queue_pids(sqlite3 *db, int **ret, size_t *ret_n);
int db_session_dequeue(sqlite3 *db, int64_t ticket);
int db_session_dequeue_worker(sqlite3 *db, int pid);

/* Used now (last_used), with runs more runs counted. */
int db_session_used(sqlite3 *db, const char *id, int runs);
int db_session_set_up(sqlite3 *db, const char *id, bool up);
int db_session_set_reset(sqlite3 *db, const char *id, bool reset);

/* What the session's code may reach (its create's "network"."allow" as JSON text), set once at its
 * creation; read into *ret (malloc'd, the caller's; NULL: no network). -ENOENT: no such session. */
int db_session_set_network(sqlite3 *db, const char *id, const char *allow_json);
int db_session_network(sqlite3 *db, const char *id, char **ret);

/* paused -> active (its machine yet to start), unless max_active are active already (-EUSERS);
 * -EAGAIN while it is being paused, -ENOENT when it is gone; 0 when it is active already. */
int db_session_resume(sqlite3 *db, const char *id, unsigned max_active);

/* -> deleted, whatever its state but deleted; -ENOENT if there is none to delete. */
int db_session_delete(sqlite3 *db, const char *id);

/* For the pool manager: claims (-> pausing) an active session idle since before its ttl_s ran out at
 * now, with nothing queued or running: 0, -ENOENT when there is none. */
int db_session_claim_expired(sqlite3 *db, double now, char *ret_id, size_t size);
/* Claims (-> pausing) a session marked active whose machine is gone (up is the caller's finding:
 * the claim is only made while it still has nothing queued). 0, -ENOENT if it has something queued. */
int db_session_claim_down(sqlite3 *db, const char *id);
/* pausing -> paused: its machine gone, its state lost. -ENOENT when it is no longer pausing. */
int db_session_paused(sqlite3 *db, const char *id);
/* pausing -> active: a pause that failed, the session left on its machine ("up" kept). -ENOENT
 * when it is no longer pausing. */
int db_session_unpause(sqlite3 *db, const char *id);
/* Claims (-> deleted) a session paused since before before: 0, -ENOENT when there is none. */
int db_session_claim_retained(sqlite3 *db, double before, char *ret_id, size_t size);

/* How many sessions are in each state. */
int db_session_counts(sqlite3 *db, int64_t *ret_active, int64_t *ret_paused);
