/* SPDX-License-Identifier: MIT */
/* sandboxd-fcgi: a master that forks the FastCGI workers on systemd's socket and keeps them alive.
 * No request logic lives here. */
#include <errno.h>
#include <fcntl.h>
#include <fcgiapp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "db/db.h"
#include "db/requests.h"
#include "log.h"
#include "macro.h"
#include "messages.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"
#include "db/pool.h"
#include "poold.h"
#include "reply.h"
#include "request.h"
#include "route.h"

#include <sqlite3.h>

#define WORKERS_MAX 256

static Config arg_config;
static int arg_listen_fd = -1;
static pid_t workers[WORKERS_MAX];
static pid_t poold_pid = -1;
/* Workers write to [1] after a claim (or a miss); the pool manager wakes on [0]. */
static int wake_pipe[2] = {-1, -1};

sd_bus *context_bus(Context *ctx) {
        const char *name;
        int r;

        if (ctx->bus && sd_bus_is_open(ctx->bus) > 0)
                return ctx->bus;
        ctx->bus = sd_bus_flush_close_unref(ctx->bus);
        r = sd_bus_open_system(&ctx->bus);
        /* The connection is set up asynchronously: finish authentication now, or the broker drops a
         * connection that stays idle in accept() for longer than its auth_timeout. */
        if (r >= 0)
                r = sd_bus_get_unique_name(ctx->bus, &name);
        if (r < 0) {
                ctx->bus = sd_bus_flush_close_unref(ctx->bus);
                (void) log_error_errno(r, "Failed to connect to the system bus");
        }
        return ctx->bus;
}

/* The request's end in its sqlite row (if it got one) and, always, its journald audit entry. */
static void record(Request *req, Context *ctx, bool has_row) {
        RequestOutcome o = {.sandbox_id = req->sandbox_id[0] ? req->sandbox_id : NULL, .status = req->status,
                            .has_exit_code = req->has_exit_code, .exit_code = req->exit_code,
                            .duration_ms = req->duration_ms, .error = req->error};
        AuditRecord a = {.sandbox_id = o.sandbox_id, .status = req->status, .has_exit_code = req->has_exit_code,
                         .exit_code = req->exit_code, .duration_ms = req->duration_ms, .error = req->error, .cpu_usec = req->cpu_usec};
        int r;

        if (a.duration_ms < 0)
                a.duration_ms = (int64_t) ((request_now_usec() - req->start_usec) / 1000);
        if (has_row) {
                r = db_request_finish(ctx->db, req->id, &o);
                if (r < 0)
                        (void) log_error_errno(r, "Failed to record the end of the request: %s", db_errmsg(ctx->db));
        }
        log_audit(&a);
}

/* parse → route → act → record → reply, for one request. */
static void handle(FCGX_Request *fcgx, Context *ctx) {
        Request req;
        const Route *route = NULL;
        bool has_row = false;
        int r, found;

        r = request_read(&req, fcgx, ctx->config->max_body_bytes);
        log_set_request(req.id, req.route);
        if (r < 0) {
                (void) reply_error(&req, 500, MSG_INTERNAL, "out of memory");
                goto done;
        }

        r = db_request_begin(ctx->db, req.id, req.route, (int) getpid());
        if (r < 0) {
                (void) log_error_errno(r, "Failed to record the request: %s", db_errmsg(ctx->db));
                (void) reply_error(&req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
                goto done;
        }
        has_row = true;

        found = route_find(req.method, req.path, &route);
        if (found == 404)
                (void) reply_error(&req, 404, MSG_NOT_FOUND);
        else if (found == 405) {
                req.allow = route->method;
                (void) reply_error(&req, 405, MSG_METHOD_NOT_ALLOWED);
        } else if (req.body_too_large)
                (void) reply_error(&req, 413, MSG_BODY_TOO_LARGE);
        else if (route->handler(&req, ctx) < 0 && req.status == 0)
                (void) reply_error(&req, 500, MSG_INTERNAL, "the request could not be answered");

done:
        record(&req, ctx, has_row);
        log_set_request(NULL, NULL);
        request_done(&req);
}

static int worker_main(void) {
        Context ctx = {.config = &arg_config, .wake_fd = wake_pipe[1]};
        FCGX_Request fcgx;
        int r;

        r = db_open(arg_config.db_path, &ctx.db);
        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s'", arg_config.db_path);
        (void) context_bus(&ctx);

        if (FCGX_Init() != 0 || FCGX_InitRequest(&fcgx, arg_listen_fd, 0) != 0)
                return log_error_errno(EIO, "Failed to initialize FastCGI");

        while (FCGX_Accept_r(&fcgx) >= 0) {
                handle(&fcgx, &ctx);
                FCGX_Finish_r(&fcgx);

                /* The client has its answer: now the used sandbox goes. */
                if (ctx.retire_id[0]) {
                        poold_destroy(context_bus(&ctx), ctx.db, ctx.retire_id, ctx.retire_socket, "execution finished");
                        ctx.retire_id[0] = 0;
                }
        }

        ctx.bus = sd_bus_flush_close_unref(ctx.bus);
        ctx.db = db_close(ctx.db);
        return 0;
}

static pid_t spawn_worker(const sigset_t *mask) {
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        (void) sigprocmask(SIG_UNBLOCK, mask, NULL);
        (void) signal(SIGTERM, SIG_DFL);
        closep(&wake_pipe[0]);
        _exit(worker_main() < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static pid_t spawn_poold(const sigset_t *mask) {
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        (void) sigprocmask(SIG_UNBLOCK, mask, NULL);
        (void) signal(SIGTERM, SIG_DFL);
        closep(&arg_listen_fd);
        closep(&wake_pipe[1]);
        _exit(poold_main(&arg_config, wake_pipe[0]) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static char claimed_ids[64][SANDBOX_ID_MAX];
static char claimed_sockets[64][POOL_SOCKET_MAX];
static size_t n_claimed;

static void destroy_claimed(const char *id, const char *state, const char *socket, int owner, void *userdata) {
        (void) state;
        (void) owner;
        (void) userdata;
        if (n_claimed >= 64)
                return;
        (void) snprintf(claimed_ids[n_claimed], SANDBOX_ID_MAX, "%s", id);
        (void) snprintf(claimed_sockets[n_claimed++], POOL_SOCKET_MAX, "%s", socket);
}

/* Requests left in flight by a dead worker (0: by any, after a restart of the whole service): their
 * sandboxes are killed and their records closed with the reason. */
static void abandon_requests(pid_t pid) {
        sqlite3 *db = NULL;
        sd_bus *bus = NULL;
        sqlite3_stmt *st = NULL;
        int r;

        if (db_open(arg_config.db_path, &db) < 0)
                return;
        if (sd_bus_open_system(&bus) >= 0 &&
            sqlite3_prepare_v2(db, "SELECT sandbox_id FROM requests WHERE (worker_pid = ?1 OR ?1 = 0) AND status IS NULL AND sandbox_id IS NOT NULL", -1, &st, NULL) == SQLITE_OK) {
                (void) sqlite3_bind_int(st, 1, pid);
                while (sqlite3_step(st) == SQLITE_ROW) {
                        char unit[SANDBOX_ID_MAX + 16];

                        if (unit_name_from_id((const char *) sqlite3_column_text(st, 0), unit, sizeof(unit)) >= 0)
                                (void) sandbox_kill(bus, unit, NULL);
                }
        }
        (void) sqlite3_finalize(st);
        (void) db_pool_foreach(db, "claimed", (int) pid, destroy_claimed, NULL);
        if (bus) {
                for (size_t i = 0; i < n_claimed; i++)
                        poold_destroy(bus, db, claimed_ids[i], claimed_sockets[i], "its worker died");
        }
        n_claimed = 0;
        bus = sd_bus_flush_close_unref(bus);

        r = db_request_abandon(db, (int) pid, "sandbox execution failed: the worker handling the request died");
        if (r > 0)
                (void) log_warning_errno(0, "Closed %d request(s) left in flight by worker %d", r, (int) pid);
        db = db_close(db);
}

static void reap_worker(pid_t pid, int status) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return;
        (void) log_warning_errno(0, "Worker %d died (%s %d), replacing it", (int) pid,
                                 WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        abandon_requests(pid);
}

static int master_loop(int sfd, const sigset_t *mask) {
        for (;;) {
                struct signalfd_siginfo si;
                pid_t pid;
                int status;

                if (read(sfd, &si, sizeof(si)) != (ssize_t) sizeof(si))
                        continue;
                if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
                        return 0;

                while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                        if (pid == poold_pid) {
                                (void) log_warning_errno(0, "Pool manager %d died, restarting it", (int) pid);
                                poold_pid = spawn_poold(mask);
                                continue;
                        }
                        for (unsigned i = 0; i < arg_config.workers; i++) {
                                if (workers[i] != pid)
                                        continue;
                                reap_worker(pid, status);
                                workers[i] = spawn_worker(mask);
                        }
                }
        }
}

static void stop_workers(void) {
        (void) sd_notify(0, "STOPPING=1");
        for (unsigned i = 0; i < arg_config.workers; i++)
                if (workers[i] > 0)
                        (void) kill(workers[i], SIGTERM);
        if (poold_pid > 0)
                (void) kill(poold_pid, SIGTERM);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
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

static const char *get_env(const char *name) {
        return getenv(name);
}

int main(void) {
        const char *bad = NULL;
        sigset_t mask;
        cleanup_close int sfd = -1;
        sqlite3 *db = NULL;
        int r;

        r = config_parse(get_env, &arg_config, &bad);
        if (r < 0)
                return log_error_errno(r, "Invalid setting %s='%s'", bad, getenv(bad)) < 0 ? EXIT_FAILURE : EXIT_FAILURE;
        arg_listen_fd = open_listener();
        if (arg_listen_fd < 0)
                return EXIT_FAILURE;

        /* Create and migrate the database once, before any worker races for it. */
        r = db_open(arg_config.db_path, &db);
        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s': %s", arg_config.db_path, db_errmsg(db)) < 0 ? EXIT_FAILURE : 0;
        db = db_close(db);
        /* No worker runs yet: whatever is still in flight was left by a previous instance. */
        abandon_requests(0);

        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGCHLD);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        if (sfd < 0)
                return log_error_errno(errno, "Failed to create signalfd") < 0 ? EXIT_FAILURE : 0;

        if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return log_error_errno(errno, "Failed to create the pool's wake-up pipe") < 0 ? EXIT_FAILURE : 0;
        poold_pid = spawn_poold(&mask);
        for (unsigned i = 0; i < arg_config.workers; i++)
                workers[i] = spawn_worker(&mask);

        (void) sd_notifyf(0, "READY=1\nSTATUS=%u workers", arg_config.workers);
        log_info("sandboxd started with %u workers", arg_config.workers);

        r = master_loop(sfd, &mask);
        stop_workers();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
