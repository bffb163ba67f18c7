/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include <systemd/sd-bus.h>

#include "nspawn/broker/broker-proto.h"

/* The units whose list (ListUnitsByPatterns, sandbox_list_message()) session_list_memfd() reads:
 * the sessions' machines and their disks' mounts. NULL-terminated. */
extern const char *const session_list_patterns[];

/* Every session the host holds anything of (broker-proto.h, BROKER_SESSION_LIST): its machine unit
 * and disk mount as systemd listed them in units (the reply to session_list_patterns' list), its
 * disk image in session_dir, its UID range in the reservations of uid_dir_fd; into a new memfd
 * (*ret_fd, the caller's) of *ret_n records, for the reply. 0 or -errno. */
int session_list_memfd(sd_bus_message *units, const char *session_dir, int uid_dir_fd, uint32_t *ret_n, int *ret_fd);

/* Gives up the ranges of machines (not sessions) in uid_dir_fd whose units are gone: what a unit that
 * never ran its ExecStopPost= (its systemd went down with it) left. For the broker's start. */
void session_list_release_stale_ranges(sd_bus *bus, int uid_dir_fd);

/* Asks the pool manager, if it is up, to sweep now (SIGHUP to sandboxd-poold.service): a broker that
 * starts again may have died mid-operation and left what no row owns. */
void session_list_ask_sweep(sd_bus *bus);
