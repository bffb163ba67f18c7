/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Config Config;
typedef struct Inflight Inflight;
typedef struct LiveSettings LiveSettings;

/* A worker process's life (fcgi/worker.c): accepts on listen_fd and serves each request on a thread
 * of its own, counting them in inflight as worker slot, until the master's SIGTERM; then the
 * requests in hand are answered. Each request takes config with live's values (a reload's). 0, or a negative errno when it could not serve. */
int worker_main(const Config *config, int listen_fd, unsigned slot, Inflight *inflight, const LiveSettings *live);
