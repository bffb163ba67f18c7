/* SPDX-License-Identifier: MIT */
#pragma once

/* A warm machine's state, as the pool manager keeps it and the pool table stores it
 * (db/schema.sql): one enum, one table of words (lib/string-table.h). */

#include <errno.h>

typedef enum MachineState {
        MACHINE_STARTING, /* its unit started (or asked for), its runner's greeting awaited */
        MACHINE_READY,    /* idle, handed to the next claim */
        MACHINE_CLAIMED,  /* a worker's */
        _MACHINE_STATE_MAX,
        _MACHINE_STATE_INVALID = -EINVAL,
} MachineState;

/* The word of state, NULL for none. Pure. */
const char *machine_state_to_string(MachineState state);
/* The state a word names, _MACHINE_STATE_INVALID for none (NULL too). Pure. */
MachineState machine_state_from_string(const char *s);
