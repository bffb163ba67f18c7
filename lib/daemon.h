/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

typedef struct Config Config;

/* What each of sandboxd's daemons does first: its settings from the environment into *ret, and,
 * unless root_allowed (the broker), a refusal to run as root: the others handle what the workers'
 * user writes, or parse untrusted input. who names the daemon in the log. 0, or -errno (logged). */
int daemon_start(const char *who, bool root_allowed, Config *ret);
