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

/* How long a request may wait to be sent, besides its op's own deadline once it is: generous, as
 * what is ahead of it in its lane is answered within its own deadline. */
#define QUEUED_MAX_USEC (120 * USEC_PER_SEC)

typedef struct BrokerCall BrokerCall;

struct BrokerCall {
        BrokerAsync *owner;
        BrokerRequest req;
        int pass_fd;
        int fd; /* the request's own connection; -1 while queued */
        unsigned attempts;
        int failed;        /* why it could not be sent: told from the loop, by its timer */
        bool slow;         /* broker_op_slow(): sent in the slow lane */
        sd_event_source *io, *timer;
        BrokerAsyncDone done;
        void *userdata;
        BrokerCall *next;
};

struct BrokerAsync {
        sd_event *event;
        unsigned max_inflight, inflight;
        unsigned max_slow, inflight_slow; /* of inflight: the slow ones */
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

/* c's connection closed: its room given back. */
static void call_disconnect(BrokerCall *c) {
        c->io = sd_event_source_disable_unref(c->io);
        if (c->fd < 0)
                return;
        closep(&c->fd);
        c->owner->inflight--;
        if (c->slow)
                c->owner->inflight_slow--;
}

static void call_free(BrokerCall *c) {
        call_disconnect(c);
        c->timer = sd_event_source_disable_unref(c->timer);
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
        if (r == -ETIMEDOUT && c->attempts == 0)
                (void) snprintf(copy.message, sizeof(copy.message), "the request waited %" PRIu64 " s to be sent", QUEUED_MAX_USEC / USEC_PER_SEC);
        else if (r == -ETIMEDOUT)
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
        call_disconnect(c);
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
        if (c->slow)
                c->owner->inflight_slow++;
        return 0;
}

bool broker_op_slow(BrokerOp op) {
        return op != BROKER_START_WARM && op != BROKER_KILL && op != BROKER_RESET_FAILED;
}

bool broker_async_may_send(BrokerOp op, unsigned inflight, unsigned inflight_slow, unsigned max_inflight, unsigned max_slow) {
        if (inflight >= max_inflight)
                return false;
        return !broker_op_slow(op) || inflight_slow < max_slow;
}

/* The queued requests sent, in order, while their lane has room: the slow ones (a session's stop
 * takes up to 90 s) never fill every connection, so a start or a kill behind a storm of them is sent
 * at once. Its deadline counts from then. One that cannot be sent ends at once, from the loop (its
 * timer, due now), never from its caller's call. */
static void calls_start(BrokerAsync *a) {
        for (BrokerCall *c = a->calls; c && a->inflight < a->max_inflight; c = c->next) {
                int r;

                if (c->attempts > 0 || !broker_async_may_send((BrokerOp) c->req.op, a->inflight, a->inflight_slow, a->max_inflight, a->max_slow))
                        continue;
                r = call_send(c);
                if (r < 0) {
                        c->failed = r;
                        (void) sd_event_source_set_time(c->timer, 1);
                } else
                        (void) sd_event_source_set_time(c->timer, now_usec(CLOCK_MONOTONIC) + broker_op_timeout_usec((BrokerOp) c->req.op, c->req.timeout_s));
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
        c->slow = broker_op_slow(op);
        if (pass_fd >= 0)
                c->pass_fd = fcntl(pass_fd, F_DUPFD_CLOEXEC, 3);
        r = pass_fd >= 0 && c->pass_fd < 0 ? negative_errno() : 0;
        if (r >= 0)
                r = sd_event_add_time(a->event, &c->timer, CLOCK_MONOTONIC, now_usec(CLOCK_MONOTONIC) + QUEUED_MAX_USEC, USEC_PER_MSEC, on_deadline, c);
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

int broker_async_new(sd_event *e, unsigned max_inflight, unsigned max_slow, BrokerAsync **ret) {
        BrokerAsync *a = calloc(1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        max_inflight = max_inflight > 0 ? max_inflight : 1;
        *a = (BrokerAsync){.event = sd_event_ref(e), .max_inflight = max_inflight, .max_slow = max_slow > 0 && max_slow < max_inflight ? max_slow : max_inflight};
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
