/* SPDX-License-Identifier: MIT */
/* sandboxd-fcgi: a master that forks the FastCGI workers on systemd's socket (sandbox-api.socket)
 * and replaces any that dies, as php-fpm's master does. No request logic lives here. The whole unit
 * runs as SANDBOXD_USER with no capabilities: the workers parse untrusted input, and reach systemd
 * only through the broker (sandboxd-broker, a unit of its own), the pool through the pool manager
 * (sandboxd-poold). */
#include <errno.h>
#include <fcgiapp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "db/requests.h"
#include "db/sessions.h"
#include "fcgi/audit.h"
#include "fcgi/auth.h"
#include "fcgi/machine-claim.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/worker-slots.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-client.h"

#define WORKERS_MAX 256
/* After a failed fork(), the next try. */
#define WORKER_RETRY_S 1

static Config arg_config;
static int arg_listen_fd = -1;
static pid_t workers[WORKERS_MAX];

static const RouteHandler handlers[_ROUTE_MAX] = {
        [ROUTE_EXECUTE] = route_execute,
        [ROUTE_POOL] = route_pool,
        [ROUTE_CALL] = route_call,
        [ROUTE_EXECUTE_004] = route_execute_004,
        [ROUTE_RUNTIMES] = route_runtimes,
        [ROUTE_OPENAPI] = route_openapi,
        [ROUTE_SESSIONS] = route_sessions,
        [ROUTE_METRICS] = route_metrics,
};

/* The request's end in its sqlite row (if it got one) and, always, its journald audit entry. */
static void record(Request *req, Context *ctx, bool has_row) {
        RequestOutcome o = {.sandbox_id = req->sandbox_id[0] ? req->sandbox_id : NULL,
                            .machine_id = req->machine_id[0] ? req->machine_id : NULL,
                            .status = req->status,
                            .has_exit_code = req->has_exit_code,
                            .exit_code = req->exit_code,
                            .duration_ms = req->duration_ms,
                            .error = req->error,
                            .session_id = req->session_id[0] ? req->session_id : NULL,
                            .language = req->language,
                            .termination = (Termination) req->termination,
                            .cpu_ms = req->cpu_ms,
                            .memory_peak_bytes = req->memory_peak_bytes};
        int r;

        if (has_row) {
                r = db_request_finish(ctx->db, req->id, &o);
                if (r < 0)
                        (void) log_error_errno(r, "Failed to record the end of the request: %s", db_errmsg(ctx->db));
        }
        audit_request(req);
}

/* Whether the request the key check is made for has a body coming, which nginx would read (and
 * buffer, up to the location's cap) once the check lets it through. */
static bool body_coming(const Request *req) {
        const char *len = FCGX_GetParam("SANDBOXD_BODY_LENGTH", req->fcgx->envp);
        const char *te = FCGX_GetParam("SANDBOXD_BODY_ENCODING", req->fcgx->envp);

        return (len && len[0] && strspn(len, "0") != strlen(len)) || (te && te[0]);
}

/* nginx's key check before it reads a body (SANDBOXD_AUTH_ONLY, nginx/sandboxd.conf): the request's
 * method and path are the original's, and no body comes. Only a refusal is recorded. A route needs
 * a key (but /metrics); a path that is no route, or a method it does not take, is answered as such
 * without one, unless it brings a body: nginx reads no body for anyone without a key. */
static void handle_auth_only(Request *req, Context *ctx) {
        const Route *route = NULL;
        int found = route_find(req->method, req->path, &route);
        bool need = ctx->config->api_keys && (found == 200 ? route->id != ROUTE_METRICS : body_coming(req));
        int r = auth_check_only(req, ctx, found == 404 ? NULL : route, need);

        if (r < 0) {
                (void) log_error_errno(r, "Failed to check the API key: %s", db_errmsg(ctx->db));
                (void) reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        }
        if (r > 0)
                record(req, ctx, true);
}

/* parse → route → act → record → reply, for one request. */
static void handle(FCGX_Request *fcgx, Context *ctx) {
        Request req;
        const Route *route = NULL;
        bool has_row = false;
        int r, found;

        r = request_read(&req, fcgx, ctx->config->max_body_bytes, ctx->config->session_upload_bytes);
        log_set_request(req.id, req.route);
        if (r < 0) {
                (void) reply_error(&req, 500, MSG_INTERNAL, "out of memory");
                goto done;
        }
        if (FCGX_GetParam("SANDBOXD_AUTH_ONLY", fcgx->envp)) {
                handle_auth_only(&req, ctx);
                log_set_request(NULL, NULL);
                request_done(&req);
                return;
        }

        /* The route first, pure: the row names the one the request matched. Then the row, with the
         * API key's check when keys are on: every route but /metrics needs one; a path that is no
         * route, or a method it does not take, is answered as such without. */
        found = route_find(req.method, req.path, &route);
        r = auth_begin(&req, ctx, found == 404 ? NULL : route, ctx->config->api_keys && found == 200 && route->id != ROUTE_METRICS);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to record the request: %s", db_errmsg(ctx->db));
                (void) reply_error(&req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
                goto done;
        }
        has_row = true;

        if (req.status != 0)
                ; /* refused: no key in force, or over a quota */
        else if (req.uri_too_long)
                (void) reply_error(&req, 414, MSG_URI_TOO_LONG);
        else if (found == 404)
                (void) reply_error(&req, 404, MSG_NOT_FOUND);
        else if (found == 405) {
                req.allow = route->method;
                (void) reply_error(&req, 405, MSG_METHOD_NOT_ALLOWED);
        } else if (req.body_too_large)
                (void) reply_error(&req, 413, MSG_BODY_TOO_LARGE);
        else if (handlers[route->id](&req, ctx) < 0 && req.status == 0)
                (void) reply_error(&req, 500, MSG_INTERNAL, "the request could not be answered");

done:
        record(&req, ctx, has_row);
        log_set_request(NULL, NULL);
        request_done(&req);
}

/* The master's SIGTERM: the worker is to stop once the request in hand is answered. libfcgi's own
 * handler would do the same, but silently; this one says so, and libfcgi keeps it (it installs its
 * handler only where none is). */
static volatile sig_atomic_t stopping;

static void on_stop(int sig) {
        (void) sig;
        stopping = 1;
        FCGX_ShutdownPending();
}

static int worker_main(void) {
        Context ctx = {.config = &arg_config, .broker = -1};
        /* No SA_RESTART: accept() returns, and libfcgi, told shutdown is pending, gives up. */
        struct sigaction sa = {.sa_handler = on_stop};
        FCGX_Request fcgx;
        int r;

        if (sigaction(SIGTERM, &sa, NULL) < 0)
                return log_error_errno(errno, "Failed to set up SIGTERM");

        r = db_open(arg_config.db_path, &ctx.db);
        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s': %s", arg_config.db_path, db_errmsg(NULL));

        if (FCGX_Init() != 0 || FCGX_InitRequest(&fcgx, arg_listen_fd, 0) != 0)
                return log_error_errno(EIO, "Failed to initialize FastCGI");

        while (FCGX_Accept_r(&fcgx) >= 0) {
                handle(&fcgx, &ctx);
                FCGX_Finish_r(&fcgx);

                /* The client has its answer: now the machine goes back to the pool, or goes. */
                machine_release(&ctx.machine);
                /* The errors the request met, sqlite's and the broker's, into their totals. */
                (void) db_error_counts_flush(ctx.db);
        }

        closep(&ctx.broker);
        ctx.db = db_close(ctx.db);
        /* A worker ends by the master's SIGTERM; else the loop ends only when accept() fails, and
         * the master should hear of it. */
        if (stopping)
                return 0;
        return log_error_errno(EIO, "Failed to accept a FastCGI request");
}

typedef struct SpawnArgs {
        int sfd;
        int tfd;
        const sigset_t *mask;
} SpawnArgs;

/* A worker: signals as usual again, the master's descriptors gone. */
static pid_t spawn_worker(void *userdata) {
        const SpawnArgs *a = userdata;
        pid_t pid = fork();

        if (pid < 0) {
                int r = -errno;

                (void) log_warning_errno(r, "Failed to fork a worker, trying again in %d s", WORKER_RETRY_S);
                return r;
        }
        if (pid > 0)
                return pid;
        (void) prctl(PR_SET_NAME, "sandboxd-worker"); /* what ps and the journal's _COMM show */
        (void) close(a->sfd);
        (void) close(a->tfd);
        (void) sigprocmask(SIG_UNBLOCK, a->mask, NULL);
        _exit(worker_main() < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* Every empty slot filled; while any stays empty (fork() failed), the timer fires again for another
 * try, so the service never runs short of workers for good. */
static void fill_slots(const SpawnArgs *a) {
        struct itimerspec again = {.it_value.tv_sec = WORKER_RETRY_S};

        if (worker_slots_fill(workers, arg_config.workers, spawn_worker, (void *) a) > 0)
                (void) timerfd_settime(a->tfd, 0, &again, NULL);
}

static void kill_sandbox(const char *sandbox_id, void *userdata) {
        (void) broker_kill(userdata, sandbox_id);
}

/* Requests left in flight by a dead worker (0: by any, after a restart of the whole service): their
 * sandboxes are killed, the pool sandboxes it had claimed destroyed, and their records closed with
 * the reason. */
static void abandon_requests(pid_t pid) {
        sqlite3 *db = NULL;
        cleanup_close int broker = -1;
        cleanup_free PoolRow *claimed = NULL;
        size_t n_claimed = 0;
        int r;

        r = db_open(arg_config.db_path, &db);
        if (r < 0) {
                (void) log_warning_errno(r, "Failed to open database '%s' to close worker %d's requests, ignoring: %s", arg_config.db_path,
                                         (int) pid, db_errmsg(NULL));
                return;
        }
        r = db_request_foreach_in_flight(db, (int) pid, kill_sandbox, &broker);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to read the requests of worker %d, ignoring: %s", (int) pid, db_errmsg(db));
        r = db_pool_list(db, "claimed", (int) pid, &claimed, &n_claimed);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to read the sandboxes of worker %d, ignoring: %s", (int) pid, db_errmsg(db));
        for (size_t i = 0; i < n_claimed; i++)
                pool_destroy(&broker, db, claimed[i].machine_id, claimed[i].socket, POOL_RETIRE_WORKER_DIED);

        /* Its places in sessions' queues: the operations behind it go on. */
        r = db_session_dequeue_worker(db, (int) pid);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to remove worker %d from the sessions' queues, ignoring: %s", (int) pid, db_errmsg(db));

        r = db_request_abandon(db, (int) pid, "sandbox execution failed: the worker handling the request died");
        if (r > 0)
                log_warning("Closed %d request(s) left in flight by worker %d", r, (int) pid);
        (void) db_error_counts_flush(db);
        db = db_close(db);
}

/* The pool manager sweeps what no row owns (nspawn/pool/sweep.h): a worker killed mid-operation (a
 * session's machine made or deleted halfway) may have left something. */
static void wake_sweep(void) {
        (void) pooldc_notify("sweep");
}

static void reap_worker(pid_t pid, int status) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return;
        log_warning("Worker %d died (%s %d), replacing it", (int) pid,
                    WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        abandon_requests(pid);
        wake_sweep();
}

static int master_loop(const SpawnArgs *a) {
        struct pollfd p[2] = {{.fd = a->sfd, .events = POLLIN}, {.fd = a->tfd, .events = POLLIN}};

        for (;;) {
                uint64_t expirations;
                pid_t pid;
                int status, sig;

                if (poll(p, ELEMENTSOF(p), -1) < 0 && errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for a signal");
                sig = signal_fd_read(a->sfd);
                if (sig < 0)
                        return log_error_errno(sig, "Failed to read a signal");
                if (sig == SIGTERM || sig == SIGINT)
                        return 0;
                (void) !read(a->tfd, &expirations, sizeof(expirations));

                while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                        if (worker_slots_release(workers, arg_config.workers, pid) >= 0)
                                reap_worker(pid, status);
                fill_slots(a);
        }
}

static void stop_workers(void) {
        (void) sd_notify(0, "STOPPING=1");
        for (unsigned i = 0; i < arg_config.workers; i++)
                if (workers[i] > 0)
                        (void) kill(workers[i], SIGTERM);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
}

/* Creates and migrates the database once, before any worker races for it; whatever is still in
 * flight was left by a previous instance. */
static int db_init(void) {
        sqlite3 *db = NULL;
        int r = db_open(arg_config.db_path, &db);

        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s': %s", arg_config.db_path, db_errmsg(NULL));
        db = db_close(db);
        abandon_requests(0);
        return 0;
}

static int open_listener(void) {
        int n = sd_listen_fds(1);

        if (n == 1)
                return SD_LISTEN_FDS_START;
        if (n > 1)
                return log_error_errno(EINVAL, "Expected one socket from systemd, got %d", n);
        /* Without socket activation (development): a socket of our own. */
        n = FCGX_OpenSocket(getenv("SANDBOXD_SOCKET") ? getenv("SANDBOXD_SOCKET") : "/run/sandboxd/fcgi.sock", 1024);
        return n >= 0 ? n : log_error_errno(EADDRNOTAVAIL, "Failed to open the FastCGI socket");
}

int main(void) {
        sigset_t mask;
        cleanup_close int sfd = -1, tfd = -1;
        SpawnArgs args;
        int r;

        /* The workers parse untrusted input: never as root. */
        if (daemon_start("sandboxd-fcgi", false, &arg_config) < 0)
                return EXIT_FAILURE;
        arg_listen_fd = open_listener();
        if (arg_listen_fd < 0)
                return EXIT_FAILURE;

        sfd = signal_fd_open(true, &mask);
        if (sfd < 0) {
                (void) log_error_errno(sfd, "Failed to set up signal handling");
                return EXIT_FAILURE;
        }
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (tfd < 0) {
                (void) log_error_errno(errno, "Failed to create a timer");
                return EXIT_FAILURE;
        }
        if (db_init() < 0)
                return EXIT_FAILURE;
        args = (SpawnArgs){.sfd = sfd, .tfd = tfd, .mask = &mask};
        fill_slots(&args);

        (void) sd_notifyf(0, "READY=1\nSTATUS=%u workers", arg_config.workers);
        log_info("sandboxd started with %u workers", arg_config.workers);

        r = master_loop(&args);
        stop_workers();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
