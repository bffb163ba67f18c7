/* SPDX-License-Identifier: MIT */
/* A session's turn, from the pool manager, and its machine: started through the broker on the
 * session's own disk, greeted, resumed, lost (session-machine.h). */
#include <errno.h>
#include <fcgiapp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/session-machine.h"
#include "fcgi/session-quota.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-client.h"

/* A machine's first start formats its disk; later ones take as long as a warm machine's. */
#define MACHINE_START_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* The runner answers a connection at once unless an operation of a worker that died is still
 * running there (up to its timeout): past this the machine is taken for stuck. */
#define GREETING_TIMEOUT_USEC (30 * USEC_PER_SEC)
/* How long an operation waits for its turn: past it, 503. With a run's timeout (at most 600 s), its
 * grace and a machine start, it stays within nginx's 1200 s. */
#define SESSION_TURN_WAIT_USEC (300 * USEC_PER_SEC)

int session_machine_start(Request *req, Context *ctx, const char *id, bool create, Error *err) {
        Session s;
        cleanup_close int listener = -1, probe = -1;
        char path[POOL_SOCKET_MAX];
        int r;

        session_socket_path(id, path, sizeof(path));
        r = pool_listen(path, &listener);
        if (r < 0)
                return error_set(err, r, "could not make its socket: %s", strerror(-r));
        r = broker_session_start(&ctx->broker, id, create, listener, err);
        closep(&listener);
        if (r < 0) {
                (void) unlink(path);
                return r;
        }
        /* An empty connection is the runner's probe: greeted, then let go. */
        r = pool_connect(path, &probe);
        if (r >= 0)
                r = pool_wait_greeting(probe, now_usec(CLOCK_MONOTONIC) + MACHINE_START_TIMEOUT_USEC);
        if (r < 0) {
                (void) broker_session_stop(&ctx->broker, id, false, NULL);
                return error_set(err, r, "its runner did not start: %s", strerror(-r));
        }
        r = db_session_set_up(ctx->db, id, true);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record that session '%s' is up, ignoring", id);
        /* A DELETE does not wait for its turn: one that came during the start finds no machine to
         * stop, so this one stops what it started. */
        if (db_session_get(ctx->db, id, &s) == -ENOENT) {
                (void) broker_session_stop(&ctx->broker, id, true, NULL);
                return -ENOENT;
        }
        session_event(ctx->db, id, "start", req->id, "its machine started");
        return 0;
}

void session_machine_lost(Request *req, Context *ctx, const char *id, const char *why, bool stop) {
        char path[POOL_SOCKET_MAX];

        if (stop)
                (void) broker_session_stop(&ctx->broker, id, false, NULL);
        session_socket_path(id, path, sizeof(path));
        (void) unlink(path);
        (void) db_session_set_up(ctx->db, id, false);
        (void) db_session_set_reset(ctx->db, id, true);
        session_event(ctx->db, id, "reset", req->id, why);
}

int session_turn_take(Request *req, Context *ctx, const char *id, int *ret_turn, uint64_t *ret_wait_usec) {
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        /* Each waiting operation holds a worker: one session never takes them all. */
        unsigned most = ctx->config->workers > 1 ? ctx->config->workers - 1 : 1;
        int turn = -1;
        Session s;
        int r = pooldc_turn(id, most, req->fcgx ? req->fcgx->ipcFd : -1, start + SESSION_TURN_WAIT_USEC, &turn);

        if (r == -ETIME)
                return -EBUSY;
        if (r < 0)
                return r;
        /* Deleted while it waited (a DELETE takes no turn). */
        r = db_session_get(ctx->db, id, &s);
        if (r < 0) {
                session_turn_give(&turn);
                return r;
        }
        *ret_turn = turn;
        *ret_wait_usec = now_usec(CLOCK_MONOTONIC) - start;
        return 0;
}

void session_turn_give(int *turn) {
        if (*turn < 0)
                return;
        pooldc_done(*turn);
        *turn = -1;
}

int session_turn_error(Request *req, Context *ctx, int r) {
        if (r == -ENOENT)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        if (r == -EBUSY)
                return reply_error(req, 503, MSG_SESSION_BUSY);
        if (r == -ECANCELED)
                return reply_abandoned(req);
        if (r == -ECONNREFUSED)
                return reply_error(req, 503, MSG_SESSION_BUSY);
        return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
}

int session_machine_connect(const char *id, int *ret_fd) {
        cleanup_close int fd = -1;
        char path[POOL_SOCKET_MAX];
        int r;

        session_socket_path(id, path, sizeof(path));
        r = pool_connect(path, &fd);
        if (r < 0)
                return -EHOSTDOWN;
        r = pool_wait_greeting(fd, now_usec(CLOCK_MONOTONIC) + GREETING_TIMEOUT_USEC);
        if (r == -ETIME)
                return -ETIME;
        if (r < 0)
                return -EHOSTDOWN;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int session_machine_ready(Request *req, Context *ctx, const char *id, Session *s, int *ret_fd, Error *err) {
        int r;

        for (;;) {
                r = db_session_get(ctx->db, id, s);
                if (r < 0)
                        return r;
                /* A pause is the pool manager's turn, or a worker's: with this one's turn held,
                 * 'pausing' is one left half-done, which the pool manager finishes. */
                if (strcmp(s->state, "pausing") == 0)
                        return error_set(err, -EHOSTDOWN, "the session is still being paused");
                if (strcmp(s->state, "paused") == 0) {
                        r = session_quota_resume(req, ctx, id);
                        if (r == -EAGAIN)
                                return error_set(err, -EHOSTDOWN, "the session is still being paused");
                        if (r < 0)
                                return r;
                        /* Its interpreters' state went with its machine: the next run says so. */
                        (void) db_session_set_reset(ctx->db, id, true);
                        session_event(ctx->db, id, "resume", req->id, req->route);
                        continue;
                }
                if (s->up) {
                        r = session_machine_connect(id, ret_fd);
                        if (r >= 0)
                                return 0;
                        /* Stopped whatever is left of it (a unit a failed pause left, its disk's
                         * mount): a new one would be refused for a unit that exists still, or
                         * share the disk with it. A stop of one that is gone costs no more. */
                        session_machine_lost(req, ctx, id, r == -ETIME ? "its machine did not answer" : "its machine had ended", true);
                        continue;
                }
                r = session_machine_start(req, ctx, id, false, err);
                if (r < 0)
                        return r == -ENOENT ? r : -EHOSTDOWN;
                r = session_machine_connect(id, ret_fd);
                if (r < 0)
                        return error_set(err, -EHOSTDOWN, "its machine ended as soon as it started");
                return db_session_get(ctx->db, id, s);
        }
}
