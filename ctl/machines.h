/* SPDX-License-Identifier: MIT */
#pragma once

/* The machines sandboxd runs, which the API does not list: the units of its machines (the warm
 * pool's machine-*, the sessions' session-*, the tool calls' tool-*) as the systemd that runs them
 * has them, read over D-Bus, with what the pool manager records of its own machines in sqlite
 * (state, the language the next sandbox is made ready for, executions served). Read only. */

#include <stddef.h>
#include <stdint.h>

typedef struct Error Error;

typedef struct Machine {
        char id[64];         /* the unit's name without ".service" */
        char kind[8];        /* "pool", "session" or "tool" */
        char active[16];     /* systemd's ActiveState: active, activating, deactivating, failed… */
        char sub[16];        /* and SubState: running, start… */
        char state[16];      /* the pool's record: starting, ready, claimed; "" when it has none */
        char prepared[16];   /* the pool's record: python, node, bash; "" when it has none */
        int64_t executions;  /* the pool's record: executions served; -1 when it has none */
        uint64_t since_usec; /* when the unit became active (wall clock, µs); 0 when unknown */
        uint64_t memory;     /* bytes now; UINT64_MAX when unknown */
        uint64_t cpu_usec;   /* CPU time used so far; UINT64_MAX when unknown */
        uint64_t tasks;      /* processes and threads now; UINT64_MAX when unknown */
} Machine;

/* Every such unit loaded, in name order, into a new array *ret (free()) of *ret_n. Without the
 * database (not readable, no pool table) the pool's fields stay unknown: *ret_pool_read is then 0.
 * -errno with words in *reterr when systemd cannot be asked. */
int machines_list(Machine **ret, size_t *ret_n, int *ret_pool_read, Error *reterr);
