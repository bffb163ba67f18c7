/* SPDX-License-Identifier: MIT */
/* The read and write loops, and the descriptor passing, that the broker, its clients and the
 * runner all need. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/alloc-util.h"
#include "lib/fd-util.h"
#include "lib/macro.h"

int fd_write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int fd_pread_exact(int fd, void *buf, size_t len, off_t offset) {
        char *p = buf;

        while (len > 0) {
                ssize_t n = pread(fd, p, len, offset);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EPROTO;
                p += n;
                len -= (size_t) n;
                offset += n;
        }
        return 0;
}

int fd_send_one(int sock, const void *msg, size_t size, int fd, int flags) {
        struct iovec iov = {.iov_base = (void *) msg, .iov_len = size};
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        ssize_t n;

        if (fd >= 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control.buf);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
        if (n < 0)
                return negative_errno();
        return n == (ssize_t) size ? 0 : -EIO;
}

/* Closes every descriptor that came with mh, but hands the first to *keep if keep is not NULL. */
static void take_fds(struct msghdr *mh, int *keep) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int got;

                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (keep && *keep < 0)
                                *keep = got;
                        else
                                (void) close(got);
                }
        }
}

ssize_t fd_receive_one(int sock, void *buf, size_t size, int flags, int *ret_fd) {
        struct iovec iov = {.iov_base = buf, .iov_len = size};
        /* Room for more than one: a peer that sends several gets them all closed here rather than
         * left to the kernel's truncation, and the message is refused. */
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 8)];
        } control = {};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control.buf)};
        cleanup_close int fd = -1;
        ssize_t n;

        do
                n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();

        take_fds(&mh, &fd);
        if (mh.msg_flags & MSG_CTRUNC)
                return -EXFULL;
        if (mh.msg_flags & MSG_TRUNC)
                return -EMSGSIZE;
        if (ret_fd && n > 0)
                *ret_fd = TAKE_FD(fd);
        else if (ret_fd)
                *ret_fd = -1;
        return n;
}

int fd_read_all(int fd, size_t max, int timeout_ms, char **ret, size_t *ret_len) {
        cleanup_free char *buf = NULL;
        size_t cap = 0, n = 0;
        int r;

        for (;;) {
                ssize_t k;

                if (cap - n < 2) {
                        r = ARRAY_GROW(buf, cap, cap ? cap : 1, 65536);
                        if (r < 0)
                                return r;
                }
                k = read(fd, buf + n, cap - n - 1);
                if (k < 0 && errno == EAGAIN) {
                        struct pollfd p = {.fd = fd, .events = POLLIN};

                        r = poll(&p, 1, timeout_ms);
                        if (r < 0 && errno != EINTR)
                                return -errno;
                        if (r == 0)
                                return -ETIMEDOUT;
                        continue;
                }
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > max)
                        return -EFBIG;
        }
        if (!buf && !(buf = calloc(1, 1)))
                return -ENOMEM;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}
