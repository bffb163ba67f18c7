/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxd.conf as the services apply it. systemd reads it into a service's environment when the
 * service starts (EnvironmentFile=), and only then: on reload (systemctl reload sandboxd.target)
 * the service reads it again itself, applies the settings that can change while it runs, and says
 * which others wait for a restart. Each service tells systemd which file it last read (its
 * modification time) in its status text, so that sandboxctl status can tell a running service
 * that has not read the file since it changed. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct EnvVar EnvVar;

#define SETTINGS_FILE "/etc/sandboxd/sandboxd.conf"

/* Which version of the file a service read: its modification time; {0, 0} for no file. */
typedef struct SettingsStamp {
        int64_t sec;
        long nsec;
} SettingsStamp;

/* The file's assignments (lib/env-file.h) and its stamp. */
typedef struct SettingsFile {
        EnvVar *vars;
        size_t n;
        SettingsStamp stamp;
} SettingsFile;

/* path read into *ret (the caller's: settings_file_done()): 0, also for a missing file (nothing
 * set, as for EnvironmentFile=-), or -errno: -EFBIG for one over a megabyte, -EINVAL for one with a
 * NUL byte. */
int settings_file_read(const char *path, SettingsFile *ret);
void settings_file_done(SettingsFile *f);

/* Whether setting name applies on reload; every other one needs a restart. Pure. */
bool settings_is_live(const char *name);

/* The value a restart would give setting name: the file's (now), else, when the file did not set
 * it at start, the environment's (env_value, from the unit's Environment=). EnvironmentFile=
 * overrides Environment=, so a name the file set at start tells nothing of the unit's own. Pure. */
const char *settings_restart_value(const SettingsFile *start, const SettingsFile *now, const char *name, const char *env_value);

/* The settings of a service that started with the file start (and the environment env) and last
 * applied the live ones of applied, against the file now: the names that differ (each once, in
 * the files' order, space-separated into ret of size bytes), of the live settings when live, else
 * of the others. How many, or -ENOBUFS. Pure given env. */
int settings_changed(const SettingsFile *start, const SettingsFile *applied, const SettingsFile *now, const char *(*env)(const char *name),
                     bool live, char *ret, size_t size);

/* A service's status text's part on its settings: "settings of SEC.NSEC", then "; restart needed
 * for NAMES" when pending names some. 0 or -ENOBUFS. Pure. */
int settings_status_format(const SettingsStamp *stamp, const char *pending, char *ret, size_t size);

/* The stamp and the pending names ("" for none, into ret_pending of size bytes, cut to fit) of a
 * status text that settings_status_format() made part of; -ENOENT when it has none. Pure. */
int settings_status_parse(const char *text, SettingsStamp *ret_stamp, char *ret_pending, size_t size);
