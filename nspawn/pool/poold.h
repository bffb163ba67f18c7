/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

typedef struct Config Config;
typedef struct sqlite3 sqlite3;

/* Where the warm sandboxes' sockets live (the workers' user's only). */
#define POOL_DIR "/run/sandboxd/pool"

/* The pool manager process: keeps pool_target warm sandboxes ready, more (up to pool_max) while
 * requests have to wait, replaces idle ones after pool_ttl_s, and cleans up what a previous instance
 * left. wake_fd is readable when a worker claimed or missed a sandbox. Returns at SIGTERM. */
int poold_main(const Config *config, int wake_fd);

/* Destroys a sandbox of the pool: kills its unit (through the broker connection *broker), removes
 * its socket and its row. */
void poold_destroy(int *broker, sqlite3 *db, const char *sandbox_id, const char *socket, const char *why);
