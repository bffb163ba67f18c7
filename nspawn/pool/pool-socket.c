/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fd-wait.h"
#include "lib/macro.h"
#include "lib/stream-frame.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool-socket.h"

static int unix_address(const char *path, struct sockaddr_un *ret) {
        size_t n = strlen(path);

        *ret = (struct sockaddr_un){.sun_family = AF_UNIX};
        if (n >= sizeof(ret->sun_path))
                return -ENAMETOOLONG;
        memcpy(ret->sun_path, path, n + 1);
        return 0;
}

/* A new unix socket of type (SOCK_STREAM, | SOCK_NONBLOCK) and the address of path. */
static int unix_socket(const char *path, int type, struct sockaddr_un *ret_sa, int *ret_fd) {
        int fd, r = unix_address(path, ret_sa);

        if (r < 0)
                return r;
        fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* A socket of type bound at path (replacing a stale one), mode 0600: only its owner, the workers'
 * user, can connect or send to it. */
static int bind_path(const char *path, int type, int *ret_fd) {
        cleanup_close int fd = -1;
        struct sockaddr_un sa;
        int r;

        r = unix_socket(path, type, &sa, &fd);
        if (r < 0)
                return r;
        (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        if (chmod(path, 0600) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int pool_listen(const char *path, int *ret_fd) {
        cleanup_close int fd = -1;
        int r;

        r = bind_path(path, SOCK_STREAM, &fd);
        if (r < 0)
                return r;
        if (listen(fd, 8) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int pool_connect(const char *path, int *ret_fd) {
        cleanup_close int fd = -1;
        struct sockaddr_un sa;
        int r;

        r = unix_socket(path, SOCK_STREAM | SOCK_NONBLOCK, &sa, &fd);
        if (r < 0)
                return r;
        /* A unix socket with room in its backlog connects at once, before the runner accepts. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int pool_read_greeting(int fd, size_t *got) {
        const size_t want = strlen(POOL_GREETING);
        char buf[sizeof(POOL_GREETING)];

        while (*got < want) {
                ssize_t n = read(fd, buf, want - *got);

                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
                if (n == 0)
                        return -ECONNRESET;
                if (memcmp(buf, POOL_GREETING + *got, (size_t) n) != 0)
                        return -EPROTO;
                *got += (size_t) n;
        }
        return 0;
}

int pool_wait_greeting(int fd, uint64_t deadline) {
        size_t got = 0;

        for (;;) {
                int r = pool_read_greeting(fd, &got);

                if (r != -EAGAIN)
                        return r;
                r = fd_wait(fd, POLLIN, -1, deadline);
                if (r < 0)
                        return r;
        }
}

static int send_all(int fd, const char *p, size_t n, int client_fd, uint64_t deadline) {
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                int r;

                if (w < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (w > 0) {
                        p += w;
                        n -= (size_t) w;
                        continue;
                }
                r = fd_wait(fd, POLLOUT, client_fd, deadline);
                if (r < 0)
                        return r;
        }
        return shutdown(fd, SHUT_WR) < 0 ? -errno : 0;
}

/* Room in *buf (*cap bytes, and one for a NUL) for the next read of 64 KiB, doubling it: -EMSGSIZE
 * once it holds more than max already. */
static int reply_room(char **buf, size_t len, size_t *cap, size_t max) {
        char *p;

        if (*cap - len >= 65536)
                return 0;
        if (*cap > max)
                return -EMSGSIZE;
        p = realloc(*buf, (*cap ? *cap * 2 : 65536) + 1);
        if (!p)
                return -ENOMEM;
        *cap = *cap ? *cap * 2 : 65536;
        *buf = p;
        return 0;
}

int pool_send_request(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline) {
        return send_all(fd, input, input_len, client_fd, deadline);
}

int pool_exchange(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline, size_t max_reply, char **ret_reply,
                  size_t *ret_len) {
        cleanup_free char *buf = NULL;
        size_t len = 0, cap = 0;
        int r;

        r = input ? send_all(fd, input, input_len, client_fd, deadline) : 0;
        if (r < 0)
                return r;

        for (;;) {
                ssize_t n;

                r = reply_room(&buf, len, &cap, max_reply);
                if (r < 0)
                        return r;
                n = read(fd, buf + len, cap - len);
                if (n == 0)
                        break;
                if (n > 0) {
                        len += (size_t) n;
                        if (len > max_reply)
                                return -EMSGSIZE;
                        continue;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                r = fd_wait(fd, POLLIN, client_fd, deadline);
                if (r < 0)
                        return r;
        }

        buf[len] = 0;
        *ret_reply = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* The frames whole at the start of buf's len bytes, handed on: the bytes they took in *ret_used,
 * and 1 once the reply's frame was among them (its data copied to *ret_reply). */
static int stream_frames(const char *buf, size_t len, size_t max_reply, const OutputListener *listener, size_t *ret_used, char **ret_reply,
                         size_t *ret_len) {
        size_t pos = 0;

        for (;;) {
                size_t off, n, total;
                char type;
                int r = stream_frame_next(buf + pos, len - pos, max_reply, &type, &off, &n, &total);

                if (r <= 0) {
                        *ret_used = pos;
                        return r;
                }
                if (type == STREAM_FRAME_REPLY) {
                        char *reply = malloc(n + 1);

                        if (!reply)
                                return -ENOMEM;
                        memcpy(reply, buf + pos + off, n);
                        reply[n] = 0;
                        *ret_reply = reply;
                        *ret_len = n;
                        *ret_used = pos + total;
                        return 1;
                }
                if (n > 0 && listener->chunk(listener->userdata, type == STREAM_FRAME_STDOUT ? 1 : 2, buf + pos + off, n) < 0)
                        return -ECANCELED;
                pos += total;
        }
}

int pool_exchange_stream(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline, size_t max_reply,
                         const OutputListener *listener, char **ret_reply, size_t *ret_len) {
        cleanup_free char *buf = NULL;
        size_t len = 0, cap = 0, used = 0;
        uint64_t quiet_since = now_usec(CLOCK_MONOTONIC), idle_usec = listener->idle_usec ? listener->idle_usec : OUTPUT_IDLE_USEC;
        int r;

        r = input ? send_all(fd, input, input_len, client_fd, deadline) : 0;
        if (r < 0)
                return r;

        for (;;) {
                uint64_t wake;
                ssize_t n;

                /* Output that never stops coming must not carry the exchange past its deadline. */
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIME;
                r = reply_room(&buf, len, &cap, max_reply + STREAM_FRAME_HEADER_MAX);
                if (r < 0)
                        return r;
                n = read(fd, buf + len, cap - len);
                if (n == 0) {
                        /* The runner closed before its reply's frame: it answered unframed, or died. */
                        if (len > 0 && buf[0] == '{')
                                break;
                        if (len > 0)
                                return -EBADMSG;
                        *ret_reply = NULL;
                        *ret_len = 0;
                        return 0;
                }
                if (n > 0) {
                        len += (size_t) n;
                        quiet_since = now_usec(CLOCK_MONOTONIC);
                        if (buf[0] == '{') {
                                if (len > max_reply)
                                        return -EMSGSIZE;
                                continue; /* unframed: read to the end */
                        }
                        r = stream_frames(buf, len, max_reply, listener, &used, ret_reply, ret_len);
                        if (r != 0)
                                return r < 0 ? r : 0;
                        if (used > 0) {
                                memmove(buf, buf + used, len - used);
                                len -= used;
                        }
                        continue;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                wake = quiet_since + idle_usec < deadline ? quiet_since + idle_usec : deadline;
                r = fd_wait(fd, POLLIN, client_fd, wake);
                if (r == -ETIME && wake < deadline) {
                        if (listener->idle(listener->userdata) < 0)
                                return -ECANCELED;
                        quiet_since = now_usec(CLOCK_MONOTONIC);
                        continue;
                }
                if (r < 0)
                        return r;
        }

        buf[len] = 0;
        *ret_reply = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}
