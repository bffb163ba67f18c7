/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <unistd.h>

#include "db/pool-db.h"
#include "lib/log.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"

void pool_destroy(int *broker, sqlite3 *db, const char *machine_id, const char *socket, const char *why) {
        (void) broker_kill(broker, machine_id);
        if (socket)
                (void) unlink(socket);
        (void) db_pool_remove(db, machine_id);
        log_pool_event(LOG_INFO, "destroyed", machine_id, "Machine '%s' destroyed: %s", machine_id, why);
}

bool pool_put_back(int *broker, sqlite3 *db, const char *machine_id, const char *socket, const char *retire, const char *prepared) {
        if (!retire) {
                if (db_pool_release(db, machine_id, prepared) >= 0)
                        return false;
                retire = "it could not be put back in the pool";
        }
        pool_destroy(broker, db, machine_id, socket, retire);
        return true;
}

void session_socket_path(const char *session_id, char *buf, size_t size) {
        (void) snprintf(buf, size, POOL_DIR "/%s.sock", session_id);
}
