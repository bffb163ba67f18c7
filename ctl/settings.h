/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxd's settings as sandboxctl finds them on the host: the environment, else the last
 * NAME=VALUE line of /etc/sandboxd/sandboxd.conf (what the services read through EnvironmentFile=,
 * parsed as lib/env-file.h does; $SANDBOXD_CONF names another file), else the default. */

#include <stddef.h>

/* The value of setting name, or NULL when nothing sets it; the file is read once. Fits
 * config_parse()'s getter, for settings checked as the services check them. */
const char *ctl_setting_get(const char *name);

/* The value of setting name into ret (size bytes); def when nothing sets it. */
void ctl_setting(const char *name, const char *def, char *ret, size_t size);

/* The settings file sandboxctl reads, for messages. */
const char *ctl_settings_file(void);
