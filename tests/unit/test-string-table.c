/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>

#include "lib/machine-state.h"
#include "lib/macro.h"
#include "lib/session-state.h"
#include "lib/string-table.h"
#include "nspawn/pool/conn-state.h"
#include "tests/unit/tap.h"

/* Every table's words, in its enum's order: what the database, the API and the journal say. */
static void test_words(void) {
        static const struct {
                const char *table;
                int value;
                const char *word;
        } cases[] = {
                {"session", SESSION_ACTIVE, "active"},
                {"session", SESSION_PAUSING, "pausing"},
                {"session", SESSION_PAUSED, "paused"},
                {"session", SESSION_DELETED, "deleted"},
                {"machine", MACHINE_STARTING, "starting"},
                {"machine", MACHINE_READY, "ready"},
                {"machine", MACHINE_CLAIMED, "claimed"},
                {"conn", CONN_IDLE, "idle"},
                {"conn", CONN_CLAIM_WAITING, "claim-waiting"},
                {"conn", CONN_CLAIM_HELD, "claim-held"},
                {"conn", CONN_TURN_WAITING, "turn-waiting"},
                {"conn", CONN_TURN_HELD, "turn-held"},
                {"conn", CONN_WATCHING, "watching"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *word;
                int back;

                if (cases[i].table[0] == 's') {
                        word = session_state_to_string((SessionState) cases[i].value);
                        back = (int) session_state_from_string(cases[i].word);
                } else if (cases[i].table[0] == 'm') {
                        word = machine_state_to_string((MachineState) cases[i].value);
                        back = (int) machine_state_from_string(cases[i].word);
                } else {
                        word = conn_state_to_string((ConnState) cases[i].value);
                        back = (int) conn_state_from_string(cases[i].word);
                }
                tap_is_str(word ? word : "(null)", cases[i].word, "%s state %d is '%s'", cases[i].table, cases[i].value, cases[i].word);
                tap_is_int(back, cases[i].value, "%s '%s' is state %d", cases[i].table, cases[i].word, cases[i].value);
        }
}

/* Words no table holds: refused, never taken for the first state. */
static void test_refused(void) {
        static const char *const words[] = {NULL, "", "Active", "active ", " active", "activ", "activee", "PAUSED", "paus", "ready", "1", "-1"};

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                tap_is_int(session_state_from_string(words[i]), _SESSION_STATE_INVALID, "session: '%s' is no state", words[i] ? words[i] : "(null)");
        tap_is_int(machine_state_from_string("active"), _MACHINE_STATE_INVALID, "machine: a session's word is no machine's");
        tap_is_int(machine_state_from_string(NULL), _MACHINE_STATE_INVALID, "machine: NULL is no state");
        tap_is_int(conn_state_from_string("claim_held"), _CONN_STATE_INVALID, "conn: an underscore is not a dash");
}

/* Values outside an enum have no word. */
static void test_out_of_range(void) {
        static const int values[] = {-1, -EINVAL, 4, 100, 1 << 30};

        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                tap_ok(session_state_to_string((SessionState) values[i]) == NULL, "session: %d has no word", values[i]);
        tap_ok(machine_state_to_string(_MACHINE_STATE_MAX) == NULL, "machine: the end has no word");
        tap_ok(conn_state_to_string(_CONN_STATE_MAX) == NULL, "conn: the end has no word");
        tap_ok(conn_state_to_string(_CONN_STATE_INVALID) == NULL, "conn: invalid has no word");
}

/* The lookup itself: a table with a hole skips it. */
static void test_find(void) {
        static const char *const table[] = {"a", NULL, "c"};
        static const struct {
                const char *key;
                int want;
        } cases[] = {
                {"a", 0},
                {"c", 2},
                {"b", -EINVAL},
                {"", -EINVAL},
                {NULL, -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_int(string_table_find(table, ELEMENTSOF(table), cases[i].key), cases[i].want, "find '%s'", cases[i].key ? cases[i].key : "(null)");
        tap_is_int(string_table_find(table, 0, "a"), -EINVAL, "an empty table holds nothing");
}

int main(void) {
        test_words();
        test_refused();
        test_out_of_range();
        test_find();
        return tap_done();
}
