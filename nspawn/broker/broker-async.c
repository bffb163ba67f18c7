/* SPDX-License-Identifier: MIT */
/* The broker's client on an sd-event loop (broker-async.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "lib/error-count.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-async.h"

typedef struct BrokerCall BrokerCall;

struct BrokerCall {
        BrokerAsync *owner;
        BrokerRequest req;
        int pass_fd;
        int fd; /* the request's own connection; -1 while queued */
        unsigned attempts;
        int failed;        /* why it could not be sent: told from the loop, by its timer */
        uint64_t deadline; /* CLOCK_MONOTONIC µs, from when it was queued */
        sd_event_source *io, *timer;
        BrokerAsyncDone done;
        void *userdata;
        BrokerCall *next;
};

struct BrokerAsync {
        sd_event *event;
        unsigned max_inflight, inflight;
        BrokerCall *calls; /* in the order they were queued */
        size_t n_calls;
};

static void call_unlink(BrokerAsync *a, BrokerCall *c) {
        for (BrokerCall **p = &a->calls; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        a->n_calls--;
                        return;
                }
}

static void call_free(BrokerCall *c) {
        c->io = sd_event_source_disable_unref(c->io);
        c->timer = sd_event_source_disable_unref(c->timer);
        if (c->fd >= 0)
                c->owner->inflight--;
        closep(&c->fd);
        closep(&c->pass_fd);
        free(c);
}

static void calls_start(BrokerAsync *a);

/* c's end: unlinked first, so that its callback may queue more and freeing nothing under it. */
static void call_end(BrokerCall *c, int r, const BrokerReply *rep, int fd) {
        BrokerAsync *a = c->owner;
        ErrorCount which = broker_failure_count((BrokerOp) c->req.op, r);
        BrokerAsyncDone done = c->done;
        void *userdata = c->userdata;
        BrokerReply copy = rep ? *rep : (BrokerReply){.error = r};

        if (which != _ERROR_COUNT_NONE)
                error_count_inc(which);
        if (r == -ETIMEDOUT)
                (void) snprintf(copy.message, sizeof(copy.message), "the broker did not answer within %" PRIu64 " s",
                                broker_op_timeout_usec((BrokerOp) c->req.op, c->req.timeout_s) / USEC_PER_SEC);
        else if (r < 0 && !copy.message[0])
                (void) snprintf(copy.message, sizeof(copy.message), "%s", strerror(-r));
        call_unlink(a, c);
        call_free(c);
        calls_start(a);
        done(r, &copy, fd, userdata);
}

static int call_send(BrokerCall *c);

/* The reply, or the connection's end: a broker that went away (restarted) is asked once more, as
 * the blocking client does; every op but a tool call may be sent twice. */
static int on_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        BrokerCall *c = userdata;
        BrokerReply rep = {};
        cleanup_close int got = -1;
        ssize_t n = fd_receive_one(fd, &rep, sizeof(rep), MSG_DONTWAIT, &got);

        (void) s;
        (void) revents;
        if (n == -EAGAIN)
                return 0;
        if (n == (ssize_t) sizeof(rep)) {
                rep.message[sizeof(rep.message) - 1] = 0;
                rep.result[sizeof(rep.result) - 1] = 0;
                call_end(c, rep.error, &rep, TAKE_FD(got));
                return 0;
        }
        c->io = sd_event_source_disable_unref(c->io);
        closep(&c->fd);
        c->owner->inflight--;
        if (c->attempts < 2 && c->req.op != BROKER_RUN_TOOL && call_send(c) >= 0)
                return 0;
        call_end(c, n < 0 && n != -EMSGSIZE && n != -EXFULL ? (int) n : -EPROTO, NULL, -1);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        BrokerCall *c = userdata;

        (void) s;
        (void) usec;
        /* A late reply must not be taken for another's: its connection goes with it. */
        call_end(c, c->failed < 0 ? c->failed : -ETIMEDOUT, NULL, -1);
        return 0;
}

/* Connects and sends: the broker's socket takes a whole message or none, and a new connection's
 * buffer is empty. Non-blocking: a broker whose backlog is full is an error now, not a wait. */
static int call_send(BrokerCall *c) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = BROKER_SOCKET};
        cleanup_close int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int r;

        c->attempts++;
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        r = fd_send_one(fd, &c->req, sizeof(c->req), c->pass_fd, MSG_DONTWAIT);
        if (r < 0)
                return r;
        r = sd_event_add_io(c->owner->event, &c->io, fd, EPOLLIN, on_reply, c);
        if (r < 0)
                return r;
        c->fd = TAKE_FD(fd);
        c->owner->inflight++;
        return 0;
}

/* The queued requests sent, in order, while there is room. One that cannot be sent ends at once,
 * from the loop (its timer, due now), never from its caller's call. */
static void calls_start(BrokerAsync *a) {
        for (BrokerCall *c = a->calls; c && a->inflight < a->max_inflight; c = c->next) {
                int r;

                if (c->attempts > 0)
                        continue;
                r = call_send(c);
                if (r < 0) {
                        c->failed = r;
                        (void) sd_event_source_set_time(c->timer, 1);
                }
        }
}

int broker_async_call(BrokerAsync *a, BrokerOp op, const char *id, int pass_fd, BrokerAsyncDone done, void *userdata) {
        BrokerCall *c = calloc(1, sizeof(*c)), **tail = &a->calls;
        int r;

        if (!c)
                return -ENOMEM;
        *c = (BrokerCall){.owner = a, .req = {.magic = BROKER_MAGIC, .op = op}, .pass_fd = -1, .fd = -1, .done = done, .userdata = userdata};
        if (id)
                (void) snprintf(c->req.id, sizeof(c->req.id), "%s", id);
        c->deadline = now_usec(CLOCK_MONOTONIC) + broker_op_timeout_usec(op, 0);
        if (pass_fd >= 0)
                c->pass_fd = fcntl(pass_fd, F_DUPFD_CLOEXEC, 3);
        r = pass_fd >= 0 && c->pass_fd < 0 ? negative_errno() : 0;
        if (r >= 0)
                r = sd_event_add_time(a->event, &c->timer, CLOCK_MONOTONIC, c->deadline, USEC_PER_MSEC, on_deadline, c);
        if (r < 0) {
                c->owner = a;
                call_free(c);
                return r;
        }
        while (*tail)
                tail = &(*tail)->next;
        *tail = c;
        a->n_calls++;
        /* Sent from the loop, so that a failure to reach the broker is told through the callback too. */
        calls_start(a);
        return 0;
}

int broker_async_new(sd_event *e, unsigned max_inflight, BrokerAsync **ret) {
        BrokerAsync *a = calloc(1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        *a = (BrokerAsync){.event = sd_event_ref(e), .max_inflight = max_inflight > 0 ? max_inflight : 1};
        *ret = a;
        return 0;
}

BrokerAsync *broker_async_free(BrokerAsync *a) {
        if (!a)
                return NULL;
        a->max_inflight = 0; /* nothing more is sent */
        while (a->calls) {
                BrokerCall *c = a->calls;
                BrokerReply rep = {.error = -ECANCELED};

                a->calls = c->next;
                a->n_calls--;
                c->done(-ECANCELED, &rep, -1, c->userdata);
                call_free(c);
        }
        (void) sd_event_unref(a->event);
        free(a);
        return NULL;
}

size_t broker_async_pending(const BrokerAsync *a) {
        return a ? a->n_calls : 0;
}

/* n records of size bytes in the memfd fd, checked to be exactly that. *ret is the caller's. */
static int records_read(int fd, uint32_t n, size_t size, void **ret) {
        cleanup_free void *buf = NULL;
        struct stat st;
        size_t total = (size_t) n * size;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size != total)
                return -EPROTO;
        buf = malloc(total ? total : 1);
        if (!buf)
                return -ENOMEM;
        r = fd_pread_exact(fd, buf, total, 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

int broker_units_read(const BrokerReply *rep, int fd, BrokerUnit **ret, size_t *ret_n) {
        cleanup_free BrokerUnit *units = NULL;
        int r = records_read(fd, rep->n_units, sizeof(*units), (void **) &units);

        if (r < 0)
                return r;
        for (size_t i = 0; i < rep->n_units; i++)
                if (!memchr(units[i].id, 0, sizeof(units[i].id)) || !memchr(units[i].state, 0, sizeof(units[i].state)))
                        return -EPROTO;
        *ret = TAKE_PTR(units);
        *ret_n = rep->n_units;
        return 0;
}

int broker_sessions_read(const BrokerReply *rep, int fd, BrokerSession **ret, size_t *ret_n) {
        cleanup_free BrokerSession *list = NULL;
        int r = records_read(fd, rep->n_units, sizeof(*list), (void **) &list);

        if (r < 0)
                return r;
        for (size_t i = 0; i < rep->n_units; i++)
                if (!memchr(list[i].id, 0, sizeof(list[i].id)) || !memchr(list[i].state, 0, sizeof(list[i].state)) ||
                    !broker_id_valid(list[i].id, "session"))
                        return -EPROTO;
        *ret = TAKE_PTR(list);
        *ret_n = rep->n_units;
        return 0;
}
