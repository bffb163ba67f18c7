/* SPDX-License-Identifier: MIT */
#include "lib/session-state.h"
#include "lib/string-table.h"

static const char *const session_state_table[_SESSION_STATE_MAX] = {
        [SESSION_ACTIVE] = "active",
        [SESSION_PAUSING] = "pausing",
        [SESSION_PAUSED] = "paused",
        [SESSION_DELETED] = "deleted",
};

DEFINE_STRING_TABLE(session_state, SessionState)
