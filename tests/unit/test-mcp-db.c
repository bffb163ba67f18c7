/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <string.h>

#include "db/db.h"
#include "db/mcp-db.h"
#include "db/requests.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

#define SID "0123456789abcdef0123456789abcdef"

/* A session of a key and a version, found until its DELETE, and only then not. */
static void test_sessions(sqlite3 *db) {
        McpSession s = {};

        tap_is_int(db_mcp_session_create(db, SID, "team-a", "2025-06-18"), 0, "create");
        tap_is_int(db_mcp_session_create(db, SID, NULL, "2025-06-18"), -EEXIST, "an id is never made twice");
        tap_is_int(db_mcp_session_create(db, "ffff", NULL, "2025-11-25"), 0, "create one without a key");
        tap_is_int(db_mcp_session_use(db, SID, &s), 0, "found");
        tap_is_str(s.id, SID, "its id");
        tap_is_str(s.key_name, "team-a", "its key");
        tap_is_str(s.version, "2025-06-18", "its version");
        tap_is_int(db_mcp_session_use(db, "ffff", &s), 0, "the other found");
        tap_is_str(s.key_name, "", "made without a key: \"\"");
        tap_is_int(db_mcp_session_use(db, "nope", &s), -ENOENT, "an unknown id: -ENOENT");
        tap_is_int(db_mcp_session_end(db, SID), 0, "end");
        tap_is_int(db_mcp_session_use(db, SID, &s), -ENOENT, "ended: not found");
        tap_is_int(db_mcp_session_end(db, SID), -ENOENT, "nor ended twice");
        tap_is_int(db_mcp_session_end(db, "nope"), -ENOENT, "an unknown id cannot be ended");
}

/* A call in flight, cancelled from elsewhere: what it runs on is found, and its end says so. */
static void test_calls(sqlite3 *db) {
        McpCall c = {};

        tap_is_int(db_request_begin(db, "req1", "POST /mcp", "/mcp", 1), 0, "the call's request");
        tap_is_int(db_mcp_call_begin(db, "ffff", "7", "req1", "execute", NULL), 0, "a call begins");
        tap_is_int(db_mcp_call_begin(db, "ffff", "7", "req1", "execute", NULL), -EEXIST, "the same id twice in one session: -EEXIST");
        tap_is_int(db_mcp_call_begin(db, "eeee", "7", "req1", "execute", NULL), 0, "the same id in another session is another call");
        tap_is_int(db_mcp_call_cancel(db, "ffff", "8", &c), -ENOENT, "cancel an id not in flight: -ENOENT");
        tap_is_int(db_mcp_call_cancelled(db, "ffff", "7"), 0, "not cancelled yet");
        tap_is_int(db_mcp_call_cancelled(db, "ffff", "8"), -ENOENT, "an id not in flight: -ENOENT");
        tap_is_int(db_mcp_call_cancel(db, "ffff", "7", &c), 0, "cancel before it has a machine");
        tap_is_int(db_mcp_call_cancelled(db, "ffff", "7"), 1, "cancelled, as its run's listener finds");
        tap_is_int(db_mcp_call_cancelled(db, "eeee", "7"), 0, "the other session's call of the same id is not");
        tap_is_str(c.machine_id, "", "no machine yet");
        tap_is_int(db_request_sandbox(db, "req1", "sandbox-aaaaaaaaaaaa", "machine-bbbbbbbbbbbb", "python"), 0, "its request claims a machine");
        tap_is_int(db_mcp_call_cancel(db, "ffff", "7", &c), 0, "cancel again");
        tap_is_str(c.tool, "execute", "the tool");
        tap_is_str(c.machine_id, "machine-bbbbbbbbbbbb", "the machine, from the request's row");
        tap_is_int(db_mcp_call_end(db, "ffff", "7"), 1, "its end: it was cancelled");
        tap_is_int(db_mcp_call_end(db, "ffff", "7"), 0, "ended: nothing more to end");
        tap_is_int(db_mcp_call_end(db, "eeee", "7"), 0, "the other, not cancelled, ends as such");
        tap_is_int(db_mcp_call_begin(db, "ffff", "\"run\"", "req1", "session_run", "session-cccccccccccc"), 0, "a session run begins");
        tap_is_int(db_mcp_call_cancel(db, "ffff", "\"run\"", &c), 0, "cancelled");
        tap_is_str(c.session_id, "session-cccccccccccc", "its session");
        tap_is_int(db_mcp_call_end(db, "ffff", "\"run\""), 1, "its end: cancelled");
}

/* The request's row says what it was: its method and tool. */
static void test_record(sqlite3 *db) {
        RequestOutcome o = {.status = 200, .duration_ms = -1, .cpu_ms = -1, .memory_peak_bytes = -1, .mcp_method = "tools/call", .mcp_tool = "execute"};
        cleanup_stmt sqlite3_stmt *st = NULL;

        tap_is_int(db_request_begin(db, "req2", "POST /mcp", "/mcp", 1), 0, "a request");
        tap_is_int(db_request_finish(db, "req2", &o), 0, "finished");
        tap_is_int(db_prepare(db, &st, "SELECT mcp_method || ' ' || mcp_tool FROM requests WHERE request_id = 'req2'", ""), 0, "read back");
        tap_is_int(db_step_row(st), 1, "its row");
        tap_is_str((const char *) sqlite3_column_text(st, 0), "tools/call execute", "its method and tool");
}

/* Sessions unused for the retention's days go, calls as old too; recent ones stay. */
static void test_prune(sqlite3 *db) {
        McpSession s;
        McpCall c;

        tap_is_int(db_mcp_session_create(db, "old", NULL, "2025-11-25"), 0, "an old session");
        tap_is_int(db_run(db, "UPDATE mcp_sessions SET last_used = last_used - 40 * 86400 WHERE mcp_session_id = 'old'", ""), 1, "made old");
        tap_is_int(db_mcp_call_begin(db, "old", "1", "req1", "execute", NULL), 0, "a call of a worker that died");
        tap_is_int(db_run(db, "UPDATE mcp_calls SET started_at = started_at - 40 * 86400 WHERE mcp_session_id = 'old'", ""), 1, "made old");
        tap_is_int(db_mcp_prune(db, 30), 1, "pruned: the old session only");
        tap_is_int(db_mcp_session_use(db, "old", &s), -ENOENT, "the old session is gone");
        tap_is_int(db_mcp_call_cancel(db, "old", "1", &c), -ENOENT, "and its call");
        tap_is_int(db_mcp_session_use(db, "ffff", &s), 0, "a recent one stays");
}

int main(void) {
        sqlite3 *db = NULL;

        if (!tap_is_int(db_open(":memory:", &db), 0, "db_open(\":memory:\")") || !db)
                return tap_done();
        test_sessions(db);
        test_calls(db);
        test_record(db);
        test_prune(db);
        db = db_close(db);
        return tap_done();
}
