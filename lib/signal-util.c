/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lib/macro.h"
#include "lib/signal-util.h"

int signal_fd_open(int with_sigchld, sigset_t *ret_mask) {
        sigset_t mask;
        int fd;

        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        (void) sigaddset(&mask, SIGHUP);
        if (with_sigchld)
                (void) sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return negative_errno();
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (ret_mask)
                *ret_mask = mask;
        return fd;
}

int signal_fd_read_info(int fd, struct signalfd_siginfo *ret) {
        ssize_t n = read(fd, ret, sizeof(*ret));

        if (n < 0)
                return errno == EAGAIN ? 0 : negative_errno();
        return n == (ssize_t) sizeof(*ret) ? (int) ret->ssi_signo : -EIO;
}

int signal_fd_read(int fd) {
        struct signalfd_siginfo si;

        return signal_fd_read_info(fd, &si);
}
