/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* For the pool manager: claims (-> pausing) an active session whose API key has been revoked, with
 * nothing queued (a run in progress ends first; the key's next request is refused anyway): 0 and its
 * id, -ENOENT when there is none. It is then paused, and deleted after the usual retention. */
int db_session_claim_revoked(sqlite3 *db, char *ret_id, size_t size);

/* The file next to the database (db_path) whose change says a key was revoked: sandboxctl touches
 * it, the pool manager watches it (inotify), and then pauses the key's sessions at once. A file
 * rather than a socket: sandboxctl may run outside the mount namespace the services' /run is in,
 * but the state directory is the same everywhere. Into buf (size bytes); -ENAMETOOLONG. Pure. */
int db_revoke_stamp_path(const char *db_path, char *buf, size_t size);

/* 1 when the session's API key has been revoked, 0 when not (or it has none), -errno. */
int db_session_revoked(sqlite3 *db, const char *id);
