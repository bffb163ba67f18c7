/* SPDX-License-Identifier: MIT */
/* Nothing left behind (sweep.h). Rows are made before the units, disks and sockets they own, and
 * removed after them, so a thing without its row is never one being made: it is one a process killed
 * mid-operation left, or one whose removal failed. Removing it twice is harmless: the broker's kill
 * and SESSION_DELETE succeed on what is gone already. Every broker request is answered on the
 * pool manager's loop (broker-async.h): a sweep is a count of requests in flight, and ends with the
 * last. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/broker-async.h"
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

struct Sweep {
        BrokerAsync *broker;
        sqlite3 *db;
        SweepDone done;
        void *userdata;
        unsigned pending; /* broker requests in flight */
        int failed;       /* removals that failed */
        int error;        /* a list that failed: what there is could not be told */
};

/* One request fewer in flight; the sweep's end with the last (its sockets are swept then, their
 * rows gone with the units they name). */
static void sweep_unref(Sweep *w) {
        if (--w->pending > 0)
                return;
        if (w->error != -ECANCELED)
                (void) sweep_sockets(w->db);
        w->done(w->error < 0 ? w->error : w->failed, w->userdata);
        free(w);
}

static void sweep_call(Sweep *w, BrokerOp op, const char *id, BrokerAsyncDone done, void *userdata) {
        if (broker_async_call(w->broker, op, id, -1, done, userdata) >= 0)
                w->pending++;
        else
                w->failed++;
}

static void on_reset(int r, const BrokerReply *rep, int fd, void *userdata) {
        (void) r;
        (void) rep;
        (void) fd;
        sweep_unref(userdata);
}

/* A removal's end: what a failure says, and the id it was about, are in the request's own record. */
typedef struct SweepItem {
        Sweep *sweep;
        char id[SANDBOX_ID_MAX];
        char what[160];
} SweepItem;

static void on_removed(int r, const BrokerReply *rep, int fd, void *userdata) {
        SweepItem *item = userdata;
        Sweep *w = item->sweep;
        bool machine = broker_id_valid(item->id, "machine");

        (void) fd;
        if (r == -ECANCELED)
                w->error = r;
        else if (r < 0 && !(machine && r == -ENOENT)) {
                w->failed++;
                if (machine)
                        (void) log_warning_errno(r, "Sweep: failed to kill machine '%s', which has no pool record", item->id);
                else
                        (void) log_warning_errno(r, "Sweep: failed to remove what is left of session '%s': %s", item->id, rep->message);
        } else if (machine)
                log_pool_event(LOG_WARNING, "swept", item->id, "Machine '%s' (%s) has no pool record: killed", item->id, item->what);
        else
                log_session_event("swept", item->id, "", item->what);
        free(item);
        sweep_unref(w);
}

static void sweep_remove(Sweep *w, BrokerOp op, const char *id, const char *what) {
        SweepItem *item = calloc(1, sizeof(*item));

        if (!item) {
                w->failed++;
                return;
        }
        item->sweep = w;
        (void) snprintf(item->id, sizeof(item->id), "%s", id);
        (void) snprintf(item->what, sizeof(item->what), "%s", what);
        if (broker_async_call(w->broker, op, id, -1, on_removed, item) >= 0)
                w->pending++;
        else {
                w->failed++;
                free(item);
        }
}

static void on_units(int r, const BrokerReply *rep, int fd, void *userdata) {
        cleanup_close int memfd = fd;
        cleanup_free BrokerUnit *units = NULL;
        Sweep *w = userdata;
        size_t n = 0;

        if (r >= 0)
                r = broker_units_read(rep, memfd, &units, &n);
        if (r < 0) {
                if (r != -ECANCELED)
                        (void) log_warning_errno(r, "Sweep: failed to list the machines");
                w->error = r;
        }
        for (size_t i = 0; i < n; i++) {
                const BrokerUnit *u = &units[i];

                if (strncmp(u->id, "machine-", 8) != 0)
                        continue; /* a tool sandbox belongs to the request that runs it */
                if (strcmp(u->state, "failed") == 0 || strcmp(u->state, "inactive") == 0)
                        sweep_call(w, BROKER_RESET_FAILED, u->id, on_reset, w);
                else if (db_pool_exists(w->db, u->id) == 0)
                        sweep_remove(w, BROKER_KILL, u->id, u->state);
        }
        sweep_unref(w);
}

static void on_sessions(int r, const BrokerReply *rep, int fd, void *userdata) {
        cleanup_close int memfd = fd;
        cleanup_free BrokerSession *list = NULL;
        Sweep *w = userdata;
        size_t n = 0;

        if (r >= 0)
                r = broker_sessions_read(rep, memfd, &list, &n);
        if (r < 0) {
                if (r != -ECANCELED)
                        (void) log_warning_errno(r, "Sweep: failed to list what the host holds of sessions");
                w->error = r;
        }
        for (size_t i = 0; i < n; i++) {
                const BrokerSession *s = &list[i];
                char what[160];

                if (session_live(w->db, s->id) != 0)
                        continue;
                (void) snprintf(what, sizeof(what), "no live record; removed:%s%s%s%s%s%s", s->state[0] ? " machine (" : "", s->state,
                                s->state[0] ? ")" : "", s->mounted ? " mount" : "", s->disk ? " disk" : "", s->uid_range ? " uid-range" : "");
                sweep_remove(w, BROKER_SESSION_DELETE, s->id, what);
        }
        sweep_unref(w);
}

int sweep_start(BrokerAsync *broker, sqlite3 *db, SweepDone done, void *userdata) {
        Sweep *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        *w = (Sweep){.broker = broker, .db = db, .done = done, .userdata = userdata, .pending = 1};
        r = broker_async_call(broker, BROKER_LIST, NULL, -1, on_units, w);
        if (r >= 0) {
                w->pending++;
                r = broker_async_call(broker, BROKER_SESSION_LIST, NULL, -1, on_sessions, w);
        }
        if (r >= 0)
                w->pending++;
        else
                w->error = r;
        /* The start's own reference: done is never called from here, as a list is always queued or
         * none is. */
        if (w->pending == 1) {
                free(w);
                return r;
        }
        sweep_unref(w);
        return 0;
}
