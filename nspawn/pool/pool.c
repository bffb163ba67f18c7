/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/log.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"

void pool_destroy(int *broker, sqlite3 *db, const char *machine_id, const char *socket, PoolRetire why) {
        (void) broker_kill(broker, machine_id);
        if (socket)
                (void) unlink(socket);
        (void) db_pool_remove(db, machine_id, pool_retire_label(why));
        log_pool_event(LOG_INFO, "destroyed", machine_id, "Machine '%s' destroyed: %s", machine_id, pool_retire_text(why));
}

void session_socket_path(const char *session_id, char *buf, size_t size) {
        (void) snprintf(buf, size, POOL_DIR "/%s.sock", session_id);
}

void session_event(sqlite3 *db, const char *id, const char *event, const char *request_id, const char *detail) {
        int r = db_session_event(db, id, event, request_id, detail);

        if (r < 0)
                (void) log_warning_errno(r, "Failed to record event '%s' of session '%s': %s", event, id, db_errmsg(db));
        log_session_event(event, id, request_id ? request_id : "", detail);
}
