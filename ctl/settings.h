/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxd's settings as sandboxctl finds them on the host: the environment, else the last
 * NAME=VALUE line of /etc/sandboxd/sandboxd.conf (what the services read through EnvironmentFile=;
 * $SANDBOXD_CONF names another file), else the default. */

#include <stddef.h>

/* The value of setting name into ret (size bytes); def when nothing sets it. */
void ctl_setting(const char *name, const char *def, char *ret, size_t size);

/* Parses one line of such a file: when it sets name, copies its value (without one pair of
 * surrounding double or single quotes) into ret and returns 1; else 0. Pure. */
int ctl_setting_line(const char *line, const char *name, char *ret, size_t size);
