/* SPDX-License-Identifier: MIT */
#include <unistd.h>

#include "db/pool-db.h"
#include "lib/log.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"

void pool_destroy(int *broker, sqlite3 *db, const char *sandbox_id, const char *socket, const char *why) {
        (void) broker_kill(broker, sandbox_id);
        if (socket)
                (void) unlink(socket);
        (void) db_pool_remove(db, sandbox_id);
        log_pool_event(LOG_INFO, "destroyed", sandbox_id, "Sandbox '%s' destroyed: %s", sandbox_id, why);
}
