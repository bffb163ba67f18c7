/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <systemd/sd-bus.h>

#include "ctl/machines.h"
#include "ctl/settings.h"
#include "ctl/systemd.h"
#include "lib/alloc-util.h"
#include "lib/error.h"
#include "lib/macro.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
#define UNIT_INTERFACE "org.freedesktop.systemd1.Unit"
#define SERVICE_INTERFACE "org.freedesktop.systemd1.Service"
#define DB_DEFAULT "/var/lib/sandboxd/db/sandboxd.db"

static inline void sqlite3_closep(sqlite3 **db) {
        (void) sqlite3_close_v2(*db);
}

static inline void sqlite3_finalizep(sqlite3_stmt **st) {
        (void) sqlite3_finalize(*st);
}

static int compare_id(const void *a, const void *b) {
        return strcmp(((const Machine *) a)->id, ((const Machine *) b)->id);
}

static uint64_t property_u64(sd_bus *bus, const char *path, const char *interface, const char *name) {
        uint64_t v = UINT64_MAX;

        if (sd_bus_get_property_trivial(bus, SYSTEMD_DEST, path, interface, name, NULL, 't', &v) < 0)
                return UINT64_MAX;
        return v;
}

/* What systemd measures of a unit: cheap, the cgroup's own counters. */
static void read_unit(sd_bus *bus, const char *path, Machine *m) {
        uint64_t v;

        v = property_u64(bus, path, UNIT_INTERFACE, "ActiveEnterTimestamp");
        m->since_usec = v == UINT64_MAX ? 0 : v;
        m->memory = property_u64(bus, path, SERVICE_INTERFACE, "MemoryCurrent");
        m->cpu_usec = property_u64(bus, path, SERVICE_INTERFACE, "CPUUsageNSec");
        if (m->cpu_usec != UINT64_MAX)
                m->cpu_usec /= NSEC_PER_USEC;
        m->tasks = property_u64(bus, path, SERVICE_INTERFACE, "TasksCurrent");
}

static const char *kind_of(const char *unit) {
        static const char *const kinds[][2] = {{"machine-", "pool"}, {"session-", "session"}, {"tool-", "tool"}};

        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (strncmp(unit, kinds[i][0], strlen(kinds[i][0])) == 0)
                        return kinds[i][1];
        return "?";
}

static int list_units(sd_bus *bus, Machine **list, size_t *n, size_t *cap, sd_bus_error *error) {
        cleanup_bus_message sd_bus_message *reply = NULL;
        const char *name, *active, *sub, *path;
        int r;

        r = sd_bus_call_method(bus, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_INTERFACE, "ListUnitsByPatterns", error, &reply, "asas", 0, 3,
                               "machine-*.service", "session-*.service", "tool-*.service");
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, &active, &sub, NULL, &path, NULL, NULL, NULL)) > 0) {
                Machine *m;

                if (ARRAY_GROW(*list, *cap, *n, 16) < 0)
                        return -ENOMEM;
                m = &(*list)[(*n)++];
                *m = (Machine){.executions = -1};
                (void) snprintf(m->id, sizeof(m->id), "%.*s", (int) (strlen(name) - strlen(".service")), name);
                (void) snprintf(m->kind, sizeof(m->kind), "%s", kind_of(name));
                (void) snprintf(m->active, sizeof(m->active), "%s", active);
                (void) snprintf(m->sub, sizeof(m->sub), "%s", sub);
                read_unit(bus, path, m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(reply);
}

/* The pool manager's rows (db/schema.sql, table pool), read-only: 0 when read, -errno when not. */
static int read_pool(Machine *list, size_t n) {
        __attribute__((cleanup(sqlite3_closep))) sqlite3 *db = NULL;
        __attribute__((cleanup(sqlite3_finalizep))) sqlite3_stmt *st = NULL;
        char path[4096];

        ctl_setting("SANDBOXD_DB", DB_DEFAULT, path, sizeof(path));
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
            sqlite3_busy_timeout(db, 5000) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "SELECT machine_id, state, prepared, executions FROM pool", -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        for (;;) {
                int r = sqlite3_step(st);

                if (r == SQLITE_DONE)
                        return 0;
                if (r != SQLITE_ROW)
                        return -EIO;
                for (size_t i = 0; i < n; i++) {
                        const char *id = (const char *) sqlite3_column_text(st, 0);

                        if (!id || strcmp(id, list[i].id) != 0)
                                continue;
                        (void) snprintf(list[i].state, sizeof(list[i].state), "%s", (const char *) sqlite3_column_text(st, 1));
                        (void) snprintf(list[i].prepared, sizeof(list[i].prepared), "%s", (const char *) sqlite3_column_text(st, 2));
                        list[i].executions = sqlite3_column_int64(st, 3);
                }
        }
}

int machines_list(Machine **ret, size_t *ret_n, int *ret_pool_read, Error *reterr) {
        __attribute__((cleanup(sd_bus_flush_close_unrefp))) sd_bus *bus = NULL;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free Machine *list = NULL;
        size_t n = 0, cap = 0;
        int r;

        r = ctl_bus_open(&bus, reterr);
        if (r < 0)
                return r;
        r = list_units(bus, &list, &n, &cap, &error);
        if (r < 0)
                return error_set(reterr, r, "cannot list the units of systemd: %s", error.message ? error.message : strerror(-r));
        if (n > 0)
                qsort(list, n, sizeof(*list), compare_id);
        *ret_pool_read = read_pool(list, n) >= 0;
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}
