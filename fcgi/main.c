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
#include <sys/signalfd.h>
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
#include "fcgi/inflight.h"
#include "fcgi/live-settings.h"
#include "fcgi/machine-claim.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/worker-slots.h"
#include "fcgi/worker.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-client.h"

#define WORKERS_MAX INFLIGHT_WORKERS_MAX
/* After a failed fork(), the next try. */
#define WORKER_RETRY_S 1

static Config arg_config;
static int arg_listen_fd = -1;
static pid_t workers[WORKERS_MAX];
static Inflight *arg_inflight; /* shared with the workers: what each holds */
static LiveSettings *arg_live; /* shared with the workers: what a reload changed */

typedef struct SpawnArgs {
        int sfd;
        int tfd;
        const sigset_t *mask;
} SpawnArgs;

/* A worker: signals as usual again, the master's descriptors gone. */
static pid_t spawn_worker(unsigned slot, void *userdata) {
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
        _exit(worker_main(&arg_config, arg_listen_fd, slot, arg_inflight, arg_live) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
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

static void notify_status(void) {
        char what[128];

        (void) snprintf(what, sizeof(what), "%u workers, %u requests of work in flight at most", arg_config.workers, arg_config.max_inflight);
        daemon_notify_status(what);
}

/* systemctl reload: the workers take what a reload may change from the shared page, request by
 * request; a request in hand keeps what it started with. */
static void reload(const struct signalfd_siginfo *si) {
        if (daemon_reload("sandboxd-fcgi", &arg_config, si) >= 0)
                live_settings_store(arg_live, &arg_config);
        notify_status();
}

static int master_loop(const SpawnArgs *a) {
        struct pollfd p[2] = {{.fd = a->sfd, .events = POLLIN}, {.fd = a->tfd, .events = POLLIN}};

        for (;;) {
                struct signalfd_siginfo si;
                uint64_t expirations;
                pid_t pid;
                int status, sig;

                if (poll(p, ELEMENTSOF(p), -1) < 0 && errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for a signal");
                sig = signal_fd_read_info(a->sfd, &si);
                if (sig < 0)
                        return log_error_errno(sig, "Failed to read a signal");
                if (sig == SIGTERM || sig == SIGINT)
                        return 0;
                if (sig == SIGHUP)
                        reload(&si);
                (void) !read(a->tfd, &expirations, sizeof(expirations));

                        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                        int slot = worker_slots_release(workers, arg_config.workers, pid);

                        if (slot < 0)
                                continue;
                        /* Its places in flight are free again: its requests ended with it. */
                        inflight_release_worker(arg_inflight, (unsigned) slot);
                        reap_worker(pid, status);
                }
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

int main(int argc, char *argv[]) {
        sigset_t mask;
        cleanup_close int sfd = -1, tfd = -1;
        SpawnArgs args;
        int r;

        r = daemon_reload_main(argc, argv);
        if (r >= 0)
                return r;
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
        arg_inflight = inflight_new();
        if (!arg_inflight) {
                (void) log_error_errno(errno, "Failed to map the count of requests in flight");
                return EXIT_FAILURE;
        }
        arg_live = live_settings_new(&arg_config);
        if (!arg_live) {
                (void) log_error_errno(errno, "Failed to map the settings a reload changes");
                return EXIT_FAILURE;
        }
        if (db_init() < 0)
                return EXIT_FAILURE;
        args = (SpawnArgs){.sfd = sfd, .tfd = tfd, .mask = &mask};
        fill_slots(&args);

        (void) sd_notify(0, "READY=1");
        notify_status();
        log_info("sandboxd started with %u workers, %u requests of work in flight at most (SANDBOXD_MAX_INFLIGHT)", arg_config.workers,
                 arg_config.max_inflight);

        r = master_loop(&args);
        stop_workers();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
