/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fd-wait.h"
#include "lib/macro.h"
#include "nspawn/pool/poold-client.h"
#include "nspawn/pool/poold-proto.h"

/* A connection to the pool manager. Its socket is systemd's: while the manager (re)starts, a
 * connection waits in the backlog rather than failing. */
static int connect_manager(int *ret_fd) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = POOLD_SOCKET};
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return errno == ENOENT ? -ECONNREFUSED : -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int send_line(int fd, const char *line) {
        size_t len = strlen(line);

        /* A few bytes on a fresh unix stream socket: all of them go at once, or the peer is gone. */
        if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t) len)
                return -EPIPE;
        return 0;
}

/* One line of the manager's answer (without its "\n") into buf. */
static int read_line(int fd, int client_fd, uint64_t deadline, char *buf, size_t size) {
        size_t len = 0;

        for (;;) {
                ssize_t n;
                int r = fd_wait(fd, POLLIN, client_fd, deadline);

                if (r < 0)
                        return r;
                /* The manager says one line, then waits for the worker's next: nothing follows it. */
                n = recv(fd, buf + len, size - 1 - len, MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n <= 0)
                        return n == 0 ? -ECONNRESET : -errno;
                len += (size_t) n;
                buf[len] = 0;
                if (buf[len - 1] == '\n') {
                        buf[len - 1] = 0;
                        return 0;
                }
                if (len >= size - 1)
                        return -EBADMSG;
        }
}

int pooldc_claim(const char *language, int client_fd, uint64_t deadline, PooldMachine *ret, int *ret_fd, char *reason, size_t size) {
        cleanup_close int fd = -1;
        char line[POOLD_LINE_MAX];
        PooldMachine m = {};
        int r;

        r = connect_manager(&fd);
        if (r < 0)
                return r;
        (void) snprintf(line, sizeof(line), "claim %s\n", language ? language : "python");
        r = send_line(fd, line);
        if (r >= 0)
                r = read_line(fd, client_fd, deadline, line, sizeof(line));
        if (r < 0)
                return r;
        r = poold_claim_reply_parse(line, m.id, sizeof(m.id), m.socket, sizeof(m.socket), &m.executions, reason, size);
        if (r < 0)
                return r;
        *ret = m;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void pooldc_release(int fd, const char *retire_label, const char *prepared) {
        char line[POOLD_LINE_MAX];

        (void) snprintf(line, sizeof(line), "release %s %s\n", retire_label ? retire_label : "none", prepared ? prepared : "python");
        /* Unsaid (the manager gone), the connection's end retires the machine instead. */
        (void) send_line(fd, line);
        (void) close(fd);
}

int pooldc_turn(const char *session, unsigned most, int client_fd, uint64_t deadline, int *ret_fd) {
        cleanup_close int fd = -1;
        char line[POOLD_LINE_MAX];
        int r;

        r = connect_manager(&fd);
        if (r < 0)
                return r;
        (void) snprintf(line, sizeof(line), "turn %s %u\n", session, most > 0 ? most : 1);
        r = send_line(fd, line);
        if (r >= 0)
                r = read_line(fd, client_fd, deadline, line, sizeof(line));
        if (r < 0)
                return r;
        if (strcmp(line, "busy") == 0)
                return -EBUSY;
        if (strcmp(line, "turn") != 0)
                return -EBADMSG;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void pooldc_done(int fd) {
        (void) send_line(fd, "done\n");
        (void) close(fd);
}

int pooldc_notify(const char *word) {
        char line[POOLD_LINE_MAX];
        cleanup_close int fd = -1;
        int r;

        r = connect_manager(&fd);
        if (r < 0)
                return r;
        (void) snprintf(line, sizeof(line), "%s\n", word);
        return send_line(fd, line);
}
