/* SPDX-License-Identifier: MIT */
/* sandboxd-poold, the pool manager: machines started ahead, so that an execution never waits for a
 * container to boot, and the owner of who uses which. Workers connect to POOLD_SOCKET
 * (sandboxd-poold.socket) and ask for a machine, or for a session's turn, and wait for one answer
 * (poold-proto.h); the pool manager hands machines out in arrival order the moment they are ready,
 * and the turns of each session first in, first out. It knows what is in flight from its
 * connections, in memory; sqlite keeps the records and totals. It runs as the workers' user, in a
 * unit of its own (sandboxd-poold.service): it keeps pool_target idle machines ready, more (up to
 * pool_max) while claims wait, replaces idle ones after pool_ttl_s, pauses idle sessions, and
 * cleans up what a previous instance left. It runs on sd-event and never waits inside its loop: each
 * broker request is answered through a callback (broker-async.h), so that a session's pause or a
 * machine's start holds up no claim. When nothing happens it sleeps until its next deadline. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

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
#include "lib/time-util.h"
#include "nspawn/broker/broker-async.h"
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
#define PRUNE_BUSY_USEC (10 * USEC_PER_SEC)
/* Workers at most at once: one connection per request in flight. */
#define CONNS_MAX 4096
/* Broker requests in flight at once, each on a connection of its own: well below the connections
 * the broker serves at once (CLIENTS_MAX in broker.c), which the workers share. */
#define BROKER_INFLIGHT_MAX 32
/* Of them, the slow ones (sessions' stops and deletes, the sweep's lists) at most: a pause storm or
 * a sweep of many leftovers leaves the rest to the starts and kills, whose deadlines are short. */
#define BROKER_SLOW_INFLIGHT_MAX 16
/* Out of descriptors, the listener is off this long: it is level-triggered, and would otherwise wake
 * the loop again at once for a connection no accept can take. */
#define LISTEN_RETRY_USEC (100 * USEC_PER_MSEC)
/* How long the exit waits for the kills of machines still starting. */
#define STOP_DRAIN_USEC (10 * USEC_PER_SEC)

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

static int on_conn(sd_event_source *s, int fd, uint32_t revents, void *userdata);

int poold_write(Poold *p, const PooldWrite *w) {
        return poold_writes_do(&p->writes, p->db, w, now_usec(CLOCK_MONOTONIC));
}

void poold_session_event(Poold *p, const char *id, const char *event, const char *detail) {
        PooldWrite w = {.op = POOLD_WRITE_SESSION_EVENT};
        int r;

        (void) snprintf(w.id, sizeof(w.id), "%s", id);
        (void) snprintf(w.text, sizeof(w.text), "%s", event);
        (void) snprintf(w.detail, sizeof(w.detail), "%s", detail);
        r = poold_write(p, &w);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record event '%s' of session '%s': %s", event, id, db_errmsg(p->db));
        log_session_event(event, id, "", detail);
}

void poold_sweep_soon(Poold *p) {
        uint64_t soon = now_usec(CLOCK_MONOTONIC) + SWEEP_SOON_USEC;

        /* A sweep under way listed the units before this: the next starts as it ends (0 is kept). */
        if (p->sweeping)
                p->next_sweep = 0;
        else if (p->next_sweep > soon)
                p->next_sweep = soon;
}

static int on_listener(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Poold *p = userdata;
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        cleanup_close int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        Conn c = {.fd = -1};
        int r;

        (void) revents;
        if (cfd < 0 && (errno == EMFILE || errno == ENFILE)) {
                (void) log_warning_errno(errno, "Pool: failed to take a worker's connection, waiting: out of descriptors");
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                p->listen_retry_at = now_usec(CLOCK_MONOTONIC) + LISTEN_RETRY_USEC;
                return 0;
        }
        if (cfd < 0)
                return 0;
        r = p->n_conns >= CONNS_MAX ? -EUSERS : ARRAY_GROW(p->conns, p->cap_conns, p->n_conns, 16);
        if (r >= 0)
                r = sd_event_add_io(p->event, &c.source, cfd, EPOLLIN, on_conn, p);
        if (r < 0) {
                (void) log_warning_errno(r, "Pool: failed to take a worker's connection, refusing it");
                return 0;
        }
        (void) getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
        c.fd = TAKE_FD(cfd);
        c.pid = cred.pid;
        p->conns[p->n_conns++] = c;
        return 0;
}

/* A connection's end: what it held is let go, retired when in doubt. */
static void conn_close(Poold *p, size_t i) {
        Conn *c = &p->conns[i];

        if (c->state != CONN_IDLE && c->state != CONN_WATCHING)
                log_debug("Pool: worker %d went while its connection was %s", (int) c->pid, conn_state_to_string(c->state));
        if (c->state == CONN_CLAIM_HELD)
                claim_closed(p, c);
        if (c->state == CONN_TURN_HELD)
                /* A worker that dies in the middle of a session's operation may leave something (a
                 * machine made or deleted halfway). */
                poold_sweep_soon(p);
        turn_done(p, c);
        c->state = CONN_IDLE;
        c->source = sd_event_source_disable_unref(c->source);
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

/* A sweep's end: sooner again while a removal fails, else after the slow interval. */
static void on_swept(int failed, void *userdata) {
        Poold *p = userdata;

        p->sweeping = false;
        /* A "sweep now" that came meanwhile is kept: what it was about may have come after the lists. */
        if (p->next_sweep != 0)
                p->next_sweep = now_usec(CLOCK_MONOTONIC) + (failed != 0 ? SWEEP_RETRY_USEC : SWEEP_USEC);
}

/* Sweeps now (sweep.h): its broker requests answered on the loop, one sweep at a time. */
static void sweep(Poold *p) {
        int r;

        r = sweep_start(p->broker, p->db, on_swept, p);
        if (r < 0) {
                p->next_sweep = now_usec(CLOCK_MONOTONIC) + SWEEP_RETRY_USEC;
                return;
        }
        p->sweeping = true;
        p->next_sweep = UINT64_MAX; /* set when it ends */
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

        if (r < 0 && r != -EBUSY)
                (void) log_warning_errno(r, "Failed to prune records older than %u days, ignoring: %s", p->config->record_retain_days, db_errmsg(p->db));
        else if (n > 0)
                log_info("Pruned %" PRId64 " records older than %u days (SANDBOXD_RECORD_RETAIN_DAYS)", n, p->config->record_retain_days);
        /* A batch that met another writer's lock goes on soon, not in an hour. */
        p->next_prune = now_usec(CLOCK_MONOTONIC) + (r == -EBUSY ? PRUNE_BUSY_USEC : PRUNE_USEC);
}

/* Whatever is due now: each timer is a deadline computed from the state, none a tick. */
static void timers_run(Poold *p) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (now >= p->next_prune)
                records_prune(p);
        if (now >= p->next_sweep && !p->sweeping)
                sweep(p);
        if (now >= p->next_sessions)
                sessions_housekeeping(p);
        if (now >= p->writes.next_at) {
                size_t waited = p->writes.n;
                unsigned failed = poold_writes_flush(&p->writes, p->db, now);

                if (failed > 0)
                        (void) log_warning_errno(EIO, "Failed to write %u records that had waited for the database's lock: %s", failed,
                                                 db_errmsg(p->db));
                if (p->writes.n < waited)
                        sessions_writes_done(p);
        }
        if (now >= p->claim_retry_at)
                p->claim_retry_at = UINT64_MAX;
        if (now >= p->listen_retry_at) {
                (void) sd_event_source_set_enabled(p->listen_source, SD_EVENT_ON);
                p->listen_retry_at = UINT64_MAX;
        }
        machines_check_deadlines(p);
        machines_retire_idle(p);
        machines_fill(p);
        machines_dispatch(p);
        /* The errors met since, sqlite's and the broker's, into their totals. */
        (void) db_error_counts_flush(p->db);
}

/* The soonest deadline (CLOCK_MONOTONIC µs), UINT64_MAX for none. */
static uint64_t next_deadline(const Poold *p) {
        uint64_t next = machines_next_deadline(p);

        next = p->next_prune < next ? p->next_prune : next;
        next = p->writes.next_at < next ? p->writes.next_at : next;
        next = p->claim_retry_at < next ? p->claim_retry_at : next;
        next = p->listen_retry_at < next ? p->listen_retry_at : next;
        if (!p->sweeping) /* its end sets the next */
                next = p->next_sweep < next ? p->next_sweep : next;
        return p->next_sessions < next ? p->next_sessions : next;
}

/* After every event: what is due is done, the watchers told, and the one timer armed for the
 * soonest deadline, or off when there is none. */
static void poold_step(Poold *p) {
        uint64_t next;

        if (p->stop)
                return;
        timers_run(p);
        watchers_tell(p);
        next = next_deadline(p);
        if (next == UINT64_MAX) {
                (void) sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
                return;
        }
        (void) sd_event_source_set_time(p->timer, next > 0 ? next : 1);
        (void) sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
}

/* Every event's dispatch is followed by the step (an sd-event post source runs only after others
 * did: idle, nothing runs). */
static int on_post(sd_event_source *s, void *userdata) {
        (void) s;
        poold_step(userdata);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        (void) userdata;
        return 0; /* the step that follows does what is due */
}

static int on_conn(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Poold *p = userdata;

        (void) s;
        (void) revents;
        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].fd == fd) {
                        if (!conn_read(p, i))
                                conn_close(p, i);
                        break;
                }
        return 0;
}

static int on_stop(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Poold *p = userdata;

        (void) s;
        (void) si;
        p->stop = true;
        return 0;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Poold *p = userdata;

        (void) s;
        /* systemctl reload: nothing it may change is the pool manager's, but it says which of its
         * settings wait for a restart. A SIGHUP that comes while another is pending is merged into it:
         * a reload sweeps too, so that the broker's "sweep now" is never lost to one. (A reload lost
         * to a pending "sweep now" is its command's timeout, a failed systemctl reload to retry.) */
        if (daemon_reload_asked(si)) {
                (void) daemon_reload("sandboxd-poold", NULL, si);
                daemon_notify_status(NULL);
        }
        p->next_sweep = 0; /* an administrator's (or a test's, or the broker's) "sweep now" */
        return 0;
}

/* sandboxctl revoked a key: the key's sessions are paused now. */
static int on_revoke(sd_event_source *s, const struct inotify_event *event, void *userdata) {
        Poold *p = userdata;

        (void) s;
        (void) event;
        p->next_sessions = 0;
        return 0;
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
        return sd_event_add_inotify(p->event, NULL, path, IN_CLOSE_WRITE | IN_ATTRIB, on_revoke, p);
}

/* The socket systemd passes (sandboxd-poold.socket, mode 0600: only the workers' user); without
 * socket activation (development), one of our own, made the same. */
static int open_listener(void) {
        return listen_unix("Pool", POOLD_SOCKET, SOCK_STREAM | SOCK_NONBLOCK, 0600, 256);
}

/* SIGTERM and SIGINT end the loop; SIGHUP is a reload, or else sweep now (sweep.h), e.g. after an
 * administrator removed rows by hand. */
static int loop_open(Poold *p) {
        sigset_t mask;
        int r;

        if (sigemptyset(&mask) < 0 || sigaddset(&mask, SIGTERM) < 0 || sigaddset(&mask, SIGINT) < 0 || sigaddset(&mask, SIGHUP) < 0 ||
            sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Pool: failed to block signals");
        (void) signal(SIGPIPE, SIG_IGN);
        r = sd_event_new(&p->event);
        if (r >= 0)
                r = sd_event_add_signal(p->event, NULL, SIGTERM, on_stop, p);
        if (r >= 0)
                r = sd_event_add_signal(p->event, NULL, SIGINT, on_stop, p);
        if (r >= 0)
                r = sd_event_add_signal(p->event, NULL, SIGHUP, on_reload, p);
        if (r >= 0)
                r = sd_event_add_post(p->event, NULL, on_post, p);
        if (r >= 0)
                r = sd_event_add_time(p->event, &p->timer, CLOCK_MONOTONIC, UINT64_MAX, USEC_PER_MSEC, on_timer, p);
        if (r >= 0)
                r = sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
        if (r >= 0)
                r = broker_async_new(p->event, BROKER_INFLIGHT_MAX, BROKER_SLOW_INFLIGHT_MAX, &p->broker);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to set up its event loop");
        return 0;
}

/* The loop, the socket and the database: what the pool manager waits on and works with. */
static int poold_open(Poold *p) {
        int r = loop_open(p);

        if (r < 0)
                return r;
        /* The unit's RuntimeDirectory= makes it; without systemd (development), this does. */
        (void) mkdir(POOL_DIR, 0700);
        p->listen_fd = open_listener();
        if (p->listen_fd < 0)
                return p->listen_fd;
        r = sd_event_add_io(p->event, &p->listen_source, p->listen_fd, EPOLLIN, on_listener, p);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to watch its socket");
        r = db_open(p->config->db_path, &p->db);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to open database '%s': %s", p->config->db_path, db_errmsg(NULL));
        /* Never waits long on a worker's write inside the loop: a write that meets the lock is done
         * again later (poold-writes.h). */
        r = db_busy_timeout(p->db, POOLD_BUSY_TIMEOUT_MS);
        if (r < 0)
                return log_error_errno(r, "Pool: failed to set the database's busy timeout");
        r = revoke_watch(p);
        if (r < 0)
                (void) log_warning_errno(r, "Pool: failed to watch for revoked keys, ignoring: their sessions pause when idle");
        return 0;
}

/* Machines workers hold stay claimed in their rows: the next instance retires them. */
static void poold_close(Poold *p) {
        for (size_t i = 0; i < p->n_conns; i++) {
                p->conns[i].source = sd_event_source_disable_unref(p->conns[i].source);
                closep(&p->conns[i].fd);
        }
        for (size_t i = 0; i < p->n_machines; i++) {
                p->machines[i].source = sd_event_source_disable_unref(p->machines[i].source);
                closep(&p->machines[i].fd);
        }
        p->machines = mfree(p->machines);
        p->conns = mfree(p->conns);
        if (p->writes.n > 0 && p->db)
                (void) log_warning_errno(EBUSY, "Pool: %zu records still waited for the database's lock at exit", p->writes.n);
        poold_writes_done(&p->writes);
        sessions_pauses_free(p);
        p->broker = broker_async_free(p->broker);
        p->timer = sd_event_source_disable_unref(p->timer);
        p->listen_source = sd_event_source_disable_unref(p->listen_source);
        p->event = sd_event_unref(p->event);
        closep(&p->listen_fd);
        p->db = db_close(p->db);
}

/* The kills machines_stop() asked for, answered before the exit (bounded: the broker may be gone);
 * no worker is served meanwhile. */
static void stop_drain(Poold *p) {
        uint64_t until = now_usec(CLOCK_MONOTONIC) + STOP_DRAIN_USEC;

        (void) sd_event_source_set_enabled(p->listen_source, SD_EVENT_OFF);
        for (size_t i = 0; i < p->n_conns; i++)
                (void) sd_event_source_set_enabled(p->conns[i].source, SD_EVENT_OFF);
        machines_stop(p);
        while (broker_async_pending(p->broker) > 0) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                if (now >= until || sd_event_run(p->event, until - now) < 0)
                        break;
        }
        /* The records that waited for the lock: nobody is served any more, so they may wait for it. */
        (void) db_busy_timeout(p->db, 5000);
        p->writes.next_at = 0;
        (void) poold_writes_flush(&p->writes, p->db, now_usec(CLOCK_MONOTONIC));
}

static int run(Poold *p) {
        int r;

        /* Start failures of a previous instance (maybe of another configuration) say nothing now. */
        (void) poold_write(p, &(PooldWrite){.op = POOLD_WRITE_HEALTH_OK});
        machines_settings_check(p);
        machines_reconcile(p);
        sessions_reconcile(p);
        sweep(p);
        log_info("Pool: at most %u machines, %u claims waiting at most; beyond %u executions at once, more start while the CPUs idle",
                 p->config->pool_max, p->config->queue_max, p->cpu.cpus);
        (void) sd_notify(0, "READY=1");
        daemon_notify_status(NULL);

        poold_step(p);
        while (!p->stop) {
                r = sd_event_run(p->event, UINT64_MAX);
                if (r < 0)
                        return log_error_errno(r, "Pool: its event loop failed");
        }

        (void) sd_notify(0, "STOPPING=1");
        stop_drain(p);
        return 0;
}

int main(int argc, char *argv[]) {
        Config config;
        Poold p = {.config = &config, .listen_fd = -1, .writes = POOLD_WRITES_INIT, .claim_retry_at = UINT64_MAX, .listen_retry_at = UINT64_MAX};
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
