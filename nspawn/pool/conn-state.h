/* SPDX-License-Identifier: MIT */
#pragma once

/* What a worker's connection to the pool manager is waiting for or holding: one enum, one table of
 * words (lib/string-table.h), for the journal. Private to sandboxd-poold. */

#include <errno.h>

typedef enum ConnState {
        CONN_IDLE,
        CONN_CLAIM_WAITING,
        CONN_CLAIM_HELD,
        CONN_TURN_WAITING,
        CONN_TURN_HELD,
        CONN_WATCHING, /* sandboxd-member's: told the counts as they change */
        _CONN_STATE_MAX,
        _CONN_STATE_INVALID = -EINVAL,
} ConnState;

/* The word of state, NULL for none. Pure. */
const char *conn_state_to_string(ConnState state);
/* The state a word names, _CONN_STATE_INVALID for none (NULL too). Pure. */
ConnState conn_state_from_string(const char *s);
