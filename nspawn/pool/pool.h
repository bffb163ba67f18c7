/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "nspawn/pool/pool-retire.h"

/* What the workers and the pool manager (poold.c) share of the warm pool and the sessions. The
 * pool manager destroys its machines and records its sessions' events on its loop
 * (poold-machines.c, poold_session_event()); these wait for the broker and sqlite, for the workers. */

typedef struct sqlite3 sqlite3;

/* Where the warm sandboxes' sockets live (the workers' user's only). */
#define POOL_DIR "/run/sandboxd/pool"

/* Destroys a machine of the pool: kills its unit (through the broker connection *broker), removes
 * its socket and its row, and counts it as retired for why. */
void pool_destroy(int *broker, sqlite3 *db, const char *machine_id, const char *socket, PoolRetire why);

/* Where a session's runner listens while its machine runs (fcgi/route-sessions.c), in POOL_DIR, which
 * outlives a restart of the service as the machines do. */
void session_socket_path(const char *session_id, char *buf, size_t size);

/* An event of a session's life: its sqlite row and its journal entry, with the request that made it
 * happen (NULL: the pool manager's own). */
void session_event(sqlite3 *db, const char *id, const char *event, const char *request_id, const char *detail);
