/* SPDX-License-Identifier: MIT */
/* Nothing left behind (sweep.h). Rows are made before the units, disks and sockets they own, and
 * removed after them, so a thing without its row is never one being made: it is one a process killed
 * mid-operation left, or one whose removal failed. Removing it twice is harmless: the broker's kill
 * and SESSION_DELETE succeed on what is gone already. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/sweep.h"

/* 1: the session has a live row (active, pausing or paused); 0: none; -errno: cannot tell. */
static int session_live(sqlite3 *db, const char *id) {
        Session s;
        int r = db_session_get(db, id, &s);

        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

static int sweep_machines(int *broker, sqlite3 *db) {
        cleanup_free BrokerUnit *units = NULL;
        size_t n = 0;
        int failed = 0;
        int r = broker_list(broker, &units, &n);

        if (r < 0)
                return log_warning_errno(r, "Sweep: failed to list the machines");
        for (size_t i = 0; i < n; i++) {
                const BrokerUnit *u = &units[i];

                if (strncmp(u->id, "machine-", 8) != 0)
                        continue; /* a tool sandbox belongs to the request that runs it */
                if (strcmp(u->state, "failed") == 0 || strcmp(u->state, "inactive") == 0) {
                        (void) broker_reset_failed(broker, u->id);
                        continue;
                }
                if (db_pool_exists(db, u->id) != 0)
                        continue;
                r = broker_kill(broker, u->id);
                if (r < 0 && r != -ENOENT) {
                        failed++;
                        (void) log_warning_errno(r, "Sweep: failed to kill machine '%s', which has no pool record", u->id);
                } else
                        log_pool_event(LOG_WARNING, "swept", u->id, "Machine '%s' (%s) has no pool record: killed", u->id, u->state);
        }
        return failed;
}

static int sweep_sessions(int *broker, sqlite3 *db) {
        cleanup_free BrokerSession *list = NULL;
        size_t n = 0;
        int failed = 0;
        int r = broker_session_list(broker, &list, &n);

        if (r < 0)
                return log_warning_errno(r, "Sweep: failed to list what the host holds of sessions");
        for (size_t i = 0; i < n; i++) {
                const BrokerSession *s = &list[i];
                char what[160];
                Error err = {};

                if (session_live(db, s->id) != 0)
                        continue;
                (void) snprintf(what, sizeof(what), "no live record; removed:%s%s%s%s%s%s", s->state[0] ? " machine (" : "", s->state,
                                s->state[0] ? ")" : "", s->mounted ? " mount" : "", s->disk ? " disk" : "", s->uid_range ? " uid-range" : "");
                r = broker_session_stop(broker, s->id, true, &err);
                if (r < 0) {
                        failed++;
                        (void) log_warning_errno(r, "Sweep: failed to remove what is left of session '%s': %s", s->id, err.message);
                } else
                        log_session_event("swept", s->id, "", what);
        }
        return failed;
}

/* A socket of POOL_DIR whose owner has no row any more (a machine destroyed, a session deleted, by
 * a process that died before it unlinked it). */
static int sweep_sockets(sqlite3 *db) {
        DIR *d = opendir(POOL_DIR);
        struct dirent *de;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char id[SANDBOX_ID_MAX];
                size_t len = strlen(de->d_name);
                int live;

                if (len < 6 || len - 5 >= sizeof(id) || strcmp(de->d_name + len - 5, ".sock") != 0)
                        continue;
                (void) snprintf(id, sizeof(id), "%.*s", (int) (len - 5), de->d_name);
                if (broker_id_valid(id, "machine"))
                        live = db_pool_exists(db, id);
                else if (broker_id_valid(id, "session"))
                        live = session_live(db, id);
                else
                        continue;
                if (live != 0 || unlinkat(dirfd(d), de->d_name, 0) < 0)
                        continue;
                log_info("Sweep: removed socket '%s', which no record owns", de->d_name);
        }
        (void) closedir(d);
        return 0;
}

int sweep_run(int *broker, sqlite3 *db) {
        int machines = sweep_machines(broker, db);
        int sessions = sweep_sessions(broker, db);

        (void) sweep_sockets(db);
        if (machines < 0)
                return machines;
        if (sessions < 0)
                return sessions;
        return machines + sessions;
}
