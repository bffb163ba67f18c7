/* SPDX-License-Identifier: MIT */
#pragma once

#include "lib/error.h"

/* One command on HAProxy's runtime API (its stats socket at path, level admin): its output, which
 * HAProxy ends by closing the connection, into *ret (caller frees; NUL-terminated). One connection
 * per command: a command never runs on another's connection, and no ';' joins two. */
int haproxy_cli(const char *path, const char *command, char **ret, Error *err);
