/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <unistd.h>

#include "db/pool-db.h"
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

bool pool_put_back(int *broker, sqlite3 *db, const char *machine_id, const char *socket, PoolRetire retire, const char *prepared) {
        if (retire == POOL_RETIRE_NONE) {
                if (db_pool_release(db, machine_id, prepared) >= 0)
                        return false;
                retire = POOL_RETIRE_NOT_PUT_BACK;
        }
        pool_destroy(broker, db, machine_id, socket, retire);
        return true;
}

void session_socket_path(const char *session_id, char *buf, size_t size) {
        (void) snprintf(buf, size, POOL_DIR "/%s.sock", session_id);
}
