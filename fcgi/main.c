/* SPDX-License-Identifier: MIT */
/* sandboxd-fcgi: a master that forks the FastCGI workers on systemd's socket and keeps them alive.
 * No request logic lives here. Privilege separation, as nginx does it: the master and the broker
 * (broker.c, systemd's only client) keep root; the workers, which parse untrusted input, and the pool
 * manager run as SANDBOXD_USER with no capabilities and reach systemd only through the broker. */
#include <errno.h>
#include <fcntl.h>
#include <fcgiapp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "fcgi/audit.h"
#include "nspawn/broker/broker.h"
#include "lib/config.h"
#include "db/db.h"
#include "db/requests.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "fcgi/messages.h"
#include "db/pool-db.h"
#include "nspawn/pool/poold.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"

#include <sqlite3.h>

#define WORKERS_MAX 256

static Config arg_config;
static int arg_listen_fd = -1;
static int arg_broker_fd = -1;
static uid_t arg_uid;
static gid_t arg_gid;
static pid_t workers[WORKERS_MAX];
static pid_t poold_pid = -1;
static pid_t broker_pid = -1;
/* Workers write to [1] after a claim (or a miss); the pool manager wakes on [0]. */
static int wake_pipe[2] = {-1, -1};

/* The request's end in its sqlite row (if it got one) and, always, its journald audit entry. */
static void record(Request *req, Context *ctx, bool has_row) {
        RequestOutcome o = {.sandbox_id = req->sandbox_id[0] ? req->sandbox_id : NULL, .status = req->status,
                            .has_exit_code = req->has_exit_code, .exit_code = req->exit_code,
                            .duration_ms = req->duration_ms, .error = req->error};
        int r;

        if (has_row) {
                r = db_request_finish(ctx->db, req->id, &o);
                if (r < 0)
                        (void) log_error_errno(r, "Failed to record the end of the request: %s", db_errmsg(ctx->db));
        }
        audit_request(req);
}

static const RouteHandler handlers[_ROUTE_MAX] = {
        [ROUTE_EXECUTE] = route_execute,
        [ROUTE_POOL] = route_pool,
        [ROUTE_CALL] = route_call,
};

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
        else if (handlers[route->id](&req, ctx) < 0 && req.status == 0)
                (void) reply_error(&req, 500, MSG_INTERNAL, "the request could not be answered");

done:
        record(&req, ctx, has_row);
        log_set_request(NULL, NULL);
        request_done(&req);
}

static int worker_main(void) {
        Context ctx = {.config = &arg_config, .wake_fd = wake_pipe[1], .broker = -1};
        FCGX_Request fcgx;
        int r;

        r = db_open(arg_config.db_path, &ctx.db);
        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s'", arg_config.db_path);

        if (FCGX_Init() != 0 || FCGX_InitRequest(&fcgx, arg_listen_fd, 0) != 0)
                return log_error_errno(EIO, "Failed to initialize FastCGI");

        while (FCGX_Accept_r(&fcgx) >= 0) {
                handle(&fcgx, &ctx);
                FCGX_Finish_r(&fcgx);

                /* The client has its answer: now the used sandbox goes. */
                if (ctx.retire_id[0]) {
                        poold_destroy(&ctx.broker, ctx.db, ctx.retire_id, ctx.retire_socket, "execution finished");
                        ctx.retire_id[0] = 0;
                }
        }

        closep(&ctx.broker);
        ctx.db = db_close(ctx.db);
        return 0;
}

/* In a child that is about to handle anything: root is gone for good, and the capabilities with it. */
static void drop_privileges(void) {
        if (getuid() != 0)
                return; /* not started as root (development): nothing to drop */
        if (setgroups(1, &arg_gid) < 0 || setresgid(arg_gid, arg_gid, arg_gid) < 0 || setresuid(arg_uid, arg_uid, arg_uid) < 0) {
                (void) log_error_errno(errno, "Failed to drop privileges to user '%s'", arg_config.user);
                _exit(EXIT_FAILURE);
        }
        if (getuid() != arg_uid || geteuid() != arg_uid || getgid() != arg_gid || setuid(0) == 0)
                abort();
}

/* A child for fn: signals as usual again, the master's descriptors gone, root dropped unless asked. */
static pid_t spawn(const sigset_t *mask, const char *name, int (*fn)(void), bool privileged) {
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        (void) prctl(PR_SET_NAME, name); /* what ps and the journal's _COMM show */
        (void) sigprocmask(SIG_UNBLOCK, mask, NULL);
        (void) signal(SIGTERM, SIG_DFL);
        if (!privileged) {
                closep(&arg_broker_fd);
                drop_privileges();
        }
        _exit(fn() < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static int worker_fn(void) {
        closep(&wake_pipe[0]);
        return worker_main();
}

static int poold_fn(void) {
        closep(&arg_listen_fd);
        closep(&wake_pipe[1]);
        return poold_main(&arg_config, wake_pipe[0]);
}

static int broker_fn(void) {
        closep(&arg_listen_fd);
        closep(&wake_pipe[0]);
        closep(&wake_pipe[1]);
        return broker_main(&arg_config, arg_broker_fd, arg_uid);
}

static pid_t spawn_worker(const sigset_t *mask) {
        return spawn(mask, "sandboxd-worker", worker_fn, false);
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
        sqlite3_stmt *st = NULL;
        cleanup_close int broker = -1;
        int r;

        if (db_open(arg_config.db_path, &db) < 0)
                return;
        if (sqlite3_prepare_v2(db, "SELECT sandbox_id FROM requests WHERE (worker_pid = ?1 OR ?1 = 0) AND status IS NULL AND sandbox_id IS NOT NULL", -1, &st, NULL) == SQLITE_OK) {
                (void) sqlite3_bind_int(st, 1, pid);
                while (sqlite3_step(st) == SQLITE_ROW)
                        (void) broker_kill(&broker, (const char *) sqlite3_column_text(st, 0));
        }
        (void) sqlite3_finalize(st);
        (void) db_pool_foreach(db, "claimed", (int) pid, destroy_claimed, NULL);
        for (size_t i = 0; i < n_claimed; i++)
                poold_destroy(&broker, db, claimed_ids[i], claimed_sockets[i], "its worker died");
        n_claimed = 0;

        r = db_request_abandon(db, (int) pid, "sandbox execution failed: the worker handling the request died");
        if (r > 0)
                (void) log_warning_errno(0, "Closed %d request(s) left in flight by worker %d", r, (int) pid);
        db = db_close(db);
}

/* The database is the workers' user's: cleaning up after one runs as that user, in a child. */
static pid_t abandon_pid;

static int abandon_fn(void) {
        abandon_requests(abandon_pid);
        return 0;
}

static void run_abandon(pid_t pid, const sigset_t *mask) {
        pid_t child;

        abandon_pid = pid;
        child = spawn(mask, "sandboxd-worker", abandon_fn, false);
        if (child > 0)
                (void) waitpid(child, NULL, 0);
}

static void reap_worker(pid_t pid, int status, const sigset_t *mask) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return;
        (void) log_warning_errno(0, "Worker %d died (%s %d), replacing it", (int) pid,
                                 WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        run_abandon(pid, mask);
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
                        if (pid == broker_pid) {
                                (void) log_warning_errno(0, "Broker %d died, restarting it", (int) pid);
                                broker_pid = spawn(mask, "sandboxd-broker", broker_fn, true);
                                continue;
                        }
                        if (pid == poold_pid) {
                                (void) log_warning_errno(0, "Pool manager %d died, restarting it", (int) pid);
                                poold_pid = spawn(mask, "sandboxd-pool", poold_fn, false);
                                continue;
                        }
                        for (unsigned i = 0; i < arg_config.workers; i++) {
                                if (workers[i] != pid)
                                        continue;
                                reap_worker(pid, status, mask);
                                workers[i] = spawn_worker(mask);
                        }
                }
        }
}

/* The broker goes last: the others may still be destroying sandboxes through it. */
static void wait_for(pid_t pid) {
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
}

static void stop_workers(void) {
        (void) sd_notify(0, "STOPPING=1");
        for (unsigned i = 0; i < arg_config.workers; i++)
                if (workers[i] > 0)
                        (void) kill(workers[i], SIGTERM);
        if (poold_pid > 0)
                (void) kill(poold_pid, SIGTERM);
        for (unsigned i = 0; i < arg_config.workers; i++)
                wait_for(workers[i]);
        wait_for(poold_pid);
        if (broker_pid > 0)
                (void) kill(broker_pid, SIGTERM);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
}

/* The broker's socket: anyone may connect, the broker serves only the workers' user (SO_PEERCRED). */
static int open_broker_socket(void) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = BROKER_SOCKET};
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return log_error_errno(errno, "Failed to create the broker's socket");
        (void) unlink(BROKER_SOCKET);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(BROKER_SOCKET, 0666) < 0 || listen(fd, 64) < 0) {
                int r = log_error_errno(errno, "Failed to listen on %s", BROKER_SOCKET);

                (void) close(fd);
                return r;
        }
        return fd;
}

static int lookup_user(void) {
        struct passwd *pw;

        if (getuid() != 0) {
                arg_uid = getuid();
                arg_gid = getgid();
                return 0;
        }
        errno = 0;
        pw = getpwnam(arg_config.user);
        if (!pw)
                return log_error_errno(errno ? errno : ESRCH, "User '%s' (SANDBOXD_USER) does not exist", arg_config.user);
        if (pw->pw_uid == 0)
                return log_error_errno(EPERM, "SANDBOXD_USER must not be root");
        arg_uid = pw->pw_uid;
        arg_gid = pw->pw_gid;
        return 0;
}

static int db_init_fn(void) {
        sqlite3 *db = NULL;
        int r = db_open(arg_config.db_path, &db);

        if (r < 0)
                return log_error_errno(r, "Failed to open database '%s': %s", arg_config.db_path, db_errmsg(db));
        db = db_close(db);
        /* No worker runs yet: whatever is still in flight was left by a previous instance. */
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

static const char *get_env(const char *name) {
        return getenv(name);
}

int main(void) {
        const char *bad = NULL;
        sigset_t mask;
        cleanup_close int sfd = -1;
        int status = 0, r;
        pid_t pid;

        r = config_parse(get_env, &arg_config, &bad);
        if (r < 0)
                return log_error_errno(r, "Invalid setting %s='%s'", bad, getenv(bad)) < 0 ? EXIT_FAILURE : EXIT_FAILURE;
        if (lookup_user() < 0)
                return EXIT_FAILURE;
        arg_listen_fd = open_listener();
        if (arg_listen_fd < 0)
                return EXIT_FAILURE;
        arg_broker_fd = open_broker_socket();
        if (arg_broker_fd < 0)
                return EXIT_FAILURE;

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
        broker_pid = spawn(&mask, "sandboxd-broker", broker_fn, true);
        /* Create and migrate the database once, before any worker races for it. */
        pid = spawn(&mask, "sandboxd-worker", db_init_fn, false);
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                stop_workers();
                return EXIT_FAILURE;
        }
        poold_pid = spawn(&mask, "sandboxd-pool", poold_fn, false);
        for (unsigned i = 0; i < arg_config.workers; i++)
                workers[i] = spawn_worker(&mask);

        (void) sd_notifyf(0, "READY=1\nSTATUS=%u workers", arg_config.workers);
        log_info("sandboxd started with %u workers", arg_config.workers);

        r = master_loop(sfd, &mask);
        stop_workers();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
