/* SPDX-License-Identifier: MIT */
/* A revoked key's sessions end: the pool manager pauses them (db/session-revoke.h). */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "db/session-revoke.h"
#include "lib/macro.h"

int db_session_claim_revoked(sqlite3 *db, char *ret_id, size_t size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st,
                           "UPDATE sessions SET state = 'pausing' WHERE session_id = (SELECT session_id FROM sessions s "
                           "JOIN api_keys k ON k.name = s.key_name WHERE s.state = 'active' AND k.revoked_at IS NOT NULL "
                           "AND NOT EXISTS (SELECT 1 FROM session_queue q WHERE q.session_id = s.session_id) LIMIT 1) "
                           "RETURNING session_id",
                           "");

        if (r >= 0)
                r = db_step_one(st);
        if (r < 0)
                return r;
        (void) snprintf(ret_id, size, "%s", (const char *) sqlite3_column_text(st, 0));
        return 0;
}

int db_revoke_stamp_path(const char *db_path, char *buf, size_t size) {
        const char *slash = strrchr(db_path, '/');
        int dir = slash ? (int) (slash - db_path) : 1;

        if ((size_t) snprintf(buf, size, "%.*s/keys-revoked", dir, slash ? db_path : ".") >= size)
                return -ENAMETOOLONG;
        return 0;
}

int db_session_revoked(sqlite3 *db, const char *id) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = db_prepare(db, &st,
                           "SELECT 1 FROM sessions s JOIN api_keys k ON k.name = s.key_name WHERE s.session_id = ?1 AND k.revoked_at IS NOT NULL",
                           "t", id);

        return r < 0 ? r : db_step_row(st);
}
