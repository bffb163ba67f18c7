/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct Config Config;
struct signalfd_siginfo;

/* What each of sandboxd's daemons does first: its settings from the environment into *ret, and,
 * unless root_allowed (the broker), a refusal to run as root: the others handle what the workers'
 * user writes, or parse untrusted input. who names the daemon in the log. The settings file is read
 * too, as the reference for a reload (daemon_reload()). 0, or -errno (logged). */
int daemon_start(const char *who, bool root_allowed, Config *ret);

/* A daemon's reload (systemctl reload): its unit's ExecReload= runs "BINARY --reload $MAINPID",
 * which queues SIGHUP with a value of its own to the daemon and waits for the answer, SIGUSR1 with
 * the result. systemd counts the reload done when that command exits: once systemctl reload
 * returns, the daemon has applied the file, or failed to. */

/* For main(), first: with "--reload PID", asks PID to reload and returns the exit status; with no
 * argument, -1 (the daemon itself runs); anything else is a usage error, exit status 2. */
int daemon_reload_main(int argc, char *argv[]);

/* Whether si is a reload that daemon_reload_main() asks for; a plain SIGHUP is not. */
bool daemon_reload_asked(const struct signalfd_siginfo *si);

/* Reads the settings file again (lib/settings.h): its live settings into *running (NULL for a daemon
 * that uses none of them), the others that changed named in the journal and the status as waiting
 * for a restart. A file that does not
 * parse, or that sets a value config_parse() refuses, changes nothing. Then answers si when it
 * asked (daemon_reload_asked()). 0 or -errno (logged). */
int daemon_reload(const char *who, Config *running, const struct signalfd_siginfo *si);

/* Tells systemd the daemon's status: what (NULL: nothing), then which settings it runs with
 * (settings_status_format()), which sandboxctl status reads. */
void daemon_notify_status(const char *what);
