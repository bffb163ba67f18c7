/* SPDX-License-Identifier: MIT */
/* sandboxd-poold, the pool manager: machines started ahead, so that an execution never waits for a
 * container to boot, and the owner of who uses which. Workers connect to POOLD_SOCKET
 * (sandboxd-poold.socket) and ask for a machine, or for a session's turn, and wait for one answer
 * (poold-proto.h); the pool manager hands machines out in arrival order the moment they are ready,
 * and the turns of each session first in, first out. It knows what is in flight from its
 * connections, in memory; sqlite keeps the records and totals. It runs as the workers' user, in a
 * unit of its own (sandboxd-poold.service): it keeps pool_target idle machines ready, more (up to
 * pool_max) while claims wait, replaces idle ones after pool_ttl_s, pauses idle sessions, and
 * cleans up what a previous instance left. When nothing happens it sleeps until its next deadline. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "db/db.h"
#include "db/mcp-db.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "db/requests.h"
#include "db/session-revoke.h"
#include "lib/alloc-util.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/error.h"
#include "lib/listen-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold.h"
#include "nspawn/pool/sweep.h"

/* How often what no row owns is swept (sweep.h), besides at start, on SIGHUP and after a worker
 * died holding a turn: a slow timer, as leftovers only come from a crash or a failed removal;
 * sooner while a removal keeps failing. */
#define SWEEP_USEC (USEC_PER_SEC * 5 * 60)
#define SWEEP_RETRY_USEC (USEC_PER_SEC * 30)
#define SWEEP_SOON_USEC (2 * USEC_PER_SEC)
/* Old records go slowly: a day's worth at most ever waits for the next prune. */
#define PRUNE_USEC (3600 * USEC_PER_SEC)
/* Workers at most at once: one connection per request in flight. */
#define CONNS_MAX 4096
/* What poll_events() always waits on: signals, the socket, revocations. */
#define FIXED_FDS 3

int conn_send(Conn *c, const char *line) {
        size_t len = strlen(line);
        ssize_t n = send(c->fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);

        /* A line is far smaller than a socket's buffer, and a worker reads its answer before it says
         * more: a short write means the worker is gone, which its connection's end tells. */
        return n == (ssize_t) len ? 0 : -EPIPE;
}

Conn *conn_by_seq(Poold *p, uint64_t seq) {
        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].seq == seq)
                        return &p->conns[i];
        return NULL;
}

static void conn_accept(Poold *p) {
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        if (p->n_conns >= CONNS_MAX || ARRAY_GROW(p->conns, p->cap_conns, p->n_conns, 16) < 0) {
                (void) log_warning_errno(ENOMEM, "Pool: too many connections, refusing one");
                (void) close(fd);
                return;
        }
        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
        p->conns[p->n_conns++] = (Conn){.fd = fd, .pid = cred.pid};
}

/* A connection's end: what it held is let go, retired when in doubt. */
static void conn_close(Poold *p, size_t i) {
        Conn *c = &p->conns[i];

        if (c->state == CONN_CLAIM_HELD)
                claim_closed(p, c);
        if (c->state == CONN_TURN_HELD)
                /* A worker that dies in the middle of a session's operation may leave something (a
                 * machine made or deleted halfway). */
                p->next_sweep = now_usec(CLOCK_MONOTONIC) + SWEEP_SOON_USEC;
        turn_done(p, c);
        c->state = CONN_IDLE;
        closep(&c->fd);
        p->conns[i] = p->conns[--p->n_conns];
}

static void conn_message(Poold *p, Conn *c, const char *line, size_t len) {
        PooldMsg m;

        if (poold_msg_parse(line, len, &m) < 0) {
                log_warning("Pool: a worker sent what is no message, ignoring it");
                return;
        }
        switch (m.op) {
        case POOLD_CLAIM:
                if (c->state == CONN_IDLE) {
                        (void) snprintf(c->language, sizeof(c->language), "%s", m.word);
                        machines_settings_check(p);
                        claim_request(p, c);
                }
                break;
        case POOLD_RELEASE:
                claim_release(p, c, &m);
                break;
        case POOLD_TURN:
                if (c->state == CONN_IDLE)
                        turn_request(p, c, &m);
                break;
        case POOLD_DONE:
                turn_done(p, c);
                break;
        case POOLD_SWEEP:
                p->next_sweep = 0; /* a worker died: it may have left something */
                break;
        case POOLD_SESSIONS:
                p->next_sessions = 0; /* a key was revoked */
                break;
        case POOLD_WATCH:
                if (c->state == CONN_IDLE) {
                        c->state = CONN_WATCHING;
                        p->counts_told[0] = 0; /* the newcomer hears the counts now */
                }
                break;
        default:
                break;
        }
}

/* Reads what came on connection i: each whole line is a message. false when it closed. */
static bool conn_read(Poold *p, size_t i) {
        Conn *c = &p->conns[i];
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
        char *nl;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
        if (n <= 0)
                return false;
        c->len += (size_t) n;
        while ((nl = memchr(c->buf, '\n', c->len))) {
                size_t line = (size_t) (nl - c->buf);

                conn_message(p, &p->conns[i], c->buf, line);
                c = &p->conns[i];
                memmove(c->buf, nl + 1, c->len - line - 1);
                c->len -= line + 1;
        }
        /* A line longer than any message: not a worker's. */
        return c->len < sizeof(c->buf);
}

/* The member's daemon learns the pool's counts as they change, so that the front's weights and the
 * cluster's registry follow without anyone asking: one line per turn of the loop at most, and
 * none while nothing changed. */
static void watchers_tell(Poold *p) {
        PoolCountsLine c = {.max = p->config->pool_max, .sessions = p->session_looks};
        char line[POOLD_LINE_MAX];
        bool any = false;
        size_t n;

        for (size_t i = 0; i < p->n_conns; i++) {
                any = any || p->conns[i].state == CONN_WATCHING;
                c.waiting += p->conns[i].state == CONN_CLAIM_WAITING;
        }
        if (!any)
                return;
        for (size_t i = 0; i < p->n_machines; i++) {
                c.ready += p->machines[i].state == MACHINE_READY;
                c.claimed += p->machines[i].state == MACHINE_CLAIMED;
                c.starting += p->machines[i].state == MACHINE_STARTING;
        }
        poold_pool_line_format(&c, line, sizeof(line) - 1);
        if (strcmp(line, p->counts_told) == 0)
                return;
        memcpy(p->counts_told, line, sizeof(line));
        /* formatted into one byte less than the buffer: the line's end fits */
        n = strlen(line);
        line[n] = '\n';
        line[n + 1] = 0;
        /* A watcher too slow to take a line is gone for this one; the next change tells it again. */
        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].state == CONN_WATCHING)
                        (void) conn_send(&p->conns[i], line);
}

/* Sweeps now (sweep.h), and sets when next: soon while a removal fails, else after the slow interval. */
static void sweep(Poold *p) {
        int r = sweep_run(&p->broker, p->db);

        p->next_sweep = now_usec(CLOCK_MONOTONIC) + (r != 0 ? SWEEP_RETRY_USEC : SWEEP_USEC);
}

/* Request records older than SANDBOXD_RECORD_RETAIN_DAYS go, in small batches so that no worker
 * waits long for the write lock. The totals are kept by triggers on status updates, which a delete
 * does not fire; the quotas look back a day at most, and the retention is a day at least. */
static void records_prune(Poold *p) {
        int64_t n = 0;
        int r = db_records_prune(p->db, p->config->record_retain_days, &n);

        /* MCP sessions unused as long, with the requests that used them. */
        if (r >= 0)
                r = db_mcp_prune(p->db, p->config->record_retain_days);

        if (r < 0)
                (void) log_warning_errno(r, "Failed to prune records older than %u days, ignoring: %s", p->config->record_retain_days, db_errmsg(p->db));
        else if (n > 0)
                log_info("Pruned %" PRId64 " records older than %u days (SANDBOXD_RECORD_RETAIN_DAYS)", n, p->config->record_retain_days);
        p->next_prune = now_usec(CLOCK_MONOTONIC) + PRUNE_USEC;
}

/* Whatever is due now: each timer is a deadline computed from the state, none a tick. */
static void timers_run(Poold *p) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (now >= p->next_prune)
                records_prune(p);
        if (now >= p->next_sweep)
                sweep(p);
        if (now >= p->next_sessions)
                sessions_housekeeping(p);
        machines_check_deadlines(p);
        machines_retire_idle(p);
        machines_fill(p);
        machines_dispatch(p);
        /* The errors met since, sqlite's and the broker's, into their totals. */
        (void) db_error_counts_flush(p->db);
}

/* Milliseconds until the soonest deadline, for poll(): -1 when there is none. */
static int timeout_ms(const Poold *p) {
        uint64_t next = machines_next_deadline(p), now = now_usec(CLOCK_MONOTONIC);

        next = p->next_prune < next ? p->next_prune : next;
        next = p->next_sweep < next ? p->next_sweep : next;
        next = p->next_sessions < next ? p->next_sessions : next;
        if (next == UINT64_MAX)
                return -1;
        if (next <= now)
                return 0;
        return (next - now) / USEC_PER_MSEC > INT32_MAX ? INT32_MAX : (int) ((next - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
}

static void on_signal(Poold *p) {
        struct signalfd_siginfo si;
        int sig = signal_fd_read_info(p->signal_fd, &si);

        if (sig == SIGTERM || sig == SIGINT)
                p->stop = true;
        if (sig != SIGHUP)
                return;
        /* systemctl reload: nothing it may change is the pool manager's, but it says which of its
         * settings wait for a restart. A SIGHUP that comes while another is pending is merged into it:
         * a reload sweeps too, so that the broker's "sweep now" is never lost to one. (A reload lost
         * to a pending "sweep now" is its command's timeout, a failed systemctl reload to retry.) */
        if (daemon_reload_asked(&si)) {
                (void) daemon_reload("sandboxd-poold", NULL, &si);
                daemon_notify_status(NULL);
        }
        p->next_sweep = 0; /* an administrator's (or a test's, or the broker's) "sweep now" */
}

/* sandboxctl revoked a key: the key's sessions are paused now. */
static void on_revoke(Poold *p) {
        char buf[4096];

        while (read(p->revoke_fd, buf, sizeof(buf)) > 0)
                ;
        p->next_sessions = 0;
}

/* The file sandboxctl touches when it revokes a key (db_revoke_stamp_path()), made if missing and
 * watched. Without it, revoked keys' sessions are paused at their idle end only. */
static int revoke_watch(Poold *p) {
        char path[PATH_MAX];
        int fd, r;

        r = db_revoke_stamp_path(p->config->db_path, path, sizeof(path));
        if (r < 0)
                return r;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        (void) close(fd);
        p->revoke_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (p->revoke_fd < 0)
                return -errno;
        if (inotify_add_watch(p->revoke_fd, path, IN_CLOSE_WRITE | IN_ATTRIB) < 0)
                return -errno;
        return 0;
}

/* Waits for a signal, a worker, a starting machine's greeting or the next deadline, and acts. */
static int poll_events(Poold *p) {
        size_t n_fds = FIXED_FDS + p->n_conns + p->n_machines, n_conns = p->n_conns;
        cleanup_free struct pollfd *fds = calloc(n_fds, sizeof(*fds));
        cleanup_free int *conn_fds = calloc(n_conns + 1, sizeof(*conn_fds));
        cleanup_free char(*ids)[MACHINE_ID_MAX] = calloc(p->n_machines + 1, MACHINE_ID_MAX);
        int r;

        if (!fds || !conn_fds || !ids)
                return -ENOMEM; /* NOLINT(clang-analyzer-unix.Malloc): fds, conn_fds and ids are cleanup_free, unseen by clang-analyzer 14 */
        fds[0] = (struct pollfd){.fd = p->signal_fd, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        fds[2] = (struct pollfd){.fd = p->revoke_fd, .events = POLLIN};
        for (size_t i = 0; i < n_conns; i++) {
                fds[FIXED_FDS + i] = (struct pollfd){.fd = p->conns[i].fd, .events = POLLIN};
                conn_fds[i] = p->conns[i].fd;
        }
        for (size_t i = 0; i < p->n_machines; i++) {
                fds[FIXED_FDS + n_conns + i] = (struct pollfd){.fd = p->machines[i].fd, .events = POLLIN};
                memcpy(ids[i], p->machines[i].id, MACHINE_ID_MAX);
        }

        r = poll(fds, n_fds, timeout_ms(p));
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        if (fds[0].revents)
                on_signal(p);
        if (fds[2].revents)
                on_revoke(p);
        /* Each fd is looked up again: acting on one may move the others in their arrays. */
        for (size_t i = 0; i < n_conns; i++) {
                if (!fds[FIXED_FDS + i].revents)
                        continue;
                for (size_t j = 0; j < p->n_conns; j++)
                        if (p->conns[j].fd == conn_fds[i]) {
                                if (!conn_read(p, j))
                                        conn_close(p, j);
                                break;
                        }
        }
        for (size_t i = 0; i < n_fds - FIXED_FDS - n_conns; i++) {
                if (fds[FIXED_FDS + n_conns + i].fd < 0 || !fds[FIXED_FDS + n_conns + i].revents)
                        continue;
                for (size_t j = 0; j < p->n_machines; j++)
                        if (strcmp(p->machines[j].id, ids[i]) == 0 && p->machines[j].state == MACHINE_STARTING) {
                                machines_probe(p, j);
                                break;
                        }
        }
        if (fds[1].revents)
                conn_accept(p);
        return 0;
}

/* The socket systemd passes (sandboxd-poold.socket, mode 0600: only the workers' user); without
 * socket activation (development), one of our own, made the same. */
static int open_listener(void) {
        return listen_unix("Pool", POOLD_SOCKET, SOCK_STREAM | SOCK_NONBLOCK, 0600, 256);
}

/* The signals, the socket and the database: what the loop waits on and works with. */
static int poold_open(Poold *p) {
        sigset_t mask;
        int r;

        /* SIGHUP: a reload, or else sweep now (sweep.h), e.g. after an administrator removed rows
         * by hand. */
        p->signal_fd = signal_fd_open(false, &mask);
        if (p->signal_fd < 0)
                return log_error_errno(p->signal_fd, "Pool: failed to set up signal handling");
        /* The unit's RuntimeDirectory= makes it; without systemd (development), this does. */
        (void) mkdir(POOL_DIR, 0700);
        p->listen_fd = open_listener();
        if (p->listen_fd < 0)
                return p->listen_fd;
        r = db_open(p->config->db_path, &p->db);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to open database '%s': %s", p->config->db_path, db_errmsg(NULL));
        r = revoke_watch(p);
        if (r < 0)
                (void) log_warning_errno(r, "Pool: failed to watch for revoked keys, ignoring: their sessions pause when idle");
        return 0;
}

/* Machines workers hold stay claimed in their rows: the next instance retires them. */
static void poold_close(Poold *p) {
        for (size_t i = 0; i < p->n_conns; i++)
                closep(&p->conns[i].fd);
        for (size_t i = 0; i < p->n_machines; i++)
                closep(&p->machines[i].fd);
        p->machines = mfree(p->machines);
        p->conns = mfree(p->conns);
        closep(&p->broker);
        closep(&p->listen_fd);
        closep(&p->revoke_fd);
        closep(&p->signal_fd);
        p->db = db_close(p->db);
}

static int run(Poold *p) {
        int r;

        /* Start failures of a previous instance (maybe of another configuration) say nothing now. */
        (void) db_pool_health_ok(p->db);
        machines_settings_check(p);
        machines_reconcile(p);
        sessions_reconcile(p);
        sweep(p);
        log_info("Pool: at most %u machines, %u claims waiting at most; beyond %u executions at once, more start while the CPUs idle",
                 p->config->pool_max, p->config->queue_max, p->cpu.cpus);
        (void) sd_notify(0, "READY=1");
        daemon_notify_status(NULL);

        while (!p->stop) {
                timers_run(p);
                r = poll_events(p);
                if (r < 0)
                        return log_error_errno(r, "Pool: poll failed");
                watchers_tell(p);
        }

        (void) sd_notify(0, "STOPPING=1");
        machines_stop(p);
        return 0;
}

int main(int argc, char *argv[]) {
        Config config;
        Poold p = {.config = &config, .broker = -1, .signal_fd = -1, .listen_fd = -1, .revoke_fd = -1};
        int r;

        r = daemon_reload_main(argc, argv);
        if (r >= 0)
                return r;

        /* It reads what the workers write and makes sockets for them: it runs as their user. */
        r = daemon_start("sandboxd-poold", false, &config);
        cpu_gate_init(&p.cpu, (unsigned) sysconf(_SC_NPROCESSORS_ONLN));
        if (r >= 0)
                r = poold_open(&p);
        if (r >= 0)
                r = run(&p);
        poold_close(&p);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
