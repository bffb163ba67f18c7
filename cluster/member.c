/* SPDX-License-Identifier: MIT */
/* sandboxd-member: a host's part in a cluster (README, "Several hosts"). With SANDBOXD_ETCD unset it
 * says so and ends: a single host needs none of this.
 *
 * It keeps the member's record (cluster/member-record.h) in etcd under a lease, which etcd ends a
 * few seconds after the member stops renewing it (its host died), and answers the front's HAProxy
 * agent check with the member's weight: the share of its machines still free, or "drain". The
 * pool manager tells it the counts as they change ("watch", poold-proto.h); nothing here asks on a
 * timer but the lease's renewal.
 *
 * Three threads: the loop (sd-event: signals, the pool manager, the agent check, the drain file and
 * the mirror's retries), which never waits on etcd, so that a slow etcd never makes HAProxy's
 * check time out; the registrar, which does every etcd write, the record's at most every
 * PUT_GAP_USEC; and the mirror's (cluster/mirror.c, cluster/follow.h), which follows the cluster's
 * members and keys into this member's sqlite for the workers. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "cluster/etcd.h"
#include "cluster/member-record.h"
#include "cluster/mirror.h"
#include "cluster/session-record.h"
#include "db/cluster-db.h"
#include "db/db.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/backoff.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "lib/socket-util.h"
#include "lib/time-util.h"
#include "lib/usage-record.h"
#include "nspawn/pool/poold-proto.h"

/* etcd ends the record this long after the member's last renewal: the front's own health check
 * takes a dead member out within two seconds; the lease ends what the check cannot see (a member
 * gone for good leaves the registry, its sessions' map entries with it). */
#define LEASE_TTL_S 5U
#define KEEPALIVE_USEC (LEASE_TTL_S * USEC_PER_SEC / 3)
/* Writes of the record at most this often: under load the counts change at every request, and one
 * etcd write per request would make etcd the cluster's limit. */
#define PUT_GAP_USEC (200 * USEC_PER_MSEC)
#define RETRY_USEC (1 * USEC_PER_SEC)
/* A registration that failed is tried again at a jittered backoff, never longer apart than this:
 * well inside the lease's time, so that a member is back in the registry soon after etcd is. */
#define REGISTER_RETRY_BASE_USEC (250 * USEC_PER_MSEC)
#define REGISTER_RETRY_MAX_USEC (2 * USEC_PER_SEC)
/* member_drain_path()'s file: present, the member drains; the member sees it come and go at once,
 * through inotify. It survives a restart, as an operator expects of a host taken out for
 * maintenance, until sandboxctl undrain. */

typedef struct Member {
        const Config *config;
        sd_event *event;
        int signal_fd, agent_fd, poold_fd, drain_fd;
        sd_event_source *poold_source, *poold_retry;
        char drain_path[4096];
        size_t drain_dir_len;
        char buf[POOLD_LINE_MAX];
        size_t len;

        pthread_t registrar;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        /* Under lock: */
        bool stop, dirty, known, draining;
        bool sessions_dirty; /* the pool manager looked at the sessions since they were published */
        PoolCountsLine counts;
} Member;

static bool drain_file_exists(const Member *m) {
        return access(m->drain_path, F_OK) == 0;
}

/* What the agent check answers (HAProxy's agent protocol: words, then a line's end). The weight is
 * the share of the member's machines neither held nor waited for, so that leastconn sends more to
 * the member with room; never 0%, which HAProxy takes for a drain. */
static void agent_answer(Member *m, char *buf, size_t size) {
        unsigned busy, free_share;

        (void) pthread_mutex_lock(&m->lock);
        if (!m->known)
                (void) snprintf(buf, size, "down #the pool manager does not answer\n");
        else if (m->draining)
                (void) snprintf(buf, size, "drain\n");
        else {
                busy = m->counts.claimed + m->counts.waiting;
                free_share = m->counts.max > busy ? 100U * (m->counts.max - busy) / m->counts.max : 0;
                (void) snprintf(buf, size, "up ready %u%%\n", free_share > 0 ? free_share : 1);
        }
        (void) pthread_mutex_unlock(&m->lock);
}

static void agent_accept(Member *m) {
        char answer[128];
        int fd = accept4(m->agent_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        agent_answer(m, answer, sizeof(answer));
        /* A line into an empty socket buffer: it fits, or the checker is gone. */
        (void) send(fd, answer, strlen(answer), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void) close(fd);
}

/* The agent check's socket: the member's host, the port after nginx's (member-record.h). Resolved
 * once, at start, before the loop runs. */
static int agent_listen(const Config *config) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
        char agent[MEMBER_ADDRESS_MAX], port[8];
        struct addrinfo *ai = NULL;
        SocketAddress a;
        int fd, r;

        if (member_agent_address(config->member_address, agent) < 0 || socket_address_parse(agent, &a) < 0)
                return log_error_errno(EINVAL, "Member: SANDBOXD_MEMBER_ADDRESS '%s' gives no agent port", config->member_address);
        (void) snprintf(port, sizeof(port), "%u", a.port);
        r = getaddrinfo(a.host, port, &hints, &ai);
        if (r != 0)
                return log_error_errno(EADDRNOTAVAIL, "Member: cannot resolve '%s': %s", a.host, gai_strerror(r));
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int)) < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
            listen(fd, 64) < 0) {
                r = negative_errno();
                if (fd >= 0)
                        (void) close(fd);
                freeaddrinfo(ai);
                return log_error_errno(r, "Member: cannot listen for the agent check on %s", agent);
        }
        freeaddrinfo(ai);
        return fd;
}

static int on_poold(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* The next try at the pool manager in RETRY_USEC: a one-shot timer, off while connected. */
static void poold_retry_later(Member *m) {
        if (sd_event_source_set_time_relative(m->poold_retry, RETRY_USEC) < 0 ||
            sd_event_source_set_enabled(m->poold_retry, SD_EVENT_ONESHOT) < 0)
                (void) log_error_errno(ENOMEM, "Member: cannot set the pool manager's retry timer; the front's check says down");
}

/* The pool manager's socket (socket-activated, so connecting starts it), and "watch" on it. */
static void poold_connect(Member *m) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = POOLD_SOCKET};
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        m->len = 0;
        /* A local socket: the connect and the first line never wait on the pool manager's loop. */
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || send(fd, "watch\n", 6, MSG_NOSIGNAL | MSG_DONTWAIT) != 6) {
                (void) log_warning_errno(errno, "Member: cannot reach the pool manager, trying again in a second");
                return poold_retry_later(m);
        }
        if (sd_event_add_io(m->event, &m->poold_source, fd, EPOLLIN, on_poold, m) < 0) {
                (void) log_warning_errno(ENOMEM, "Member: cannot watch the pool manager's socket, trying again in a second");
                return poold_retry_later(m);
        }
        m->poold_fd = TAKE_FD(fd);
}

static void poold_lost(Member *m) {
        m->poold_source = sd_event_source_disable_unref(m->poold_source);
        closep(&m->poold_fd);
        (void) pthread_mutex_lock(&m->lock);
        m->known = false;
        (void) pthread_mutex_unlock(&m->lock);
        log_warning("Member: the pool manager went away; the front's check says down until it is back");
        poold_retry_later(m);
}

static void poold_read(Member *m) {
        ssize_t n = recv(m->poold_fd, m->buf + m->len, sizeof(m->buf) - m->len, MSG_DONTWAIT);
        char *nl;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                poold_lost(m);
                return;
        }
        m->len += (size_t) n;
        while ((nl = memchr(m->buf, '\n', m->len))) {
                PoolCountsLine c;

                *nl = 0;
                if (poold_pool_line_parse(m->buf, &c) >= 0) {
                        (void) pthread_mutex_lock(&m->lock);
                        if (!m->known || c.sessions != m->counts.sessions)
                                m->sessions_dirty = true;
                        m->counts = c;
                        m->known = m->dirty = true;
                        (void) pthread_cond_signal(&m->wake);
                        (void) pthread_mutex_unlock(&m->lock);
                }
                m->len -= (size_t) (nl + 1 - m->buf);
                memmove(m->buf, nl + 1, m->len);
        }
        if (m->len == sizeof(m->buf))
                poold_lost(m);
}

/* The record as it is now: the counts from sqlite (those GET /v1/pool shows), the waiting claims and
 * the most from the pool manager. NULL when sqlite cannot be read. */
static char *record_now(Member *m, sqlite3 *db) {
        MemberRecord rec = {.target = m->config->pool_target};
        PoolCounts pc;

        /* Cleared before the counts are read: a change told meanwhile is written next time. */
        (void) pthread_mutex_lock(&m->lock);
        m->dirty = false;
        (void) pthread_mutex_unlock(&m->lock);
        (void) snprintf(rec.name, sizeof(rec.name), "%s", m->config->member);
        (void) snprintf(rec.address, sizeof(rec.address), "%s", m->config->member_address);
        (void) member_agent_address(m->config->member_address, rec.agent);
        if (db_pool_counts(db, &pc) < 0 || db_session_counts(db, &rec.sessions_active, &rec.sessions_paused) < 0)
                return NULL;
        rec.warm = pc.ready;
        rec.in_flight = pc.claimed;
        rec.starting = pc.starting;
        rec.created_total = pc.created_total;
        (void) pthread_mutex_lock(&m->lock);
        rec.waiting = m->counts.waiting;
        rec.max = m->counts.max;
        rec.draining = m->draining;
        (void) pthread_mutex_unlock(&m->lock);
        return member_record_format(&rec);
}

/* The member's sessions as the others list them (cluster/session-record.h); NULL when sqlite cannot
 * be read. */
static char *sessions_now(Member *m, sqlite3 *db) {
        cleanup_free Session *list = NULL;
        size_t n = 0;

        (void) pthread_mutex_lock(&m->lock);
        m->sessions_dirty = false;
        (void) pthread_mutex_unlock(&m->lock);
        if (db_session_list(db, &list, &n) < 0)
                return NULL;
        return session_record_format(list, n);
}

/* The member's use of each key as the others add it to theirs (lib/usage-record.h); NULL when
 * sqlite cannot be read. */
static char *usage_now(sqlite3 *db) {
        cleanup_free UsageRow *rows = NULL;
        size_t n = 0;

        if (db_usage_local(db, &rows, &n) < 0)
                return NULL;
        return usage_record_format(rows, n);
}

typedef struct Registration {
        Etcd *etcd;
        sqlite3 *db;
        char key[sizeof(MEMBER_PREFIX) + MEMBER_NAME_MAX];
        char sessions_key[sizeof(SESSIONS_PREFIX) + MEMBER_NAME_MAX];
        char usage_key[sizeof(USAGE_PREFIX) + MEMBER_NAME_MAX];
        char *usage_told; /* the usage record last written: none again while it is the same */
        int64_t lease;
        uint64_t next_keepalive, next_put, retry_at;
        bool failing; /* logged once per spell of failures */
        Backoff backoff;
} Registration;

static void registration_failed(Registration *g, const char *what, int r, const Error *err) {
        if (!g->failing)
                (void) log_warning_errno(r, "Member: %s failed, trying again within %u s: %s", what,
                                         (unsigned) (REGISTER_RETRY_MAX_USEC / USEC_PER_SEC), error_message(err, r));
        g->failing = true;
        g->retry_at = now_usec(CLOCK_MONOTONIC) + backoff_next(&g->backoff, backoff_random());
}

/* One step of the registrar, lock not held: a lease when there is none, the renewal when due, the
 * record and the sessions when they changed (or the lease is new). */
/* The keys' use written if it changed since it last was: with the record, and at each renewal,
 * for what grows without the pool's counts moving (a session's CPU time, counted between runs). */
static int usage_put(Member *m, Registration *g, Error *err) {
        cleanup_free char *usage = usage_now(g->db);
        int r;

        if (!usage)
                return -EIO;
        if (g->usage_told && strcmp(usage, g->usage_told) == 0)
                return 0;
        r = etcd_put(g->etcd, g->usage_key, usage, g->lease, err);
        if (r < 0) {
                (void) pthread_mutex_lock(&m->lock);
                m->dirty = true;
                (void) pthread_mutex_unlock(&m->lock);
                return r;
        }
        free(g->usage_told);
        g->usage_told = TAKE_PTR(usage);
        return 0;
}

static void registrar_step(Member *m, Registration *g, bool put, bool put_sessions) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool renewed = false;
        Error err = {};
        int r;

        if (g->lease == 0) {
                /* A new lease: what was written under the old one is gone. */
                g->usage_told = mfree(g->usage_told);
                r = etcd_lease_grant(g->etcd, LEASE_TTL_S, &g->lease, &err);
                if (r < 0)
                        return registration_failed(g, "a lease from etcd", r, &err);
                g->next_keepalive = now + KEEPALIVE_USEC;
                put = put_sessions = true;
        } else if (now >= g->next_keepalive) {
                int64_t ttl = 0;

                r = etcd_lease_keepalive(g->etcd, g->lease, &ttl, &err);
                if (r < 0)
                        return registration_failed(g, "renewing the lease", r, &err);
                if (ttl <= 0) {
                        /* It ended while we could not renew it: the record went with it. */
                        log_warning("Member: etcd ended the lease; registering again");
                        g->lease = 0;
                        return registrar_step(m, g, true, true);
                }
                g->next_keepalive = now + KEEPALIVE_USEC;
                renewed = true;
        }
        if (put || renewed) {
                r = usage_put(m, g, &err);
                if (r < 0)
                        return registration_failed(g, "writing the keys' use", r, &err);
        }
        if (put) {
                cleanup_free char *record = record_now(m, g->db);

                if (!record)
                        return registration_failed(g, "reading the pool's counts", -EIO, NULL);
                r = etcd_put(g->etcd, g->key, record, g->lease, &err);
                if (r < 0) {
                        (void) pthread_mutex_lock(&m->lock);
                        m->dirty = true;
                        (void) pthread_mutex_unlock(&m->lock);
                        return registration_failed(g, "writing the member's record", r, &err);
                }
                g->next_put = now + PUT_GAP_USEC;
        }
        if (put_sessions) {
                cleanup_free char *sessions = sessions_now(m, g->db);

                if (!sessions)
                        return registration_failed(g, "reading the sessions", -EIO, NULL);
                r = etcd_put(g->etcd, g->sessions_key, sessions, g->lease, &err);
                if (r < 0) {
                        (void) pthread_mutex_lock(&m->lock);
                        m->sessions_dirty = true;
                        (void) pthread_mutex_unlock(&m->lock);
                        return registration_failed(g, "writing the member's sessions", r, &err);
                }
                g->next_put = now + PUT_GAP_USEC;
        }
        if (g->failing)
                log_info("Member: registered in etcd again");
        g->failing = false;
        g->retry_at = 0;
        backoff_reset(&g->backoff);
}

static void *registrar_run(void *userdata) {
        Member *m = userdata;
        Registration g = {.backoff = {.base_usec = REGISTER_RETRY_BASE_USEC, .cap_usec = REGISTER_RETRY_MAX_USEC}};
        Error err = {};
        int r;

        (void) snprintf(g.key, sizeof(g.key), MEMBER_PREFIX "%s", m->config->member);
        (void) snprintf(g.sessions_key, sizeof(g.sessions_key), SESSIONS_PREFIX "%s", m->config->member);
        (void) snprintf(g.usage_key, sizeof(g.usage_key), USAGE_PREFIX "%s", m->config->member);
        r = etcd_new(m->config->etcd, &g.etcd);
        if (r >= 0)
                r = db_open(m->config->db_path, &g.db);
        if (r < 0) {
                (void) log_error_errno(r, "Member: the registrar cannot start");
                (void) kill(getpid(), SIGTERM);
                return NULL;
        }
        (void) pthread_mutex_lock(&m->lock);
        while (!m->stop) {
                uint64_t now = now_usec(CLOCK_MONOTONIC), until;
                bool put = m->dirty && m->known && now >= g.next_put, put_sessions = m->sessions_dirty && m->known && now >= g.next_put;

                if (g.retry_at > 0 ? now >= g.retry_at : (put || put_sessions || g.lease == 0 || now >= g.next_keepalive)) {
                        (void) pthread_mutex_unlock(&m->lock);
                        registrar_step(m, &g, put || g.retry_at > 0, put_sessions || g.retry_at > 0);
                        (void) pthread_mutex_lock(&m->lock);
                        continue;
                }
                until = g.retry_at > 0 ? g.retry_at : g.next_keepalive;
                if ((m->dirty || m->sessions_dirty) && m->known && g.retry_at == 0 && g.next_put < until)
                        until = g.next_put;
                (void) pthread_cond_timedwait(&m->wake, &m->lock, &(struct timespec){.tv_sec = (time_t) (until / USEC_PER_SEC), .tv_nsec = (long) (until % USEC_PER_SEC) * 1000});
        }
        (void) pthread_mutex_unlock(&m->lock);
        /* Leaving on purpose: the record goes at once, not when the lease would have ended. */
        if (g.lease != 0 && etcd_lease_revoke(g.etcd, g.lease, &err) < 0)
                (void) log_warning_errno(EIO, "Member: could not end the lease, its record goes within %u s: %s", LEASE_TTL_S, err.message);
        g.db = db_close(g.db);
        g.etcd = etcd_free(g.etcd);
        free(g.usage_told);
        return NULL;
}

static void drain_reread(Member *m) {
        bool draining = drain_file_exists(m);

        (void) pthread_mutex_lock(&m->lock);
        if (draining != m->draining)
                log_info("Member: %s", draining ? "draining: the front sends no new work" : "ready: the front sends new work again");
        m->draining = draining;
        m->dirty = true;
        (void) pthread_cond_signal(&m->wake);
        (void) pthread_mutex_unlock(&m->lock);
        daemon_notify_status(draining ? "draining" : "ready");
}

/* The drain file's comings and goings in its directory; any event there looks at it again. */
static int drain_watch(Member *m) {
        int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        char dir[sizeof(m->drain_path)];

        if (fd < 0)
                return -errno;
        (void) snprintf(dir, sizeof(dir), "%.*s", (int) m->drain_dir_len, m->drain_path);
        if (inotify_add_watch(fd, dir, IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR) < 0) {
                int r = -errno;

                (void) close(fd);
                return r;
        }
        return fd;
}

static void drain_event(Member *m) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool ours = false;
        ssize_t n;

        while ((n = read(m->drain_fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) (void *) p;

                        ours = ours || (ev->len > 0 && strcmp(ev->name, MEMBER_DRAIN_NAME) == 0);
                        p += sizeof(*ev) + ev->len;
                }
        if (ours)
                drain_reread(m);
}

static int on_poold(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s;
        (void) fd;
        (void) revents;
        poold_read(userdata);
        return 0;
}

static int on_poold_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        poold_connect(userdata);
        return 0;
}

static int on_agent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s;
        (void) fd;
        (void) revents;
        agent_accept(userdata);
        return 0;
}

static int on_drain(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s;
        (void) fd;
        (void) revents;
        drain_event(userdata);
        return 0;
}

/* The signals from the signalfd (lib/signal-util.h), which carries the sender a reload needs. */
static int on_signal(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Member *m = userdata;
        struct signalfd_siginfo si;

        (void) s;
        (void) revents;
        if (signal_fd_read_info(fd, &si) <= 0)
                return 0;
        if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
                return sd_event_exit(m->event, 0);
        if (si.ssi_signo == SIGHUP) {
                drain_reread(m);
                if (daemon_reload_asked(&si))
                        (void) daemon_reload("sandboxd-member", NULL, &si);
        }
        return 0;
}

/* The loop's sources: every one waits for its descriptor but the pool manager's retry, which is
 * off while the pool manager is connected. Idle, nothing fires. */
static int loop_setup(Member *m) {
        int r;

        r = sd_event_default(&m->event);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, m->signal_fd, EPOLLIN, on_signal, m);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, m->agent_fd, EPOLLIN, on_agent, m);
        if (r >= 0 && m->drain_fd >= 0)
                r = sd_event_add_io(m->event, NULL, m->drain_fd, EPOLLIN, on_drain, m);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->poold_retry, CLOCK_MONOTONIC, 0, 0, on_poold_retry, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->poold_retry, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Member: cannot set up its loop");
        return 0;
}

/* The drain file's watch, the signals, the agent check's socket and the loop over them. */
static int member_setup(Member *m) {
        pthread_condattr_t attr;

        /* The registrar's deadlines are CLOCK_MONOTONIC's, which a change of the time leaves alone. */
        (void) pthread_mutex_init(&m->lock, NULL);
        if (pthread_condattr_init(&attr) != 0 || pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
            pthread_cond_init(&m->wake, &attr) != 0)
                return -ENOMEM;
        (void) pthread_condattr_destroy(&attr);
        if (member_drain_path(m->config->db_path, m->drain_path, sizeof(m->drain_path), &m->drain_dir_len) < 0)
                return log_error_errno(ENAMETOOLONG, "Member: SANDBOXD_DB is too long");
        m->drain_fd = drain_watch(m);
        if (m->drain_fd < 0)
                (void) log_warning_errno(m->drain_fd, "Member: cannot watch %s's directory, ignoring: sandboxctl drain then needs "
                                                      "systemctl reload sandboxd-member",
                                         m->drain_path);
        m->draining = drain_file_exists(m);
        m->signal_fd = signal_fd_open(false, NULL);
        if (m->signal_fd < 0)
                return log_error_errno(m->signal_fd, "Member: cannot take its signals");
        m->agent_fd = agent_listen(m->config);
        if (m->agent_fd < 0)
                return m->agent_fd;
        return loop_setup(m);
}

static void member_done(Member *m) {
        m->poold_source = sd_event_source_disable_unref(m->poold_source);
        m->poold_retry = sd_event_source_disable_unref(m->poold_retry);
        closep(&m->poold_fd);
        closep(&m->agent_fd);
        closep(&m->drain_fd);
        closep(&m->signal_fd);
        /* The mirror's thread may still use the loop's sources: the process's end takes them. */
}

int main(int argc, char *argv[]) {
        Config config;
        Member m = {.config = &config, .signal_fd = -1, .agent_fd = -1, .poold_fd = -1, .drain_fd = -1};
        int r;

        r = daemon_reload_main(argc, argv);
        if (r >= 0)
                return r;
        r = daemon_start("sandboxd-member", false, &config);
        if (r < 0)
                return EXIT_FAILURE;
        if (!config.etcd[0]) {
                log_info("Member: SANDBOXD_ETCD is not set: a single host, nothing to do");
                (void) sd_notify(0, "READY=1\nSTATUS=Not a cluster member (SANDBOXD_ETCD is not set)");
                return EXIT_SUCCESS;
        }
        r = member_setup(&m);
        if (r < 0) {
                member_done(&m);
                return EXIT_FAILURE;
        }
        poold_connect(&m);
        r = -pthread_create(&m.registrar, NULL, registrar_run, &m);
        if (r < 0) {
                (void) log_error_errno(r, "Member: cannot start the registrar");
                member_done(&m);
                return EXIT_FAILURE;
        }
        if (mirror_start(m.event, &config) < 0) {
                /* A member whose keys and quotas no longer follow the cluster's takes no work. */
                r = -EIO;
                goto stop;
        }
        log_info("Member: %s, at %s, registering in etcd (%s)%s", config.member, config.member_address, config.etcd,
                 m.draining ? ", draining" : "");
        (void) sd_notify(0, "READY=1");
        daemon_notify_status(m.draining ? "draining" : "ready");

        r = sd_event_loop(m.event);
        if (r < 0)
                (void) log_error_errno(r, "Member: its loop failed");
stop:
        (void) sd_notify(0, "STOPPING=1");
        (void) pthread_mutex_lock(&m.lock);
        m.stop = true;
        (void) pthread_cond_signal(&m.wake);
        (void) pthread_mutex_unlock(&m.lock);
        (void) pthread_join(m.registrar, NULL);
        member_done(&m);
        /* The mirror's thread may be inside libcurl or sqlite: exit() would run their atexit
         * handlers under it. */
        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}
