/* SPDX-License-Identifier: MIT */
/* The worker's side of the egress relay's protocol (egress-relay.c says it whole). */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fcgi/egress-link.h"
#include "lib/config.h"
#include "lib/fd-util.h"
#include "lib/fd-wait.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/runner-request.h"

DEFINE_JSON_CLEANUP

int egress_link_open(const Config *c, EgressLink *ret) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        cleanup_close int fd = -1;

        if (strlen(c->egress_socket) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, c->egress_socket, strlen(c->egress_socket) + 1);
        /* Never waits: a relay whose backlog is full is as unavailable as one not running. */
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        *ret = (EgressLink){.fd = TAKE_FD(fd)};
        return 0;
}

/* One message of fd, waited for until deadline or client_fd's hang-up. */
static ssize_t receive(int fd, void *buf, size_t size, int client_fd, uint64_t deadline, int *ret_fd) {
        for (;;) {
                ssize_t n = fd_receive_one(fd, buf, size, MSG_DONTWAIT, ret_fd);
                int r;

                if (n != -EAGAIN)
                        return n;
                r = fd_wait(fd, POLLIN, client_fd, deadline);
                if (r < 0)
                        return r;
        }
}

int egress_link_start(EgressLink *l, int runner_fd, int client_fd, uint64_t deadline) {
        cleanup_json struct json_object *reg = json_object_new_object(), *ans = NULL;
        cleanup_close int sock = -1;
        char mark = 0, buf[512];
        const char *text;
        size_t len = 0;
        ssize_t n;
        int r;

        n = receive(runner_fd, &mark, 1, client_fd, deadline, &sock);
        if (n < 0)
                return (int) n;
        if (n != 1 || mark != RUNNER_EGRESS_MARK || sock < 0)
                return -EPROTO;
        if (!reg || json_object_object_add(reg, "id", json_object_new_string(l->id ? l->id : "")) < 0 ||
            json_object_object_add(reg, "allow", json_object_get(l->allow)) < 0)
                return -ENOMEM;
        text = json_object_to_json_string_length(reg, JSON_C_TO_STRING_PLAIN, &len);
        r = fd_send_one(l->fd, text, len, sock, 0);
        /* Any failure to reach the relay (gone, restarted, its backlog full) is the relay's. */
        if (r < 0)
                return -EREMOTEIO;
        l->registered = true;
        /* The relay watches the socket once it answers; what the code connected meanwhile waits in
         * the socket's backlog. */
        n = receive(l->fd, buf, sizeof(buf) - 1, client_fd, deadline, NULL);
        if (n == -ETIME || n == -ECANCELED)
                return (int) n;
        l->answered = n >= 0;
        if (n < 0)
                return -EREMOTEIO;
        buf[n > 0 ? n : 0] = 0;
        ans = json_tokener_parse(buf);
        /* Refused, or gone: the relay will not carry this execution's traffic. */
        if (n == 0 || !ans || !json_object_object_get_ex(ans, "address", NULL))
                return -EREMOTEIO;
        return 0;
}

/* The report's array of names as "a,b,c", or NULL when it has none. */
static char *names(struct json_object *j, const char *key) {
        struct json_object *a = NULL;
        char *s = NULL;
        size_t n, len = 0;
        FILE *f;

        if (!json_object_object_get_ex(j, key, &a) || !json_object_is_type(a, json_type_array) || (n = json_object_array_length(a)) == 0)
                return NULL;
        f = open_memstream(&s, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(a, i);

                if (json_object_is_type(e, json_type_string))
                        (void) fprintf(f, "%s%s", i > 0 ? "," : "", json_object_get_string(e));
        }
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

#define EGRESS_REPORT_MAX (24U << 10)

static uint64_t count(struct json_object *j, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(j, key, &v) || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return 0;
        return (uint64_t) json_object_get_int64(v);
}

/* The relay's report on fd, read into l: after its answer to the registration, if that was left
 * unread (the execution was given up while it came). */
static void report_read(EgressLink *l, char *buf) {
        cleanup_json struct json_object *ans = NULL;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC;
        ssize_t n;

        if (l->registered && !l->answered && receive(l->fd, buf, EGRESS_REPORT_MAX, -1, deadline, NULL) <= 0)
                return;
        n = receive(l->fd, buf, EGRESS_REPORT_MAX, -1, deadline, NULL);
        if (n <= 0)
                return;
        buf[n] = 0;
        ans = json_tokener_parse(buf);
        l->rx_bytes = count(ans, "rx_bytes");
        l->tx_bytes = count(ans, "tx_bytes");
        l->connections = count(ans, "connections");
        l->refused = count(ans, "refused");
        l->hosts = names(ans, "hosts");
        l->refused_hosts = names(ans, "refused_hosts");
}

void egress_link_end(EgressLink *l) {
        static const char end[] = "{\"end\":true}";
        /* Two lists of names at most: a few numbers and 2 × 32 names of 253 bytes. */
        char *buf;

        if (l->fd < 0)
                return;
        buf = malloc(EGRESS_REPORT_MAX + 1);
        if (buf && fd_send_one(l->fd, end, sizeof(end) - 1, -1, 0) >= 0)
                report_read(l, buf);
        free(buf);
        closep(&l->fd); /* the report stays the caller's */
}

void egress_link_close(EgressLink *l) {
        closep(&l->fd);
        free(l->hosts);
        free(l->refused_hosts);
        l->hosts = l->refused_hosts = NULL;
}
