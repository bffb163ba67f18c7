/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* A daemon's one listening socket: the one systemd passes it (its .socket unit), or, without
 * socket activation (development), one of its own made as that unit makes it: an AF_UNIX socket of
 * type (SOCK_STREAM or SOCK_SEQPACKET, with SOCK_NONBLOCK if the daemon wants it so) at path, with
 * mode and backlog. who names the daemon in the log. The descriptor, or -errno (logged). */
int listen_unix(const char *who, const char *path, int type, mode_t mode, int backlog);
