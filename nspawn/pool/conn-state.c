/* SPDX-License-Identifier: MIT */
#include "nspawn/pool/conn-state.h"
#include "lib/string-table.h"

static const char *const conn_state_table[_CONN_STATE_MAX] = {
        [CONN_IDLE] = "idle",
        [CONN_CLAIM_WAITING] = "claim-waiting",
        [CONN_CLAIM_HELD] = "claim-held",
        [CONN_TURN_WAITING] = "turn-waiting",
        [CONN_TURN_HELD] = "turn-held",
        [CONN_WATCHING] = "watching",
};

DEFINE_STRING_TABLE(conn_state, ConnState)
