/* SPDX-License-Identifier: MIT */
/* The sessions' turns, and their ends the pool manager decides. Operations on one session take
 * turns, first in, first out: a worker asks for the session's turn on its connection and gets it
 * the moment no earlier operation of the session is left. The pool manager pauses an idle session
 * (and one whose key was revoked) only while nothing is queued on it, which is its own turn: no
 * worker's can be granted while it pauses, as this one process grants them. The pause's broker
 * request is answered on the loop (broker-async.h): the session's turns wait for it, no one else's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/session-revoke.h"
#include "db/sessions.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/session-state.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-async.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-queue.h"
#include "nspawn/pool/poold.h"
#include "nspawn/pool/session-usage.h"

/* How long a session's runner has to say what its sandbox used before its machine is stopped. */
#define USAGE_TIMEOUT_USEC (2 * USEC_PER_SEC)
/* A pause that failed (the session still pausing) is tried again after this long. */
#define PAUSE_RETRY_USEC (5 * USEC_PER_SEC)

/* The connections as the queue's entries (poold-queue.h): *ret, the caller's to free. */
static int turn_entries(const Poold *p, TurnEntry **ret) {
        TurnEntry *e = calloc(p->n_conns + 1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_conns; i++) {
                const Conn *c = &p->conns[i];
                bool in = c->state == CONN_TURN_WAITING || c->state == CONN_TURN_HELD;

                e[i] = (TurnEntry){.session = in ? c->session : NULL, .seq = c->seq, .held = c->state == CONN_TURN_HELD};
        }
        *ret = e;
        return 0;
}

/* A session being paused: its broker request in flight. */
struct PauseOp {
        Poold *pool;
        char id[SANDBOX_ID_MAX];
        const char *event, *why; /* static */
        SessionUsageAsk *ask;    /* its runner asked what it used, before the stop */
        PauseOp *next;
};

bool session_pausing(const Poold *p, const char *session) {
        for (const PauseOp *o = p->pauses; o; o = o->next)
                if (strcmp(o->id, session) == 0)
                        return true;
        /* Its end's record (paused, or active again) waits for sqlite's lock: the row still says
         * 'pausing', which a worker given the turn now would take for a pause under way. */
        return poold_writes_holds(&p->writes, session);
}

static void pause_unlink(Poold *p, PauseOp *op) {
        for (PauseOp **o = &p->pauses; *o; o = &(*o)->next)
                if (*o == op) {
                        *o = op->next;
                        return;
                }
}

/* At exit. poold_close() frees these before the broker's client, whose -ECANCELED callbacks then
 * come for ops already freed: on_paused() touches nothing of its op at -ECANCELED, and nothing here
 * touches the client, so either order is safe. */
void sessions_pauses_free(Poold *p) {
        while (p->pauses) {
                PauseOp *o = p->pauses;

                p->pauses = o->next;
                (void) session_usage_ask_cancel(o->ask);
                free(o);
        }
}

bool turn_busy(const Poold *p, const char *session) {
        for (size_t i = 0; i < p->n_conns; i++)
                if ((p->conns[i].state == CONN_TURN_WAITING || p->conns[i].state == CONN_TURN_HELD) && strcmp(p->conns[i].session, session) == 0)
                        return true;
        return false;
}

/* The session's turn to the earliest waiting, if none holds it. */
static void turn_grant(Poold *p, const char *session) {
        cleanup_free TurnEntry *e = NULL;
        size_t i;

        /* The pool manager's own turn: the pause's end grants the next. */
        if (session_pausing(p, session))
                return;
        if (turn_entries(p, &e) < 0)
                return;
        i = turn_next(e, p->n_conns, session); /* NOLINT(clang-analyzer-unix.Malloc): e is cleanup_free, unseen by clang-analyzer 14 */
        if (i == p->n_conns)
                return;
        p->conns[i].state = CONN_TURN_HELD;
        /* A worker gone meanwhile: its connection's end passes the turn on. */
        (void) conn_send(&p->conns[i], "turn\n");
}

void sessions_writes_done(Poold *p) {
        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].state == CONN_TURN_WAITING)
                        turn_grant(p, p->conns[i].session);
        /* A session skipped while its record waited is looked at again. */
        p->next_sessions = 0;
}

void turn_request(Poold *p, Conn *c, const PooldMsg *m) {
        cleanup_free TurnEntry *e = NULL;

        if (turn_entries(p, &e) < 0) {
                (void) conn_send(c, "busy\n");
                return;
        }
        /* Each waiting operation holds a worker: one session never takes them all. */
        if (turn_queued(e, p->n_conns, m->word) >= m->number) {
                (void) conn_send(c, "busy\n");
                return;
        }
        (void) snprintf(c->session, sizeof(c->session), "%s", m->word);
        c->seq = ++p->next_seq;
        c->state = CONN_TURN_WAITING;
        turn_grant(p, c->session);
}

void turn_done(Poold *p, Conn *c) {
        char session[POOLD_WORD_MAX];
        bool held = c->state == CONN_TURN_HELD;

        if (c->state != CONN_TURN_WAITING && !held)
                return;
        memcpy(session, c->session, sizeof(session));
        c->state = CONN_IDLE;
        c->session[0] = 0;
        if (held)
                /* The operation may have used the session, or made it: its idle end moves. */
                p->next_sessions = 0;
        turn_grant(p, session);
}

/* A pause that failed: its machine may run on (the broker never had the stop, or it did not stop),
 * its socket kept. The session is active again, as a worker's failed pause leaves it, so that the
 * turn waiting gets it on its machine (or has whatever is left of it stopped and a new one
 * started, session_machine_ready()) instead of a 502 for a pause that is over. */
static void pause_failed(Poold *p, const char *id) {
        PooldWrite w = {.op = POOLD_WRITE_SESSION_ACTIVE};
        int r;

        (void) snprintf(w.id, sizeof(w.id), "%s", id);
        r = poold_write(p, &w);
        if (r < 0 && r != -ENOENT)
                (void) log_error_errno(r, "Failed to record that session '%s' is active again: %s", id, db_errmsg(p->db));
}

/* The pause over, done or failed (r): the session's turns waited for it, and wait on for its record
 * if that met sqlite's lock (sessions_writes_done()). Done, the sessions are looked at again now (its
 * retention starts); failed, the idle session is paused again in PAUSE_RETRY_USEC, not at once, as a
 * broker that refuses may refuse again. */
static void pause_end(PauseOp *op, int r) {
        Poold *p = op->pool;
        uint64_t retry = now_usec(CLOCK_MONOTONIC) + PAUSE_RETRY_USEC;

        pause_unlink(p, op);
        if (r < 0)
                pause_failed(p, op->id);
        turn_grant(p, op->id);
        if (r >= 0)
                p->next_sessions = 0;
        else if (retry < p->next_sessions)
                p->next_sessions = retry;
        free(op);
}

static void on_paused(int r, const BrokerReply *rep, int fd, void *userdata) {
        PauseOp *op = userdata;
        char path[POOL_SOCKET_MAX];
        Poold *p;

        (void) fd;
        if (r == -ECANCELED)
                return; /* at exit: sessions_pauses_free() frees op, before or after */
        p = op->pool;
        if (r < 0)
                /* Tried again soon, if it is idle still. */
                (void) log_error_errno(r, "Failed to pause session '%s': %s", op->id, rep->message);
        else {
                PooldWrite w = {.op = POOLD_WRITE_SESSION_PAUSED};

                session_socket_path(op->id, path, sizeof(path));
                (void) unlink(path);
                (void) snprintf(w.id, sizeof(w.id), "%s", op->id);
                r = poold_write(p, &w);
                if (r < 0 && r != -ENOENT)
                        (void) log_error_errno(r, "Failed to record that session '%s' is paused: %s", op->id, db_errmsg(p->db));
                if (r >= 0)
                        poold_session_event(p, op->id, op->event, op->why);
        }
        pause_end(op, r);
}

/* What the session's sandbox used since its last run, which no run will report now: recorded,
 * billed to its key; then its machine is stopped. A machine that does not answer has nothing to bill. */
static void on_billed(int r, int64_t cpu_ms, void *userdata) {
        PauseOp *op = userdata;
        Poold *p = op->pool;

        op->ask = NULL;
        if (r >= 0 && cpu_ms > 0) {
                PooldWrite w = {.op = POOLD_WRITE_SESSION_USAGE, .n = cpu_ms};

                (void) snprintf(w.id, sizeof(w.id), "%s", op->id);
                (void) snprintf(w.text, sizeof(w.text), "%s", op->event);
                r = poold_write(p, &w);
                if (r < 0)
                        (void) log_warning_errno(r, "Failed to record the CPU time of session '%s' since its last run, ignoring: %s", op->id,
                                                 db_errmsg(p->db));
        }
        r = broker_async_call(p->broker, BROKER_SESSION_STOP, op->id, -1, on_paused, op);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to pause session '%s'", op->id);
                pause_end(op, r);
        }
}

/* A session claimed for pausing ('pausing'): its use billed, its machine stopped, its disk unmounted
 * and kept, each answered on the loop. event and why are static. */
static void session_pause(Poold *p, const char *id, const char *event, const char *why) {
        char path[POOL_SOCKET_MAX];
        PauseOp *op;

        if (session_pausing(p, id))
                return;
        op = calloc(1, sizeof(*op));
        if (!op)
                return; /* tried again soon, as the session is still pausing */
        *op = (PauseOp){.pool = p, .event = event, .why = why, .next = p->pauses};
        (void) snprintf(op->id, sizeof(op->id), "%s", id);
        p->pauses = op;
        session_socket_path(id, path, sizeof(path));
        if (session_usage_ask(p->event, path, USAGE_TIMEOUT_USEC, on_billed, op, &op->ask) < 0)
                on_billed(-EHOSTDOWN, 0, op);
}

/* A session paused for longer than the retention, deleted: its event once the broker answers. */
static void on_deleted(int r, const BrokerReply *rep, int fd, void *userdata) {
        PauseOp *op = userdata;

        (void) fd;
        if (r != -ECANCELED)
                poold_session_event(op->pool, op->id, "delete", r < 0 ? rep->message : "paused for longer than SANDBOXD_SESSION_RETAIN_S");
        free(op);
}

static void session_delete(Poold *p, const char *id) {
        PauseOp *op = calloc(1, sizeof(*op));

        if (!op)
                return;
        *op = (PauseOp){.pool = p, .event = "delete"};
        (void) snprintf(op->id, sizeof(op->id), "%s", id);
        if (broker_async_call(p->broker, BROKER_SESSION_DELETE, id, -1, on_deleted, op) < 0) {
                poold_session_event(p, id, "delete", "the broker could not be asked");
                free(op);
        }
}

/* The soonest of *next and t. */
static void sooner(double *next, double t) {
        if (t < *next)
                *next = t;
}

/* One session's end, if it is due and nothing is queued on it; else when it is next due (unix
 * time), into *next. A session paused now is due for deletion after the retention. */
static void session_check(Poold *p, const Session *s, double now, double *next) {
        double retained = now + (double) p->config->session_retain_s;
        SessionState state = session_state_from_string(s->state);

        if (state == SESSION_PAUSED) {
                sooner(next, s->paused_at + (double) p->config->session_retain_s);
                return;
        }
        if (turn_busy(p, s->id) || session_pausing(p, s->id))
                return; /* its turn's end, or its pause's, looks again */
        if (state == SESSION_PAUSING) {
                /* A pause left half-done (by a previous instance, or a stop that failed); if it
                 * fails again, tried again soon. */
                session_pause(p, s->id, "pause", "its pause had not finished");
                sooner(next, now + (double) PAUSE_RETRY_USEC / (double) USEC_PER_SEC);
        } else if (db_session_revoked(p->db, s->id) > 0 && db_session_claim_down(p->db, s->id) >= 0)
                session_pause(p, s->id, "revoke", "its API key was revoked");
        else if (s->last_used + (double) s->ttl_s <= now && db_session_claim_down(p->db, s->id) >= 0)
                session_pause(p, s->id, "expire", "idle for longer than its ttl_s");
        else {
                sooner(next, s->last_used + (double) s->ttl_s);
                return;
        }
        sooner(next, retained);
}

/* Idle sessions are paused (their files kept), long-paused ones deleted, revoked keys' paused, and
 * sessions left pausing paused again; then when to look next: the soonest of those ends. */
void sessions_housekeeping(Poold *p) {
        double now = (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC, next = now + 365.0 * 86400;
        cleanup_free Session *list = NULL;
        char id[SANDBOX_ID_MAX];
        size_t n = 0;

        /* It follows every session operation's turn, and makes the changes of its own: a cluster's
         * member publishes its sessions again (watchers_tell()). */
        p->session_looks++;

        while (db_session_claim_retained(p->db, now - (double) p->config->session_retain_s, id, sizeof(id)) >= 0)
                session_delete(p, id);
        if (db_session_list(p->db, &list, &n) < 0) {
                p->next_sessions = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
                return;
        }
        for (size_t i = 0; i < n; i++)
                session_check(p, &list[i], now, &next);
        /* A second late rather than early: sqlite keeps times in seconds. */
        p->next_sessions = now_usec(CLOCK_MONOTONIC) + (uint64_t) ((next > now ? next - now : 0) * (double) USEC_PER_SEC) + USEC_PER_SEC;
}

/* At start: active sessions whose machine is gone (the host restarted, or the machine died while no
 * pool manager ran) are paused, as an idle one would be; their next operation resumes them. */
void sessions_reconcile(Poold *p) {
        cleanup_free Session *list = NULL;
        size_t n = 0;

        /* Turns were the previous instance's: its workers' connections are gone with it. */
        (void) db_session_dequeue_worker(p->db, 0);
        if (db_session_list(p->db, &list, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                char path[POOL_SOCKET_MAX];
                cleanup_close int fd = -1;

                if (session_state_from_string(list[i].state) != SESSION_ACTIVE)
                        continue;
                session_socket_path(list[i].id, path, sizeof(path));
                if (list[i].up && pool_connect(path, &fd) >= 0)
                        continue;
                if (db_session_claim_down(p->db, list[i].id) >= 0)
                        session_pause(p, list[i].id, "pause", "its machine was gone when the service started");
        }
}
