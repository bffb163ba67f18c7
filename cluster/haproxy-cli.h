/* SPDX-License-Identifier: MIT */
#pragma once

#include "lib/error.h"

/* One command on HAProxy's runtime API (its stats socket at path, level admin): its output, which
 * HAProxy ends by closing the connection, into *ret (caller frees; NUL-terminated). One connection
 * per command: a command never runs on another's connection, and no ';' joins two. */
int haproxy_cli(const char *path, const char *command, char **ret, Error *err);

/* A server as a line of "show servers state BACKEND" gives it (HAProxy 2.x, the state file's
 * format 1, doc/management.txt): what the watcher compares etcd's registry with. */
typedef struct HaproxyServerState {
        char name[64];
        char addr[64];
        unsigned port;
        char agent_addr[64];
        unsigned agent_port;
} HaproxyServerState;

/* One line of "show servers state" into *ret: 0, -ENOENT for a line that names no server (the
 * format's version, the header, a blank line), -EBADMSG for one that does not parse. Pure. */
int haproxy_server_state_parse(const char *line, HaproxyServerState *ret);
