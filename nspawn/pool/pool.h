/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "nspawn/pool/pool-retire.h"

/* What the workers and the pool manager (poold.c) both do with the warm pool. */

typedef struct sqlite3 sqlite3;

/* Where the warm sandboxes' sockets live (the workers' user's only), and the pool manager's wake-up
 * socket: a datagram to it says a worker claimed a sandbox, or found none. */
#define POOL_DIR "/run/sandboxd/pool"
#define POOL_WAKE_SOCKET POOL_DIR "/wake.sock"

/* Destroys a machine of the pool: kills its unit (through the broker connection *broker), removes
 * its socket and its row, and counts it as retired for why. */
void pool_destroy(int *broker, sqlite3 *db, const char *machine_id, const char *socket, PoolRetire why);

/* After an execution: the machine is ready again, unless retire (why it may not serve again) is
 * set, or it cannot be put back; then it is destroyed, and true returned: the pool manager is to
 * start a replacement. */
bool pool_put_back(int *broker, sqlite3 *db, const char *machine_id, const char *socket, PoolRetire retire, const char *prepared);

/* Where a session's runner listens while its machine runs (fcgi/route-sessions.c), in POOL_DIR, which
 * outlives a restart of the service as the machines do. */
void session_socket_path(const char *session_id, char *buf, size_t size);
