/* SPDX-License-Identifier: MIT */
#pragma once

#include <signal.h>

struct signalfd_siginfo;

/* How sandboxd's daemons take signals: blocked, and read from a signalfd in their poll loop, so that
 * a signal between a check and poll() cannot be missed. Blocks SIGTERM, SIGINT, SIGHUP (a reload,
 * lib/daemon.h) and, with with_sigchld, SIGCHLD; returns the signalfd (close-on-exec,
 * non-blocking), or -errno. *ret_mask (if not NULL) is what was blocked, for a child to unblock. */
int signal_fd_open(int with_sigchld, sigset_t *ret_mask);

/* The next signal queued on a signalfd: its number, 0 if none is queued, or -errno. */
int signal_fd_read(int fd);

/* The same, with what the kernel says of it (its sender, its value) into *ret. */
int signal_fd_read_info(int fd, struct signalfd_siginfo *ret);
