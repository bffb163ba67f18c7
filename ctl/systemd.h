/* SPDX-License-Identifier: MIT */
#pragma once

/* The systemd that runs sandboxd, as sandboxctl reaches it: the host's own when it is PID 1, else
 * the private instance that sandboxd-host booted in namespaces of its own. That instance has its
 * own /run (its journal's runtime files, its D-Bus socket) in its own mount namespace; sandboxctl
 * reaches them through /proc/PID/root, which is that namespace's root as the kernel resolves it,
 * without entering the namespace or mounting anything. */

#include <stddef.h>

typedef struct sd_bus sd_bus;
typedef struct sd_journal sd_journal;
typedef struct Error Error;

/* Into ret: "" when the host's PID 1 is systemd, "/proc/PID/root" when sandboxd-host's private
 * instance runs (its PID read from sandboxd-host's state, $SANDBOXD_HOST_STATE or
 * /var/lib/sandboxd/private-systemd, and checked to be systemd). -ENOENT when neither. */
int ctl_systemd_root(char *ret, size_t size);

/* The journal sandboxd writes to: the private instance's (under its root: its /run/log/journal
 * and /var/log/journal), or the local machine's. With no systemd running at all, the local files
 * (where a private instance also persisted what it wrote). */
int ctl_journal_open(sd_journal **ret, Error *reterr);

/* A connection to the system bus of the systemd that runs sandboxd; -errno with words when none
 * runs. sandboxctl only ever reads through it. */
int ctl_bus_open(sd_bus **ret, Error *reterr);

/* unit's string property of interface (e.g. "org.freedesktop.systemd1.Unit", "ActiveState") into
 * *ret (the caller's to free); -errno with words. */
int ctl_unit_property(sd_bus *bus, const char *unit, const char *interface, const char *property, char **ret, Error *reterr);
