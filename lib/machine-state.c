/* SPDX-License-Identifier: MIT */
#include "lib/machine-state.h"
#include "lib/string-table.h"

static const char *const machine_state_table[_MACHINE_STATE_MAX] = {
        [MACHINE_STARTING] = "starting",
        [MACHINE_READY] = "ready",
        [MACHINE_CLAIMED] = "claimed",
};

DEFINE_STRING_TABLE(machine_state, MachineState)
