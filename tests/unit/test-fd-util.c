/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_write_all(void) {
        static char big[200000], back[sizeof(big)];
        int fd = memfd_create("test", MFD_CLOEXEC), pipefd[2];

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (char) (i * 7);
        tap_is_int(fd_write_all(fd, big, sizeof(big)), 0, "all of a large buffer is written");
        tap_is_int(fd_pread_exact(fd, back, sizeof(back), 0), 0, "and read back whole");
        tap_ok(memcmp(big, back, sizeof(big)) == 0, "byte for byte");
        tap_is_int(fd_write_all(fd, big, 0), 0, "nothing to write is not an error");
        (void) close(fd);

        tap_ok(pipe2(pipefd, O_CLOEXEC) == 0, "a pipe");
        (void) close(pipefd[0]);
        (void) signal(SIGPIPE, SIG_IGN);
        tap_is_int(fd_write_all(pipefd[1], "x", 1), -EPIPE, "a pipe nobody reads: -EPIPE");
        (void) close(pipefd[1]);
        tap_is_int(fd_write_all(-1, "x", 1), -EBADF, "a bad descriptor: -EBADF");
}

static void test_pread_exact(void) {
        char buf[16] = "";
        int fd = memfd_create("test", MFD_CLOEXEC);

        (void) fd_write_all(fd, "hello world", 11);
        tap_is_int(fd_pread_exact(fd, buf, 5, 6), 0, "a range inside the file");
        tap_is_str(buf, "world", "is the bytes at that offset");
        tap_is_int(fd_pread_exact(fd, buf, 6, 6), -EPROTO, "past the end of the file: -EPROTO");
        tap_is_int(fd_pread_exact(fd, buf, 0, 100), 0, "nothing to read is not an error");
        (void) close(fd);
        tap_is_int(fd_pread_exact(-1, buf, 1, 0), -EBADF, "a bad descriptor: -EBADF");
}

/* How many descriptors this process has open. */
static int open_fds(void) {
        int n = 0;

        for (int fd = 0; fd < 1024; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

/* fds descriptors (copies of a memfd) with a message of len bytes on a SOCK_SEQPACKET socket. */
static void send_fds(int sock, const char *msg, size_t len, int memfd, size_t fds) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 32)];
        } control = {};
        struct iovec iov = {.iov_base = (void *) msg, .iov_len = len};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = CMSG_SPACE(sizeof(int) * fds)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds);
        for (size_t i = 0; i < fds; i++)
                memcpy(CMSG_DATA(c) + i * sizeof(int), &memfd, sizeof(int));
        (void) sendmsg(sock, &mh, MSG_NOSIGNAL);
}

typedef struct ReceiveCase {
        const char *name;
        size_t len;     /* bytes sent */
        size_t fds;     /* descriptors sent with them */
        size_t room;    /* bytes the receiver has room for */
        bool want_fd;   /* the receiver asks for the descriptor */
        ssize_t result; /* what fd_receive_one() returns */
        int kept;       /* descriptors open in the receiver afterwards */
} ReceiveCase;

static const ReceiveCase receive_cases[] = {
        {"one descriptor with a message", 4, 1, 16, true, 4, 1},
        {"one descriptor nobody asked for", 4, 1, 16, false, 4, 0},
        {"two descriptors: the second is closed", 4, 2, 16, true, 4, 1},
        {"twelve descriptors: more than fit, all closed", 4, 12, 16, true, -EXFULL, 0},
        {"a truncated message: its descriptor is closed", 32, 1, 16, true, -EMSGSIZE, 0},
        {"an empty message: its descriptor is closed", 0, 1, 16, true, 0, 0},
        {"a message without a descriptor", 4, 0, 16, true, 4, 0},
};

static void test_receive_one(void) {
        static const char msg[32] = "abcdefghijklmnopqrstuvwxyz01234";
        int memfd = memfd_create("test", MFD_CLOEXEC);

        for (size_t i = 0; i < ELEMENTSOF(receive_cases); i++) {
                const ReceiveCase *t = &receive_cases[i];
                char buf[32];
                int sv[2], got = -2, before;
                ssize_t n;

                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                        return (void) tap_ok(false, "socketpair");
                before = open_fds();
                send_fds(sv[0], msg, t->len, memfd, t->fds);
                n = fd_receive_one(sv[1], buf, t->room, 0, t->want_fd ? &got : NULL);
                tap_is_int(n, t->result, "%s: returns %zd", t->name, t->result);
                tap_is_int(open_fds() - before, t->kept, "%s: %d descriptor(s) left open", t->name, t->kept);
                if (t->kept > 0)
                        tap_ok(got >= 0 && fcntl(got, F_GETFD) == FD_CLOEXEC, "%s: it is the caller's, close-on-exec", t->name);
                else if (t->want_fd && t->result >= 0)
                        tap_is_int(got, -1, "%s: *ret_fd is -1", t->name);
                if (got >= 0)
                        (void) close(got);
                (void) close(sv[0]);
                (void) close(sv[1]);
        }
        (void) close(memfd);
}

static void test_send_one(void) {
        int sv[2], memfd = memfd_create("test", MFD_CLOEXEC), got = -1;
        char buf[8] = "";

        (void) fd_write_all(memfd, "passed", 6);
        tap_ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "a socket pair");
        tap_is_int(fd_send_one(sv[0], "hi", 2, memfd, 0), 0, "a message with a descriptor is sent");
        tap_is_int(fd_receive_one(sv[1], buf, sizeof(buf), 0, &got), 2, "and received whole");
        tap_ok(got >= 0 && got != memfd, "with a descriptor of its own");
        tap_is_int(fd_pread_exact(got, buf, 6, 0), 0, "that reads");
        tap_ok(memcmp(buf, "passed", 6) == 0, "the file that was sent");
        tap_is_int(fd_send_one(sv[0], "x", 1, -1, 0), 0, "a message without one");
        tap_is_int(fd_receive_one(sv[1], buf, sizeof(buf), MSG_DONTWAIT, &got), 1, "is received");
        tap_is_int(got, -1, "with none");
        tap_is_int(fd_receive_one(sv[1], buf, sizeof(buf), MSG_DONTWAIT, &got), -EAGAIN, "nothing left: -EAGAIN");
        (void) close(sv[1]);
        tap_is_int(fd_send_one(sv[0], "x", 1, -1, 0), -EPIPE, "to a closed peer: -EPIPE, no signal");
        (void) close(sv[0]);
        (void) close(memfd);
}

static void test_read_all(void) {
        int p[2];
        char *buf = NULL;
        size_t len = 0;
        static char big[200000];

        /* What was written, whole and NUL-terminated, across several reads and a growing buffer. */
        memset(big, 'x', sizeof(big));
        tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0, "socketpair");
        if (fork() == 0) {
                close(p[0]);
                _exit(fd_write_all(p[1], big, sizeof(big)) < 0);
        }
        close(p[1]);
        tap_ok(fd_read_all(p[0], sizeof(big), -1, &buf, &len) == 0 && len == sizeof(big) && buf[len] == 0 &&
                       memcmp(buf, big, len) == 0,
               "fd_read_all: all of it, up to max");
        free(buf);
        buf = NULL;
        close(p[0]);
        (void) wait(NULL);

        /* One byte over max: -EFBIG, nothing returned. */
        tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0, "socketpair");
        tap_ok(fd_write_all(p[1], "12345", 5) == 0, "write");
        close(p[1]);
        tap_ok(fd_read_all(p[0], 4, -1, &buf, &len) == -EFBIG && !buf, "fd_read_all: past max, -EFBIG");
        close(p[0]);

        /* An empty stream: "" of length 0. */
        tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0, "socketpair");
        close(p[1]);
        tap_ok(fd_read_all(p[0], 4, -1, &buf, &len) == 0 && buf && len == 0 && buf[0] == 0, "fd_read_all: empty");
        free(buf);
        buf = NULL;
        close(p[0]);

        /* Non-blocking, the writer silent and still there: -ETIMEDOUT after the wait. */
        tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, p) == 0, "socketpair");
        tap_ok(fd_read_all(p[0], 4, 20, &buf, &len) == -ETIMEDOUT && !buf, "fd_read_all: a silent peer times out");
        close(p[0]);
        close(p[1]);
}

int main(void) {
        test_write_all();
        test_pread_exact();
        test_send_one();
        test_receive_one();
        test_read_all();
        return tap_done();
}
