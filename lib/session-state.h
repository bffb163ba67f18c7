/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's state, as the sessions table stores it (db/schema.sql) and as the API and the
 * cluster's records show it: one enum, one table of words (lib/string-table.h). */

#include <errno.h>
#include <stdbool.h>

typedef enum SessionState {
        SESSION_ACTIVE,  /* its machine runs, or starts at its next operation */
        SESSION_PAUSING, /* its machine being stopped; the API shows it paused */
        SESSION_PAUSED,  /* its disk kept, no machine */
        SESSION_DELETED, /* gone but for its records */
        _SESSION_STATE_MAX,
        _SESSION_STATE_INVALID = -EINVAL,
} SessionState;

/* The word of state, NULL for none. Pure. */
const char *session_state_to_string(SessionState state);
/* The state a word names, _SESSION_STATE_INVALID for none (NULL too). Pure. */
SessionState session_state_from_string(const char *s);
/* Whether a session in state is one the host still holds (active, pausing or paused): what a
 * member's record of its sessions may carry. Pure. */
static inline bool session_state_live(SessionState state) {
        return state >= 0 && state < _SESSION_STATE_MAX && state != SESSION_DELETED;
}
