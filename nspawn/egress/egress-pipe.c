/* SPDX-License-Identifier: MIT */
/* A sandbox's connection relayed to the egress proxy, byte for byte, from the event loop. Its first
 * byte says where: a C to Squid's port for tunnels (CONNECT; WebDAV's COPY and CHECKOUT go there
 * too, and are refused), anything else to the front (HAProxy), the proxy of plain HTTP. A
 * connection sent the wrong way is refused there, never
 * let through: Squid's tunnel port takes nothing but CONNECT, the front no CONNECT. (Peeking at one
 * byte: a socket holding fewer bytes than a longer peek wants stays readable, and the loop would
 * spin until the rest came.) Then each
 * side is read while the buffer toward the other has room and written while it holds bytes, so a
 * slow reader slows its writer and nothing grows. The buffers are kernel pipes that splice() fills
 * and drains: the bytes go from socket to socket without a copy through the relay (copied, a 10 MiB
 * download spent most of its time in the relay's reads and writes). An end of file is passed on as
 * a half-close once its buffer is empty; the pipe ends when both directions have, or at the first
 * error. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/egress/egress-relay.h"

static size_t buffer_room(const PipeBuffer *b) {
        return b->eof || b->full ? 0 : b->size - b->len;
}

static size_t buffer_len(const PipeBuffer *b) {
        return b->len;
}

/* A pipe's size: the first PIPE_LARGE_MAX pipes open at once get PIPE_LARGE_BYTES (a 10 MiB
 * download over HTTPS cost the relay 4.4 ms of CPU through them, 7.8 ms through the default 64
 * KiB), the others the default. Every pipe of the relay counts against its user's pipe pages
 * (fs.pipe-user-pages-soft, 64 MiB), past which each new one gets two pages: 96 large ones leave
 * room for some 300 connections more at the default before that. */
#define PIPE_LARGE_BYTES (256 << 10)
#define PIPE_LARGE_MAX 96U

static int buffer_open(PipeBuffer *b, Relay *r) {
        int fds[2];
        int size;

        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        *b = (PipeBuffer){.r = fds[0], .w = fds[1]};
        if (r->large_pipes < PIPE_LARGE_MAX && fcntl(b->w, F_SETPIPE_SZ, PIPE_LARGE_BYTES) >= 0) {
                b->large = true;
                r->large_pipes++;
        }
        size = fcntl(b->w, F_GETPIPE_SZ);
        if (size <= 0)
                return size < 0 ? -errno : -EIO;
        b->size = (size_t) size;
        return 0;
}

static void buffer_close(PipeBuffer *b, Relay *r) {
        closep(&b->r);
        closep(&b->w);
        if (b->large)
                r->large_pipes--;
        b->large = false;
}

/* What the execution may still relay now: its bandwidth's tokens, refilled for the time since they
 * were last (a second's worth at most: the burst). */
static uint64_t budget(Execution *x) {
        uint64_t rate = x->relay->rate, now;

        if (rate == 0)
                return UINT64_MAX;
        now = now_usec(CLOCK_MONOTONIC);
        /* A second's worth at most: past a second idle, full, whatever the product would be. */
        if (x->tokens_at == 0 || now - x->tokens_at >= USEC_PER_SEC) {
                x->tokens = rate;
                x->tokens_at = now;
                x->tokens_frac = 0;
        } else {
                /* Exact: the part of a byte earned is kept for the next refill. Rounding the time
                 * spent down instead gave refills a few µs apart up to twice the rate on a fast
                 * host. */
                uint64_t earned = (now - x->tokens_at) * rate + x->tokens_frac;

                x->tokens_frac = earned % USEC_PER_SEC;
                earned /= USEC_PER_SEC;
                x->tokens_at = now;
                x->tokens = x->tokens + earned > rate ? rate : x->tokens + earned;
        }
        return x->tokens;
}

static int on_refill(sd_event_source *s, uint64_t usec, void *userdata) {
        Execution *x = userdata;

        (void) usec;
        x->refill_timer = sd_event_source_disable_unref(s);
        pipes_rearm(x);
        return 0;
}

/* Out of tokens: the connections wait until a slice of the rate (a twentieth, 50 ms) is back. */
static void refill_later(Execution *x) {
        if (!x->refill_timer)
                (void) sd_event_add_time_relative(x->relay->event, &x->refill_timer, CLOCK_MONOTONIC, USEC_PER_SEC / 20, 0, on_refill, x);
}

/* Reads what fd has into b, at most *allowance bytes (taken from it): 0, 1 at its end of file,
 * -errno. */
static int buffer_fill(PipeBuffer *b, int fd, uint64_t *allowance) {
        size_t want = buffer_room(b);
        ssize_t n;

        if (want > *allowance)
                want = (size_t) *allowance;
        if (want == 0)
                return 0;
        n = splice(fd, NULL, b->w, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0) {
                int at_mark = 0;

                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                /* Urgent data (MSG_OOB): a splice stops at its mark for good (a read would skip
                 * it), while the socket stays readable. Neither HTTP nor TLS sends any: the
                 * connection ends there, rather than have the loop wake for it without end. */
                if (b->len == 0 && ioctl(fd, SIOCATMARK, &at_mark) >= 0 && at_mark)
                        return -EPROTO;
                /* The socket had nothing, or the pipe had no slot left for what it had (a pipe's
                 * room is counted in pieces, not bytes): with bytes in the pipe, it is not read
                 * again before they are written, so neither case spins. */
                if (b->len > 0)
                        b->full = true;
                return 0;
        }
        if (n == 0) {
                b->eof = true;
                return 1;
        }
        b->len += (size_t) n;
        if (*allowance != UINT64_MAX)
                *allowance -= (uint64_t) n;
        return 0;
}

/* Moves what b holds into fd, counting it in *count; once b is empty after its end of file, shuts
 * fd's write side. 0 or -errno. */
static int buffer_drain(PipeBuffer *b, int fd, uint64_t *count, bool *shut) {
        while (b->len > 0) {
                ssize_t n = splice(b->r, NULL, fd, NULL, b->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
                if (n == 0)
                        return -EPIPE;
                b->len -= (size_t) n;
                b->full = false;
                *count += (uint64_t) n;
        }
        if (b->eof && !*shut) {
                *shut = true;
                if (shutdown(fd, SHUT_WR) < 0 && errno != ENOTCONN)
                        return -errno;
        }
        return 0;
}

static bool pipe_done(const Pipe *p) {
        return p->up_shut && p->down_shut;
}

/* The events each side waits for now: no reading while the execution's bandwidth is spent. */
static int pipe_rearm(Pipe *p) {
        uint32_t down = 0, up = 0;
        bool may_read = budget(p->x) > 0;
        int r;

        if (!may_read)
                refill_later(p->x);
        if (p->choosing)
                /* Its first byte, read with MSG_PEEK: a socket that has one stays readable until it
                 * is consumed, so this wakes once, when it comes. */
                return sd_event_source_set_io_events(p->down_source, EPOLLIN);
        if (p->connecting)
                up = EPOLLOUT;
        else {
                if (may_read && buffer_room(&p->to_up) > 0)
                        down |= EPOLLIN;
                if (may_read && buffer_room(&p->to_down) > 0)
                        up |= EPOLLIN;
                if (buffer_len(&p->to_up) > 0)
                        up |= EPOLLOUT;
                if (buffer_len(&p->to_down) > 0)
                        down |= EPOLLOUT;
        }
        r = sd_event_source_set_io_events(p->down_source, down);
        if (r >= 0)
                r = sd_event_source_set_enabled(p->down_source, down ? SD_EVENT_ON : SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_source_set_io_events(p->up_source, up);
        if (r >= 0)
                r = sd_event_source_set_enabled(p->up_source, up ? SD_EVENT_ON : SD_EVENT_OFF);
        return r;
}

static int pipe_connect(Pipe *p, const struct sockaddr_in *to);

/* Everything either side can do now, in both directions. */
static int pipe_step(Pipe *p) {
        uint64_t allowance;
        int r;

        if (p->choosing) {
                char first;
                ssize_t n = recv(p->down, &first, 1, MSG_PEEK | MSG_DONTWAIT);

                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? pipe_rearm(p) : -errno;
                if (n == 0)
                        return 1; /* closed before it asked anything */
                r = pipe_connect(p, first == 'C' ? &p->x->relay->proxy : &p->x->relay->front);
                if (r < 0)
                        return log_warning_errno(r, "Egress: %s: failed to relay a connection to the proxy", p->x->id);
                /* Its connect() has only begun (SO_ERROR reads 0 meanwhile): up's EPOLLOUT says
                 * when it ended. */
                return 0;
        }
        if (p->connecting) {
                int error = 0;
                socklen_t len = sizeof(error);

                if (getsockopt(p->up, SOL_SOCKET, SO_ERROR, &error, &len) < 0)
                        return -errno;
                if (error == EINPROGRESS)
                        return pipe_rearm(p);
                if (error)
                        return -error;
                p->connecting = false;
        }
        allowance = budget(p->x);
        r = buffer_fill(&p->to_up, p->down, &allowance);
        if (r >= 0)
                r = buffer_fill(&p->to_down, p->up, &allowance);
        if (p->x->relay->rate > 0)
                p->x->tokens = allowance;
        if (r >= 0)
                r = buffer_drain(&p->to_up, p->up, &p->x->tx_bytes, &p->up_shut);
        if (r >= 0)
                r = buffer_drain(&p->to_down, p->down, &p->x->rx_bytes, &p->down_shut);
        if (r < 0)
                return r;
        if (pipe_done(p))
                return 1;
        return pipe_rearm(p);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Pipe *p = userdata;
        int r;

        (void) s;
        (void) fd;
        (void) revents;
        r = pipe_step(p);
        if (r != 0)
                pipe_free(p);
        return 0;
}

void pipes_rearm(Execution *x) {
        for (Pipe *p = x->pipes, *next; p; p = next) {
                next = p->next;
                if (pipe_rearm(p) < 0)
                        pipe_free(p);
        }
}

void pipe_free(Pipe *p) {
        Execution *x = p->x;

        if (p->connecting)
                audit_forget(x, p->up_port);
        sd_event_source_disable_unref(p->down_source);
        sd_event_source_disable_unref(p->up_source);
        closep(&p->down);
        closep(&p->up);
        buffer_close(&p->to_up, x->relay);
        buffer_close(&p->to_down, x->relay);
        if (p->prev)
                p->prev->next = p->next;
        else
                x->pipes = p->next;
        if (p->next)
                p->next->prev = p->prev;
        x->n_pipes--;
        free(p);
        relay_fed(x->relay);
}

/* The connection to the proxy at to, from the execution's address: the proxy knows the execution
 * by it. */
static int connect_up(const Execution *x, const struct sockaddr_in *to, int *ret) {
        struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr = x->address};
        cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *) &from, sizeof(from)) < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) to, sizeof(*to)) < 0 && errno != EINPROGRESS)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

/* p's connection up, to the proxy at to, started: watched until connect() has ended. */
static int pipe_connect(Pipe *p, const struct sockaddr_in *to) {
        struct sockaddr_in own = {};
        socklen_t len = sizeof(own);
        int r;

        /* Its buffers only now: a connection that never says anything holds no pipe, large or
         * small (an execution's connections at once are bounded; their silence is not). */
        r = buffer_open(&p->to_up, p->x->relay);
        if (r >= 0)
                r = buffer_open(&p->to_down, p->x->relay);
        if (r >= 0)
                r = connect_up(p->x, to, &p->up);
        if (r < 0)
                return r;
        p->choosing = false;
        p->connecting = true;
        /* The proxy's log names the connection by it: the execution's end waits for it. */
        if (getsockname(p->up, (struct sockaddr *) &own, &len) >= 0)
                p->up_port = ntohs(own.sin_port);
        audit_expect(p->x, p->up_port);
        r = sd_event_add_io(p->x->relay->event, &p->up_source, p->up, EPOLLOUT, on_io, p);
        if (r < 0)
                return r;
        return pipe_rearm(p);
}

int pipe_start(Execution *x, int down) {
        cleanup_close int d = down;
        Pipe *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (Pipe){.x = x, .down = TAKE_FD(d), .up = -1, .choosing = true, .next = x->pipes, .to_up = {.r = -1, .w = -1}, .to_down = {.r = -1, .w = -1}};
        if (x->pipes)
                x->pipes->prev = p;
        x->pipes = p;
        x->n_pipes++;
        r = sd_event_add_io(x->relay->event, &p->down_source, p->down, EPOLLIN, on_io, p);
        if (r < 0) {
                (void) log_warning_errno(r, "Egress: %s: failed to relay a connection to the proxy", x->id);
                pipe_free(p);
                return r;
        }
        return 0;
}
