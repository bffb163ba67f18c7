/* SPDX-License-Identifier: MIT */
/* A revoked key's active sessions are claimed for pausing, one at a time, and nothing else is: not a
 * session of a key in force, nor one made without a key, nor one with a run queued. */
#include <errno.h>
#include <string.h>

#include "db/db.h"
#include "db/keys.h"
#include "db/session-revoke.h"
#include "db/sessions.h"
#include "tests/unit/tap.h"

static void add_key(sqlite3 *db, const char *name, const char *hash) {
        ApiKey k = {};

        (void) snprintf(k.name, sizeof(k.name), "%s", name);
        (void) snprintf(k.token_sha256, sizeof(k.token_sha256), "%s", hash);
        tap_is_int(db_key_add(db, &k), 0, "add key %s", name);
}

static const char *state_of(sqlite3 *db, const char *id) {
        static Session s;

        return db_session_get(db, id, &s) == 0 ? s.state : "gone";
}

int main(void) {
        sqlite3 *db = NULL;
        char id[64] = "";
        int64_t ticket = 0;

        if (!tap_is_int(db_open(":memory:", &db), 0, "a database"))
                return tap_done();
        add_key(db, "alpha", "aa");
        add_key(db, "beta", "bb");
        tap_is_int(db_session_create(db, "session-aaaaaaaaaaaa", 60, 10, "alpha"), 0, "alpha's first session");
        tap_is_int(db_session_create(db, "session-bbbbbbbbbbbb", 60, 10, "alpha"), 0, "alpha's second session");
        tap_is_int(db_session_create(db, "session-cccccccccccc", 60, 10, "beta"), 0, "beta's session");
        tap_is_int(db_session_create(db, "session-dddddddddddd", 60, 10, NULL), 0, "a session made without a key");

        /* Positive control first: nothing is claimed while every key is in force. */
        tap_is_int(db_session_claim_revoked(db, id, sizeof(id)), -ENOENT, "no key revoked: nothing claimed");

        tap_is_int(db_key_revoke(db, "alpha"), 0, "revoke alpha");
        tap_is_int(db_session_enqueue(db, "session-bbbbbbbbbbbb", 42, &ticket), 0, "a run queued on alpha's second session");
        tap_is_int(db_session_claim_revoked(db, id, sizeof(id)), 0, "a revoked key's session is claimed");
        tap_is_str(id, "session-aaaaaaaaaaaa", "the one with nothing queued");
        tap_is_str(state_of(db, "session-aaaaaaaaaaaa"), "pausing", "it is being paused");
        tap_is_int(db_session_claim_revoked(db, id, sizeof(id)), -ENOENT, "one with a run queued waits for it");
        tap_is_int(db_session_dequeue(db, ticket), 0, "the run is over");
        tap_ok(db_session_claim_revoked(db, id, sizeof(id)) == 0 && strcmp(id, "session-bbbbbbbbbbbb") == 0, "then it is claimed too");
        tap_is_int(db_session_claim_revoked(db, id, sizeof(id)), -ENOENT, "nothing else is claimed");
        tap_is_str(state_of(db, "session-cccccccccccc"), "active", "a key in force keeps its session");
        tap_is_str(state_of(db, "session-dddddddddddd"), "active", "a session made without a key stays");
        db = db_close(db);
        return tap_done();
}
