/* SPDX-License-Identifier: MIT */
/* sandboxd-poold, the pool manager: machines started ahead, so that an execution never waits
 * for a container to boot. Workers claim them through sqlite; this process only creates, probes and
 * retires them, through the broker. It runs as the workers' user, in a unit of its own
 * (sandboxd-poold.service): it keeps pool_target idle machines ready, more (up to pool_max) while
 * requests have to wait, replaces idle ones after pool_ttl_s, and cleans up what a previous instance
 * left. Workers wake it with a datagram on POOL_WAKE_SOCKET when they claimed a sandbox or found
 * none. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "db/session-revoke.h"
#include "db/requests.h"
#include "db/sessions.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/sweep.h"
#include "nspawn/pool/session-usage.h"
#include "nspawn/unit-name.h"

/* How many containers may boot at once: each costs a core for ~60 ms. */
#define PARALLEL_STARTS 4
#define START_TIMEOUT_USEC (30 * USEC_PER_SEC)
/* The pool shrinks back to its target once no request has had to wait for this long. */
#define BOOST_HOLD_USEC (10 * USEC_PER_SEC)
#define BACKOFF_MAX_USEC (5 * USEC_PER_SEC)
#define HOUSEKEEPING_MS 1000
/* How often what no row owns is swept (sweep.h), besides at start and on SIGHUP: a slow timer, as
 * leftovers only come from a crash or a failed removal; sooner while a removal keeps failing. */
#define SWEEP_USEC (5 * 60 * USEC_PER_SEC)
#define SWEEP_RETRY_USEC (30 * USEC_PER_SEC)
/* Old records go slowly: a day's worth at most ever waits for the next prune. */
#define PRUNE_USEC (3600 * USEC_PER_SEC)
/* How long a session's runner has to say what its sandbox used before its machine is stopped. */
#define USAGE_TIMEOUT_USEC (2 * USEC_PER_SEC)

typedef struct Starting {
        char id[SANDBOX_ID_MAX];
        char socket[POOL_SOCKET_MAX];
        int fd;
        size_t got;
        uint64_t deadline;
} Starting;

typedef struct Poold {
        const Config *config;
        int broker; /* connection to the broker, which starts and kills the units */
        int signal_fd;
        int wake_fd;
        bool stop;
        sqlite3 *db;
        Starting starting[PARALLEL_STARTS]; /* fill() starts no more */
        char settings[1024];                /* what a machine started now is made with (machine_settings()) */
        size_t n_starting;
        unsigned boost;
        int64_t last_waits;
        uint64_t last_wait_at;
        unsigned failures;
        uint64_t backoff_until;
        uint64_t next_sweep;
        uint64_t next_retire;
        uint64_t next_prune; /* records past SANDBOXD_RECORD_RETAIN_DAYS: at start, then hourly */
} Poold;

/* Starts one machine: its socket, its row, its unit; the probe waits for its greeting. */
static int start_one(Poold *p) {
        cleanup_close int listen_fd = -1;
        Starting *s = &p->starting[p->n_starting];
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
        char id[SANDBOX_ID_MAX];
        Error err = {};
        int r;

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        r = unit_name_sandbox_id("machine", rnd, id);
        if (r < 0)
                return r;
        memcpy(s->id, id, sizeof(s->id));
        (void) snprintf(s->socket, sizeof(s->socket), POOL_DIR "/%s.sock", id);

        r = pool_listen(s->socket, &listen_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on '%s'", s->socket);
        r = db_pool_add(p->db, s->id, s->socket, p->settings);
        if (r < 0) {
                (void) unlink(s->socket);
                return log_error_errno(r, "Failed to record sandbox '%s': %s", s->id, db_errmsg(p->db));
        }
        r = broker_start_warm(&p->broker, s->id, listen_fd, &err);
        if (r >= 0)
                r = pool_connect(s->socket, &s->fd);
        if (r < 0) {
                log_pool_event(LOG_ERR, "failed", s->id, "Failed to start sandbox '%s': %s", s->id, error_message(&err, r));
                (void) db_pool_health_failed(p->db, error_message(&err, r));
                pool_destroy(&p->broker, p->db, s->id, s->socket, POOL_RETIRE_START_FAILED);
                return r;
        }

        s->got = 0;
        s->deadline = now_usec(CLOCK_MONOTONIC) + START_TIMEOUT_USEC;
        p->n_starting++;
        log_pool_event(LOG_INFO, "created", s->id, "Machine '%s' created", s->id);
        return 0;
}

static void starting_remove(Poold *p, size_t i) {
        closep(&p->starting[i].fd);
        p->starting[i] = p->starting[--p->n_starting];
}

static void start_failed(Poold *p, size_t i, const char *why) {
        uint64_t backoff = 100 * USEC_PER_MSEC << (p->failures < 6 ? p->failures : 6);
        char reason[256];

        (void) snprintf(reason, sizeof(reason), "%s (journalctl -u %s.service tells why)", why, p->starting[i].id);
        (void) db_pool_health_failed(p->db, reason);
        log_pool_event(LOG_ERR, "failed", p->starting[i].id, "Machine '%s' failed to start: %s", p->starting[i].id, why);
        pool_destroy(&p->broker, p->db, p->starting[i].id, p->starting[i].socket, POOL_RETIRE_START_FAILED);
        starting_remove(p, i);
        p->failures++;
        p->backoff_until = now_usec(CLOCK_MONOTONIC) + (backoff < BACKOFF_MAX_USEC ? backoff : BACKOFF_MAX_USEC);
}

/* A starting sandbox's socket is readable: its greeting, or its end. */
static void probe(Poold *p, size_t i) {
        Starting *s = &p->starting[i];
        int r = pool_read_greeting(s->fd, &s->got);

        if (r == -EAGAIN)
                return;
        if (r < 0) {
                start_failed(p, i, "the sandbox ended before it was ready");
                return;
        }
        r = db_pool_ready(p->db, s->id);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to mark sandbox '%s' ready: %s", s->id, db_errmsg(p->db));
                pool_destroy(&p->broker, p->db, s->id, s->socket, POOL_RETIRE_LOST_RECORD);
        } else
                log_pool_event(LOG_INFO, "ready", s->id, "Machine '%s' ready", s->id);
        if (p->failures > 0)
                (void) db_pool_health_ok(p->db);
        p->failures = 0;
        starting_remove(p, i);
}

/* The number of idle machines wanted now: the target, plus a boost while requests wait. */
static unsigned wanted(Poold *p, const PoolCounts *c) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        unsigned room = p->config->pool_max - p->config->pool_target;

        if (c->waits > p->last_waits) {
                int64_t more = c->waits - p->last_waits;

                p->boost = p->boost + (unsigned) more > room ? room : p->boost + (unsigned) more;
                p->last_wait_at = now;
        }
        p->last_waits = c->waits;
        if (p->boost > 0 && now - p->last_wait_at > BOOST_HOLD_USEC)
                p->boost = 0;
        return p->config->pool_target + p->boost;
}

/* The settings a machine is made with (the broker reads the same file), and the runtime image's tree
 * in use (sandboxd-image writes its name when it switches): a machine made with others is not kept
 * across a restart, nor once idle after the runtime image is rebuilt. */
static void machine_settings(const Config *c, char *buf, size_t size) {
        char tree[256] = "", path[PATH_MAX];
        FILE *f;

        (void) snprintf(path, sizeof(path), "%s/current", c->runtime_state_dir);
        f = fopen(path, "re");
        if (f) {
                if (!fgets(tree, sizeof(tree), f))
                        tree[0] = 0;
                tree[strcspn(tree, "\n")] = 0;
                (void) fclose(f);
        }
        /* At most about 600 bytes: the strings are bounded by config_parse() and the tree's name. */
        (void) snprintf(buf, size,
                        "memory=%" PRIu64 " tasks=%" PRIu64 " cpu=%u workspace=%" PRIu64 " tmp=%" PRIu64 " nofile=%u executions=%u "
                        "runtime=%s/%s preload=%s openblas=%s",
                        c->memory_max, c->tasks_max, c->cpu_quota_percent, c->workspace_bytes, c->tmp_bytes, c->nofile,
                        c->executions_per_machine, c->runtime_image, tree, c->preload, c->openblas_coretype);
}

/* A session's event: its sqlite row and its journal entry; the pool manager acts on no request. */
static void session_event(Poold *p, const char *id, const char *event, const char *detail) {
        int r = db_session_event(p->db, id, event, NULL, detail);

        if (r < 0)
                (void) log_warning_errno(r, "Failed to record event '%s' of session '%s': %s", event, id, db_errmsg(p->db));
        log_session_event(event, id, "", detail);
}

/* What the session's sandbox used since its last run, which no run will report now: recorded,
 * billed to its key, before its machine stops. A machine that does not answer has nothing to bill. */
static void session_bill(Poold *p, const char *id, const char *event) {
        char path[POOL_SOCKET_MAX];
        int64_t cpu_ms = 0;
        int r;

        session_socket_path(id, path, sizeof(path));
        if (session_usage_fetch(path, now_usec(CLOCK_MONOTONIC) + USAGE_TIMEOUT_USEC, &cpu_ms) < 0 || cpu_ms <= 0)
                return;
        r = db_session_usage_add(p->db, id, event, NULL, cpu_ms);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record the CPU time of session '%s' since its last run, ignoring: %s", id, db_errmsg(p->db));
}

/* Request records older than SANDBOXD_RECORD_RETAIN_DAYS go, in small batches so that no worker
 * waits long for the write lock. The totals are kept by triggers on status updates, which a delete
 * does not fire; the quotas look back a day at most, and the retention is a day at least. */
static void records_prune(Poold *p) {
        int64_t n = 0;
        int r = db_records_prune(p->db, p->config->record_retain_days, &n);

        if (r < 0)
                (void) log_warning_errno(r, "Failed to prune records older than %u days, ignoring: %s", p->config->record_retain_days, db_errmsg(p->db));
        else if (n > 0)
                log_info("Pruned %" PRId64 " records older than %u days (SANDBOXD_RECORD_RETAIN_DAYS)", n, p->config->record_retain_days);
}

/* A session claimed for pausing ('pausing'): its machine stopped, its disk unmounted and kept. */
static void session_pause(Poold *p, const char *id, const char *event, const char *why) {
        char path[POOL_SOCKET_MAX];
        Error err = {};
        int r;

        session_bill(p, id, event);
        r = broker_session_stop(&p->broker, id, false, &err);

        if (r < 0) {
                /* Tried again at the next housekeeping, as the session is still pausing. */
                (void) log_error_errno(r, "Failed to pause session '%s': %s", id, err.message);
                return;
        }
        session_socket_path(id, path, sizeof(path));
        (void) unlink(path);
        r = db_session_paused(p->db, id);
        if (r < 0 && r != -ENOENT)
                (void) log_error_errno(r, "Failed to record that session '%s' is paused: %s", id, db_errmsg(p->db));
        if (r >= 0)
                session_event(p, id, event, why);
}

/* Idle sessions are paused (their files kept), long-paused ones deleted; sessions left pausing (by a
 * previous instance, or a stop that failed) are paused again. */
static void sessions_housekeeping(Poold *p) {
        double now = (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC;
        cleanup_free Session *list = NULL;
        char id[SANDBOX_ID_MAX];
        size_t n = 0;

        while (db_session_claim_expired(p->db, now, id, sizeof(id)) >= 0)
                session_pause(p, id, "expire", "idle for longer than its ttl_s");
        /* A revoked key's sessions end: paused now, deleted after the usual retention. */
        while (db_session_claim_revoked(p->db, id, sizeof(id)) >= 0)
                session_pause(p, id, "revoke", "its API key was revoked");
        while (db_session_claim_retained(p->db, now - (double) p->config->session_retain_s, id, sizeof(id)) >= 0) {
                Error err = {};
                int r = broker_session_stop(&p->broker, id, true, &err);

                session_event(p, id, "delete", r < 0 ? err.message : "paused for longer than SANDBOXD_SESSION_RETAIN_S");
        }
        if (db_session_list(p->db, &list, &n) < 0)
                return;
        /* A pause left half-done by a pool manager, never one a worker is doing: that one holds
         * the session's turn. */
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].state, "pausing") == 0 && db_session_turn(p->db, list[i].id, INT64_MAX) == 1)
                        session_pause(p, list[i].id, "pause", "its pause had not finished");
}

/* At start: active sessions whose machine is gone (the host restarted, or the machine died while no
 * pool manager ran) are paused, as an idle one would be; their next operation resumes them. */
static void sessions_reconcile(Poold *p) {
        cleanup_free Session *list = NULL;
        cleanup_free int *pids = NULL;
        size_t n = 0, n_pids = 0;

        /* Turns held by workers that are gone (the service stopped with requests in flight): the
         * master removes them too, but it starts after the pool manager. */
        if (db_session_queue_pids(p->db, &pids, &n_pids) >= 0)
                for (size_t i = 0; i < n_pids; i++)
                        if (pids[i] > 0 && kill(pids[i], 0) < 0 && errno == ESRCH)
                                (void) db_session_dequeue_worker(p->db, pids[i]);
        if (db_session_list(p->db, &list, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                char path[POOL_SOCKET_MAX];
                cleanup_close int fd = -1;

                if (strcmp(list[i].state, "active") != 0)
                        continue;
                session_socket_path(list[i].id, path, sizeof(path));
                if (list[i].up && pool_connect(path, &fd) >= 0)
                        continue;
                if (db_session_claim_down(p->db, list[i].id) >= 0)
                        session_pause(p, list[i].id, "pause", "its machine was gone when the service started");
        }
}

/* Idle machines made on a runtime image that has been rebuilt since retire; busy ones once they are
 * back. New ones get the new image. */
static void retire_stale(Poold *p) {
        char id[SANDBOX_ID_MAX], socket[POOL_SOCKET_MAX], now[sizeof(p->settings)];

        machine_settings(p->config, now, sizeof(now));
        if (strcmp(now, p->settings) != 0) {
                log_info("Pool: the runtime image changed; machines on the old one retire once idle");
                memcpy(p->settings, now, sizeof(now));
        }
        while (db_pool_claim_stale(p->db, (int) getpid(), p->settings, id, sizeof(id), socket, sizeof(socket)) >= 0)
                pool_destroy(&p->broker, p->db, id, socket, POOL_RETIRE_STALE);
}

/* Retires idle machines past their TTL, and those above what is wanted once they have been idle for
 * a while: a machine that comes back from an execution is not destroyed at once for being one
 * too many, only to be started again moments later. */
static void retire_idle(Poold *p, unsigned want) {
        char id[SANDBOX_ID_MAX], socket[POOL_SOCKET_MAX];
        double now = (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC;

        while (db_pool_claim_idle(p->db, (int) getpid(), now - p->config->pool_ttl_s, (int64_t) want,
                                  now - (double) (BOOST_HOLD_USEC / USEC_PER_SEC), id, sizeof(id), socket, sizeof(socket)) >= 0)
                pool_destroy(&p->broker, p->db, id, socket, POOL_RETIRE_IDLE);
}

static void fill(Poold *p) {
        PoolCounts c;
        unsigned want;

        if (db_pool_counts(p->db, &c) < 0)
                return;
        want = wanted(p, &c);
        /* Retiring takes the database's write lock: once a second, not on every wake-up. */
        if (now_usec(CLOCK_MONOTONIC) >= p->next_retire) {
                retire_stale(p);
                retire_idle(p, want);
                sessions_housekeeping(p);
                p->next_retire = now_usec(CLOCK_MONOTONIC) + HOUSEKEEPING_MS * USEC_PER_MSEC;
        }
        if (now_usec(CLOCK_MONOTONIC) < p->backoff_until)
                return;
        /* Rows in 'starting' are the ones this process probes. Machines busy with an execution come
         * back when it ends: they count against the most the pool may hold. */
        while ((unsigned) c.ready + p->n_starting < want && (unsigned) (c.ready + c.claimed) + p->n_starting < p->config->pool_max &&
               p->n_starting < PARALLEL_STARTS) {
                if (start_one(p) < 0) {
                        p->failures++;
                        p->backoff_until = now_usec(CLOCK_MONOTONIC) + BACKOFF_MAX_USEC;
                        return;
                }
        }
}

/* Waits for a signal, a wake-up, a starting sandbox's greeting or the next housekeeping. */
static int poll_events(Poold *p) {
        struct pollfd fds[PARALLEL_STARTS + 2];
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int timeout = HOUSEKEEPING_MS, r;

        fds[0] = (struct pollfd){.fd = p->signal_fd, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = p->wake_fd, .events = POLLIN};
        for (size_t i = 0; i < p->n_starting; i++) {
                fds[i + 2] = (struct pollfd){.fd = p->starting[i].fd, .events = POLLIN};
                if (p->starting[i].deadline <= now)
                        timeout = 0;
        }
        if (p->backoff_until > now && (p->backoff_until - now) / 1000 < (uint64_t) timeout)
                timeout = (int) ((p->backoff_until - now) / 1000) + 1;

        r = poll(fds, p->n_starting + 2, timeout);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;

        if (fds[0].revents) {
                r = signal_fd_read(p->signal_fd);
                if (r < 0)
                        return r;
                if (r == SIGTERM || r == SIGINT)
                        p->stop = true;
                if (r == SIGHUP)
                        p->next_sweep = 0; /* an administrator's (or a test's) "sweep now" */
        }
        if (fds[1].revents) {
                bool sweep_now = false;

                (void) pool_wake_drain_sweep(p->wake_fd, &sweep_now);
                if (sweep_now)
                        p->next_sweep = 0; /* a worker died: it may have left something */
        }
        for (size_t i = p->n_starting; i > 0; i--) {
                if (fds[i + 1].revents)
                        probe(p, i - 1);
                else if (p->starting[i - 1].deadline <= now_usec(CLOCK_MONOTONIC))
                        start_failed(p, i - 1, "not ready in time");
        }
        return 0;
}

/* Sweeps now (sweep.h), and sets when next: soon while a removal fails, else after the slow interval. */
static void sweep(Poold *p) {
        int r = sweep_run(&p->broker, p->db);

        p->next_sweep = now_usec(CLOCK_MONOTONIC) + (r != 0 ? SWEEP_RETRY_USEC : SWEEP_USEC);
}

/* What a previous instance left: idle machines that still answer are kept, the rest destroyed. */
static void reconcile(Poold *p) {
        cleanup_free PoolRow *rows = NULL;
        size_t n = 0, kept = 0;
        int r;

        r = db_pool_list(p->db, NULL, 0, &rows, &n);
        if (r < 0) {
                (void) log_error_errno(r, "Pool: failed to read what a previous instance left: %s", db_errmsg(p->db));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const PoolRow *l = &rows[i];
                cleanup_close int fd = -1;

                if (strcmp(l->state, "claimed") == 0 && l->owner_pid > 0 && kill(l->owner_pid, 0) == 0)
                        continue; /* a live worker is using it */
                /* Kept: idle, made with the settings in force, within the most the pool may hold,
                 * and still answering. */
                if (strcmp(l->state, "ready") == 0 && strcmp(l->settings, p->settings) == 0 && kept < p->config->pool_max &&
                    pool_connect(l->socket, &fd) >= 0 && pool_wait_greeting(fd, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC) >= 0) {
                        kept++;
                        continue;
                }
                pool_destroy(&p->broker, p->db, l->machine_id, l->socket, POOL_RETIRE_PREVIOUS_INSTANCE);
        }
        if (n > 0)
                log_info("Pool: kept %zu of %zu sandboxes left by a previous instance", kept, n);
}

/* The signals, the wake-up socket and the database: what the loop waits on and works with. */
static int poold_open(Poold *p) {
        sigset_t mask;
        int r;

        p->signal_fd = signal_fd_open(false, &mask);
        if (p->signal_fd < 0)
                return log_error_errno(p->signal_fd, "Pool: failed to set up signal handling");
        /* SIGHUP: sweep now (sweep.h), e.g. after an administrator removed rows by hand. */
        (void) sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || signalfd(p->signal_fd, &mask, SFD_CLOEXEC | SFD_NONBLOCK) < 0)
                return log_error_errno(errno, "Pool: failed to set up signal handling");
        /* The unit's RuntimeDirectory= makes it; without systemd (development), this does. */
        (void) mkdir(POOL_DIR, 0700);
        r = pool_wake_listen(POOL_WAKE_SOCKET, &p->wake_fd);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to listen on %s", POOL_WAKE_SOCKET);
        r = db_open(p->config->db_path, &p->db);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to open database '%s': %s", p->config->db_path, db_errmsg(NULL));
        return 0;
}

static void poold_close(Poold *p) {
        closep(&p->broker);
        closep(&p->wake_fd);
        closep(&p->signal_fd);
        p->db = db_close(p->db);
}

static int run(Poold *p) {
        PoolCounts c;
        int r;

        /* Start failures of a previous instance (maybe of another configuration) say nothing now. */
        (void) db_pool_health_ok(p->db);
        reconcile(p);
        sessions_reconcile(p);
        sweep(p);
        if (db_pool_counts(p->db, &c) >= 0)
                p->last_waits = c.waits;
        (void) sd_notify(0, "READY=1");

        while (!p->stop) {
                if (now_usec(CLOCK_MONOTONIC) >= p->next_prune) {
                        records_prune(p);
                        p->next_prune = now_usec(CLOCK_MONOTONIC) + PRUNE_USEC;
                }
                if (now_usec(CLOCK_MONOTONIC) >= p->next_sweep)
                        sweep(p);
                fill(p);
                /* The errors met since, sqlite's and the broker's, into their totals. */
                (void) db_error_counts_flush(p->db);
                r = poll_events(p);
                if (r < 0)
                        return log_error_errno(r, "Pool: poll failed");
        }

        (void) sd_notify(0, "STOPPING=1");
        /* Sandboxes still booting are not worth keeping; ready ones stay for the next start. */
        while (p->n_starting > 0) {
                pool_destroy(&p->broker, p->db, p->starting[0].id, p->starting[0].socket, POOL_RETIRE_SHUTDOWN);
                starting_remove(p, 0);
        }
        return 0;
}

int main(void) {
        Config config;
        Poold p = {.config = &config, .broker = -1, .signal_fd = -1, .wake_fd = -1};
        int r;

        /* It reads what the workers write and makes sockets for them: it runs as their user. */
        r = daemon_start("sandboxd-poold", false, &config);
        if (r >= 0) {
                machine_settings(&config, p.settings, sizeof(p.settings));
                r = poold_open(&p);
        }
        if (r >= 0)
                r = run(&p);
        poold_close(&p);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
