/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdatomic.h>

#include "fcgi/route.h"

/* Requests in flight across every worker process, bounded by class.
 *
 * Work (an execution, a tool call, a session's operation) may wait a long time, for a machine or for
 * the code; control (the pool's and the service's state, listings, refusals) never waits for
 * anything but sqlite. Each class has a bound of its own, so that no amount of work can take the
 * places control is answered from. The counts live in one shared page that the master maps before
 * it forks: a worker takes a place before it starts a request's thread and gives it back when the
 * request is answered; when a worker dies, the master gives back what it held. */

#define INFLIGHT_WORKERS_MAX 256
/* Control requests in flight at once across the workers: each answers within milliseconds. */
#define INFLIGHT_CONTROL_MAX 256

typedef enum Load {
        LOAD_WORK,
        LOAD_CONTROL,
        _LOAD_MAX,
} Load;

typedef struct Inflight {
        atomic_int total[_LOAD_MAX];
        atomic_int by_worker[INFLIGHT_WORKERS_MAX][_LOAD_MAX];
} Inflight;

/* The class of a request, by its method, its path (decoded) and its raw path (REQUEST_URI up to its
 * query). Pure. */
Load inflight_load(const char *method, const char *path, const char *raw_path);

/* The shared page, zeroed: NULL on failure (errno set). */
Inflight *inflight_new(void);

/* A place of class load for worker slot, if fewer than max are taken: 0, or -EBUSY. */
int inflight_take(Inflight *f, unsigned slot, Load load, unsigned max);
void inflight_give_back(Inflight *f, unsigned slot, Load load);

/* Everything worker slot held, given back (the master's, once the worker is dead). */
void inflight_release_worker(Inflight *f, unsigned slot);

/* How many are taken now. */
unsigned inflight_count(Inflight *f, Load load);
