/* SPDX-License-Identifier: MIT */
/* A worker process: one thread accepts FastCGI requests, and each request is served by a thread of
 * its own, for as long as its work takes. A request waiting for its code to end holds a thread, a
 * sqlite connection and its body, and no CPU: the number of processes no longer bounds the number of
 * requests, SANDBOXD_MAX_INFLIGHT does (fcgi/inflight.h). Control routes (the pool's state, the
 * metrics, listings) have places of their own, so that no amount of work keeps them waiting. */
#include <errno.h>
#include <fcgiapp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/requests.h"
#include "fcgi/audit.h"
#include "fcgi/auth.h"
#include "fcgi/inflight.h"
#include "fcgi/live-settings.h"
#include "fcgi/machine-claim.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/worker.h"
#include "lib/config.h"
#include "lib/fd-wait.h"
#include "lib/log.h"
#include "lib/macro.h"

/* What a refusal for being over a bound asks the client to wait. */
#define BUSY_RETRY_AFTER_S 1
/* Idle sqlite connections a worker keeps for its next requests; more are closed. */
#define DB_IDLE_MAX 16
/* A request's thread: the handlers' deepest path (json-c's parser at its depth limit, sqlite) uses
 * a fraction of it, and only the pages touched cost memory. */
#define THREAD_STACK_BYTES (512U << 10)

typedef struct Worker {
        const Config *config;
        int listen_fd;
        unsigned slot;
        Inflight *inflight;
        const LiveSettings *live; /* what a reload changed of config */
        pthread_attr_t attr;
        pthread_mutex_t lock;
        pthread_cond_t ended; /* a request's thread ended */
        unsigned threads;
        sqlite3 *idle_db[DB_IDLE_MAX];
        size_t n_idle_db;
} Worker;

/* One request, from its accept to its answer and the machine's return to the pool. */
typedef struct Job {
        Worker *worker;
        FCGX_Request fcgx;
        Load load;
} Job;

static int db_get(Worker *w, sqlite3 **ret) {
        sqlite3 *db = NULL;

        pthread_mutex_lock(&w->lock);
        if (w->n_idle_db > 0)
                db = w->idle_db[--w->n_idle_db];
        pthread_mutex_unlock(&w->lock);
        if (db) {
                *ret = db;
                return 0;
        }
        return db_open(w->config->db_path, ret);
}

static void db_put(Worker *w, sqlite3 *db) {
        if (!db)
                return;
        pthread_mutex_lock(&w->lock);
        if (w->n_idle_db < DB_IDLE_MAX) {
                w->idle_db[w->n_idle_db++] = db;
                db = NULL;
        }
        pthread_mutex_unlock(&w->lock);
        (void) db_close(db);
}

/* The request's end in its sqlite row (if it got one) and, always, its journald audit entry. */
static void record(Request *req, Context *ctx, bool has_row) {
        RequestNetwork n = {.rx_bytes = req->network_rx_bytes,
                            .tx_bytes = req->network_tx_bytes,
                            .connections = req->network_connections,
                            .refusals = req->network_refusals,
                            .hosts = req->network_hosts,
                            .refused = req->network_refused};
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
                            .memory_peak_bytes = req->memory_peak_bytes,
                            .mcp_method = req->mcp_method[0] ? req->mcp_method : NULL,
                            .mcp_tool = req->mcp_tool[0] ? req->mcp_tool : NULL,
                            .network = req->network_rx_bytes >= 0 ? &n : NULL};
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

/* Over its class's bound: 503 with Retry-After, in the words the reference has for an execution
 * that found no sandbox, and recorded as any other answer. */
static int refuse_busy(Request *req, Context *ctx, Load load) {
        const Route *route = NULL;
        bool execution = route_find(req->method, req->path, &route) == 200 &&
                         (route->id == ROUTE_EXECUTE || route->id == ROUTE_EXECUTE_004);

        req->retry_after_s = BUSY_RETRY_AFTER_S;
        if (execution)
                return reply_error(req, 503, MSG_NO_SANDBOX);
        return reply_error(req, 503, MSG_SERVICE_BUSY, load == LOAD_WORK ? ctx->config->max_inflight : INFLIGHT_CONTROL_MAX);
}

/* parse → route → act → record → reply, for one request; busy: refused for being over its bound. */
static void handle(FCGX_Request *fcgx, Context *ctx, Load load, bool busy) {
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
        if (!ctx->db) {
                (void) reply_error(&req, 503, MSG_DB_UNAVAILABLE, db_errmsg(NULL));
                goto done;
        }
        if (FCGX_GetParam("SANDBOXD_AUTH_ONLY", fcgx->envp) && !busy) {
                handle_auth_only(&req, ctx);
                log_set_request(NULL, NULL);
                request_done(&req);
                return;
        }

        /* The route first, pure: the row names the one the request matched. Then the row, with the
         * API key's check when keys are on: every route but /metrics needs one; a path that is no
         * route, or a method it does not take, is answered as such without. A refusal for being
         * over a bound checks no key: it tells nothing, and must cost next to nothing. */
        found = route_find(req.method, req.path, &route);
        r = auth_begin(&req, ctx, found == 404 ? NULL : route,
                       !busy && ctx->config->api_keys && found == 200 && route->id != ROUTE_METRICS);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to record the request: %s", db_errmsg(ctx->db));
                (void) reply_error(&req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
                goto done;
        }
        has_row = true;

        if (req.status != 0)
                ; /* refused: no key in force, or over a quota */
        else if (busy)
                (void) refuse_busy(&req, ctx, load);
        else if (req.uri_too_long)
                (void) reply_error(&req, 414, MSG_URI_TOO_LONG);
        else if (found == 404)
                (void) reply_error(&req, 404, MSG_NOT_FOUND);
        else if (found == 405) {
                req.allow = route->method;
                (void) reply_error(&req, 405, MSG_METHOD_NOT_ALLOWED);
        } else if (req.body_too_large)
                (void) reply_error(&req, 413, MSG_BODY_TOO_LARGE);
        else if (route_handler(route->id)(&req, ctx) < 0 && req.status == 0) {
                if (fd_client_gone(fcgx->ipcFd))
                        (void) reply_abandoned(&req); /* nobody reads an answer now */
                else
                        (void) reply_error(&req, 500, MSG_INTERNAL, "the request could not be answered");
        }

done:
        record(&req, ctx, has_row);
        log_set_request(NULL, NULL);
        request_done(&req);
}

/* A request served and answered, and what it leaves done after the answer. */
static void serve_job(Job *j, bool busy) {
        Worker *w = j->worker;
        Config config = *w->config;
        Context ctx = {.config = &config, .inflight = w->inflight, .broker = -1};

        live_settings_load(w->live, &config);
        if (db_get(w, &ctx.db) < 0)
                ctx.db = NULL;
        handle(&j->fcgx, &ctx, j->load, busy);
        FCGX_Finish_r(&j->fcgx);

        /* The client has its answer: now the machine goes back to the pool, or goes. */
        machine_release(&ctx.machine);
        /* The errors the request met, sqlite's and the broker's, into their totals. */
        if (ctx.db)
                (void) db_error_counts_flush(ctx.db);
        closep(&ctx.broker);
        db_put(w, ctx.db);
}

static void *job_thread(void *userdata) {
        Job *j = userdata;
        Worker *w = j->worker;

        serve_job(j, false);
        inflight_give_back(w->inflight, w->slot, j->load);
        free(j);

        pthread_mutex_lock(&w->lock);
        w->threads--;
        pthread_cond_broadcast(&w->ended);
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/* A thread for the accepted request, with no signal of its own: the master's SIGTERM is the
 * accepting thread's to take. -errno when none could be made. */
static int job_start(Worker *w, Job *j) {
        sigset_t all, old;
        pthread_t t;
        int r;

        pthread_mutex_lock(&w->lock);
        w->threads++;
        pthread_mutex_unlock(&w->lock);

        (void) sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, &old);
        r = pthread_create(&t, &w->attr, job_thread, j);
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r == 0)
                return 0;

        pthread_mutex_lock(&w->lock);
        w->threads--;
        pthread_mutex_unlock(&w->lock);
        return -r;
}

/* The class of an accepted request, from its parameters alone: its body is not read yet. */
static Load job_load(FCGX_Request *fcgx) {
        const char *method = FCGX_GetParam("REQUEST_METHOD", fcgx->envp), *path = FCGX_GetParam("DOCUMENT_URI", fcgx->envp),
                   *uri = FCGX_GetParam("REQUEST_URI", fcgx->envp);
        char raw[4096];

        (void) snprintf(raw, sizeof(raw), "%s", uri ? uri : "");
        raw[strcspn(raw, "?")] = 0;
        return inflight_load(method ? method : "", path ? path : "", raw);
}

/* The master's SIGTERM: the worker is to stop once the requests in hand are answered. libfcgi's own
 * handler would do the same, but silently; this one says so, and libfcgi keeps it (it installs its
 * handler only where none is). */
static volatile sig_atomic_t stopping;

static void on_stop(int sig) {
        (void) sig;
        stopping = 1;
        FCGX_ShutdownPending();
}

/* The next connection from nginx, or -1 when the worker is to stop. accept() here, not libfcgi's:
 * its own checks the new descriptor with select(), which cannot take one past 1023, and a worker
 * with hundreds of requests in flight holds more than that. Running out of descriptors waits for a
 * request to end rather than spin. */
static int accept_next(Worker *w) {
        for (;;) {
                int fd = accept4(w->listen_fd, NULL, NULL, SOCK_CLOEXEC);

                if (fd >= 0)
                        return fd;
                if (stopping)
                        return -1;
                switch (errno) {
                case EINTR:
                case ECONNABORTED:
                        continue;
                case EMFILE:
                case ENFILE:
                case ENOBUFS:
                case ENOMEM: {
                        struct timespec soon;

                        (void) log_warning_errno(errno, "Failed to accept a FastCGI connection, waiting for a request to end");
                        (void) clock_gettime(CLOCK_REALTIME, &soon);
                        soon.tv_nsec += 100L * 1000L * 1000L;
                        if (soon.tv_nsec >= 1000L * 1000L * 1000L) {
                                soon.tv_sec++;
                                soon.tv_nsec -= 1000L * 1000L * 1000L;
                        }
                        pthread_mutex_lock(&w->lock);
                        (void) pthread_cond_timedwait(&w->ended, &w->lock, &soon);
                        pthread_mutex_unlock(&w->lock);
                        continue;
                }
                default:
                        (void) log_error_errno(errno, "Failed to accept a FastCGI connection");
                        return -1;
                }
        }
}

/* Accepts until the master's SIGTERM; each request gets a place of its class and a thread, or is
 * refused here, at once, when its class is full or no thread can be made. */
static void accept_loop(Worker *w) {
        for (;;) {
                Job *j;
                unsigned max;
                int fd = accept_next(w);

                if (fd < 0)
                        return;
                j = calloc(1, sizeof(Job));
                if (!j || FCGX_InitRequest(&j->fcgx, -1, 0) != 0) {
                        (void) log_error_errno(ENOMEM, "Failed to take a FastCGI request");
                        (void) close(fd);
                        free(j);
                        continue;
                }
                j->worker = w;
                /* libfcgi reads the request from the connection it is given rather than accept one:
                 * a connection it finds open and to be kept. The request's own flags then say
                 * whether it is kept after the answer (nginx: not). */
                j->fcgx.ipcFd = fd;
                j->fcgx.keepConnection = 1;
                if (FCGX_Accept_r(&j->fcgx) < 0) {
                        /* A connection closed before it brought a whole request: libfcgi closed it. */
                        free(j);
                        continue;
                }
                /* nginx's key check, before it reads a body: a lookup by digest, answered here at
                 * once. Refused for being busy, nginx could only turn it into a 500; the request
                 * it checks is counted, and refused if need be, in its own right. */
                if (FCGX_GetParam("SANDBOXD_AUTH_ONLY", j->fcgx.envp)) {
                        serve_job(j, false);
                        free(j);
                        continue;
                }
                j->load = job_load(&j->fcgx);
                max = j->load == LOAD_WORK ? w->config->max_inflight : INFLIGHT_CONTROL_MAX;
                if (inflight_take(w->inflight, w->slot, j->load, max) >= 0) {
                        if (job_start(w, j) >= 0)
                                continue;
                        inflight_give_back(w->inflight, w->slot, j->load);
                        log_warning("Failed to start a thread for a request, refusing it");
                }
                serve_job(j, true);
                free(j);
        }
}

static int worker_init(Worker *w) {
        int r;

        r = pthread_mutex_init(&w->lock, NULL);
        if (r == 0)
                r = pthread_cond_init(&w->ended, NULL);
        if (r == 0)
                r = pthread_attr_init(&w->attr);
        if (r == 0)
                r = pthread_attr_setdetachstate(&w->attr, PTHREAD_CREATE_DETACHED);
        if (r == 0)
                r = pthread_attr_setstacksize(&w->attr, THREAD_STACK_BYTES);
        return -r;
}

int worker_main(const Config *config, int listen_fd, unsigned slot, Inflight *inflight, const LiveSettings *live) {
        Worker w = {.config = config, .listen_fd = listen_fd, .slot = slot, .inflight = inflight, .live = live};
        /* No SA_RESTART: accept() returns, and libfcgi, told shutdown is pending, gives up. */
        struct sigaction sa = {.sa_handler = on_stop};
        int r;

        if (sigaction(SIGTERM, &sa, NULL) < 0)
                return log_error_errno(errno, "Failed to set up SIGTERM");
        r = worker_init(&w);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the worker's threads");
        if (FCGX_Init() != 0)
                return log_error_errno(EIO, "Failed to initialize FastCGI");

        accept_loop(&w);

        /* The requests in hand are answered first: each ends by itself, by its own deadline. */
        pthread_mutex_lock(&w.lock);
        while (w.threads > 0)
                pthread_cond_wait(&w.ended, &w.lock);
        pthread_mutex_unlock(&w.lock);
        for (size_t i = 0; i < w.n_idle_db; i++)
                (void) db_close(w.idle_db[i]);

        /* A worker ends by the master's SIGTERM; else the loop ends only when accept() fails, and
         * the master should hear of it. */
        if (stopping)
                return 0;
        return log_error_errno(EIO, "Failed to accept a FastCGI request");
}
