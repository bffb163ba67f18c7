/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/session-usage.h"

#define USAGE_REQUEST "{\"op\":\"usage\"}\n"
/* pool_exchange() reads in 64 KiB steps: a cap below that would refuse any reply. */
#define USAGE_REPLY_MAX (1 << 20)
/* The asynchronous ask's: the reply is a few numbers. */
#define USAGE_ASK_REPLY_MAX 4096

/* The integer after "key": in text (NUL-terminated): 0, or -EBADMSG. */
static int find_int(const char *text, const char *key, int64_t *ret) {
        const char *p = strstr(text, key);
        char *end = NULL;
        long long v;

        if (!p)
                return -EBADMSG;
        p += strlen(key);
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoll(p, &end, 10);
        if (errno != 0 || (*end != ',' && *end != '}'))
                return -EBADMSG;
        *ret = v;
        return 0;
}

int session_usage_parse(const char *reply, size_t len, int64_t *ret_cpu_ms) {
        cleanup_free char *text = NULL;
        int64_t status = 0, cpu = 0;

        if (!reply || len == 0 || memchr(reply, 0, len) || reply[0] != '{')
                return -EBADMSG;
        text = strndup(reply, len);
        if (!text)
                return -ENOMEM;
        if (find_int(text, "\"status\":", &status) < 0 || status != 200 || find_int(text, "\"cpu_ms\":", &cpu) < 0)
                return -EBADMSG; /* NOLINT(clang-analyzer-unix.Malloc): text is cleanup_free, unseen by clang-analyzer 14 */
        *ret_cpu_ms = cpu;
        return 0;
}

int session_usage_fetch(const char *socket_path, uint64_t deadline, int64_t *ret_cpu_ms) {
        cleanup_close int fd = -1;
        cleanup_free char *reply = NULL;
        size_t len = 0;
        int r;

        r = pool_connect(socket_path, &fd);
        if (r >= 0)
                r = pool_wait_greeting(fd, deadline);
        if (r >= 0)
                r = pool_exchange(fd, USAGE_REQUEST, strlen(USAGE_REQUEST), -1, deadline, USAGE_REPLY_MAX, &reply, &len);
        if (r < 0)
                return -EHOSTDOWN;
        return session_usage_parse(reply, len, ret_cpu_ms);
}

struct SessionUsageAsk {
        int fd;
        size_t got; /* the greeting's bytes so far */
        bool sent;
        sd_event_source *io, *timer;
        char reply[USAGE_ASK_REPLY_MAX];
        size_t len;
        SessionUsageDone done;
        void *userdata;
};

SessionUsageAsk *session_usage_ask_cancel(SessionUsageAsk *a) {
        if (!a)
                return NULL;
        a->io = sd_event_source_disable_unref(a->io);
        a->timer = sd_event_source_disable_unref(a->timer);
        closep(&a->fd);
        free(a);
        return NULL;
}

static void ask_end(SessionUsageAsk *a, int r) {
        SessionUsageDone done = a->done;
        void *userdata = a->userdata;
        int64_t cpu_ms = 0;

        if (r >= 0)
                r = session_usage_parse(a->reply, a->len, &cpu_ms);
        (void) session_usage_ask_cancel(a);
        done(r, cpu_ms, userdata);
}

/* The greeting, then the request (far smaller than the socket's buffer) with the write side closed,
 * then the reply until EOF. */
static int ask_step(SessionUsageAsk *a) {
        ssize_t n;
        int r;

        if (!a->sent) {
                r = pool_read_greeting(a->fd, &a->got);
                if (r < 0)
                        return r == -EAGAIN ? 0 : -EHOSTDOWN;
                if (send(a->fd, USAGE_REQUEST, strlen(USAGE_REQUEST), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) strlen(USAGE_REQUEST) ||
                    shutdown(a->fd, SHUT_WR) < 0)
                        return -EHOSTDOWN;
                a->sent = true;
        }
        for (;;) {
                if (a->len == sizeof(a->reply))
                        return -EBADMSG;
                n = read(a->fd, a->reply + a->len, sizeof(a->reply) - a->len);
                if (n == 0)
                        return 1;
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -EHOSTDOWN;
                a->len += (size_t) n;
        }
}

static int on_ask_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SessionUsageAsk *a = userdata;
        int r = ask_step(a);

        (void) s;
        (void) fd;
        (void) revents;
        if (r != 0)
                ask_end(a, r < 0 ? r : 0);
        return 0;
}

static int on_ask_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        ask_end(userdata, -ETIME);
        return 0;
}

int session_usage_ask(sd_event *e, const char *socket_path, uint64_t timeout_usec, SessionUsageDone done, void *userdata,
                      SessionUsageAsk **ret) {
        SessionUsageAsk *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        *a = (SessionUsageAsk){.fd = -1, .done = done, .userdata = userdata};
        r = pool_connect(socket_path, &a->fd);
        if (r >= 0)
                r = sd_event_add_io(e, &a->io, a->fd, EPOLLIN, on_ask_io, a);
        if (r >= 0)
                r = sd_event_add_time_relative(e, &a->timer, CLOCK_MONOTONIC, timeout_usec, USEC_PER_MSEC, on_ask_timeout, a);
        if (r < 0) {
                (void) session_usage_ask_cancel(a);
                return r == -ENOMEM ? r : -EHOSTDOWN;
        }
        if (ret)
                *ret = a;
        return 0;
}
