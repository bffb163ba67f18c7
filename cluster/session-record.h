/* SPDX-License-Identifier: MIT */
#pragma once

/* A member's sessions as the cluster sees them (README, "Several hosts"): in etcd under
 * SESSIONS_PREFIX<member>, under the member's lease, one JSON array of db/sessions.h's Session rows.
 * The member writes it when its sessions change (at most every 200 ms); every other member's
 * mirror keeps it in sqlite, whence GET /v1/sessions lists the key's sessions on every member. It
 * goes with the member's lease: a member that died lists none until it is back. */

#include <stddef.h>

#include "db/sessions.h"

#define SESSIONS_PREFIX "/sandboxd/sessions/"

/* The rows as JSON (caller frees); NULL on out of memory. Pure. */
char *session_record_format(const Session *s, size_t n);

/* json into *ret (malloc'd, the caller's) and *ret_n: 0, or -EBADMSG for anything but a list of
 * whole, valid rows (ids of session-MEMBER-… form, key names plain). Pure. */
int session_record_parse(const char *json, Session **ret, size_t *ret_n);
