/* SPDX-License-Identifier: MIT */
/* What the host holds of each session, found where it lies rather than where the database says: the
 * pool manager removes what no row owns (a session deleted while its disk could not be removed, or
 * made by a process killed before it wrote or after it deleted the row). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/alloc-util.h"
#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/session-list.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"

#define DISK_MOUNT_PREFIX "run-sandboxd-disks-"

typedef struct SessionList {
        BrokerSession *s;
        size_t n, cap;
        int error;
} SessionList;

/* The record of id ("session-" and its 12 characters), made when it is the first thing seen of it. */
static BrokerSession *session_get(SessionList *l, const char *id) {
        BrokerSession *s;

        if (l->error < 0 || !broker_id_valid(id, "session"))
                return NULL;
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->s[i].id, id) == 0)
                        return &l->s[i];
        if (ARRAY_GROW(l->s, l->cap, l->n, 64) < 0) {
                l->error = -ENOMEM;
                return NULL;
        }
        s = &l->s[l->n++];
        *s = (BrokerSession){};
        (void) snprintf(s->id, sizeof(s->id), "%s", id);
        return s;
}

/* id from a name "<prefix><id or its 12 characters><suffix>"; "" when name is not of that form. */
static void id_from_name(const char *name, const char *prefix, const char *id_prefix, const char *suffix, char id[static SANDBOX_ID_MAX]) {
        size_t n = strlen(name), np = strlen(prefix), ns = strlen(suffix);

        id[0] = 0;
        if (n <= np + ns || strncmp(name, prefix, np) != 0 || strcmp(name + n - ns, suffix) != 0 ||
            n - np - ns + strlen(id_prefix) >= SANDBOX_ID_MAX)
                return;
        (void) snprintf(id, SANDBOX_ID_MAX, "%s%.*s", id_prefix, (int) (n - np - ns), name + np);
}

static void list_machine(const char *unit, const char *active, void *userdata) {
        char id[SANDBOX_ID_MAX];
        BrokerSession *s;

        id_from_name(unit, "", "", ".service", id);
        s = session_get(userdata, id);
        if (s)
                (void) snprintf(s->state, sizeof(s->state), "%s", active);
}

static void list_mount(const char *unit, const char *active, void *userdata) {
        char id[SANDBOX_ID_MAX];
        BrokerSession *s;

        (void) active;
        id_from_name(unit, DISK_MOUNT_PREFIX, "session-", ".mount", id);
        s = session_get(userdata, id);
        if (s)
                s->mounted = 1;
}

static void list_range(const char *owner, uint32_t base, void *userdata) {
        BrokerSession *s = session_get(userdata, owner);

        (void) base;
        if (s)
                s->uid_range = 1;
}

static int list_disks(const char *session_dir, SessionList *l) {
        DIR *d = opendir(session_dir);
        struct dirent *de;

        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                char id[SANDBOX_ID_MAX];
                BrokerSession *s;

                id_from_name(de->d_name, "", "", ".img", id);
                s = session_get(l, id);
                if (s)
                        s->disk = 1;
        }
        (void) closedir(d);
        return 0;
}

const char *const session_list_patterns[] = {"session-*.service", DISK_MOUNT_PREFIX "*.mount", NULL};

/* One of the units session_list_patterns matched: a session's machine or its disk's mount. */
static void list_unit(const char *unit, const char *active, void *userdata) {
        size_t n = strlen(unit);

        if (n > 6 && strcmp(unit + n - 6, ".mount") == 0)
                list_mount(unit, active, userdata);
        else
                list_machine(unit, active, userdata);
}

static int session_list(sd_bus_message *units, const char *session_dir, int uid_dir_fd, BrokerSession **ret, size_t *ret_n) {
        SessionList l = {};
        int r;

        r = sandbox_list_read(units, list_unit, &l);
        if (r >= 0)
                r = list_disks(session_dir, &l);
        if (r >= 0)
                r = uid_range_foreach(uid_dir_fd, list_range, &l);
        if (r >= 0)
                r = l.error;
        if (r < 0) {
                free(l.s);
                return r;
        }
        *ret = l.s;
        *ret_n = l.n;
        return 0;
}

int session_list_memfd(sd_bus_message *units, const char *session_dir, int uid_dir_fd, uint32_t *ret_n, int *ret_fd) {
        cleanup_free BrokerSession *list = NULL;
        cleanup_close int fd = -1;
        size_t n = 0;
        int r = session_list(units, session_dir, uid_dir_fd, &list, &n);

        if (r >= 0 && n > UINT32_MAX)
                r = -E2BIG;
        if (r >= 0) {
                fd = memfd_create("sandboxd-sessions", MFD_CLOEXEC);
                r = fd < 0 ? negative_errno() : fd_write_all(fd, list, n * sizeof(*list));
        }
        if (r < 0)
                return r;
        *ret_n = (uint32_t) n;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

typedef struct Stale {
        sd_bus *bus;
        int dir_fd;
} Stale;

static void release_stale(const char *owner, uint32_t base, void *userdata) {
        Stale *s = userdata;
        char unit[SANDBOX_ID_MAX + 16];

        (void) base;
        if (!broker_id_valid(owner, NULL) || unit_name_from_id(owner, unit, sizeof(unit)) < 0)
                return; /* sessions keep theirs until they are deleted */
        if (sandbox_wait_gone(s->bus, unit, 0) == 0 && uid_range_release(s->dir_fd, owner) > 0)
                log_info("Broker: gave up the UID range of '%s', whose unit is gone", owner);
}

void session_list_release_stale_ranges(sd_bus *bus, int uid_dir_fd) {
        (void) uid_range_foreach(uid_dir_fd, release_stale, &(Stale){bus, uid_dir_fd});
}

void session_list_ask_sweep(sd_bus *bus) {
        cleanup_free char *state = NULL;

        /* Only once it is active (it sends READY=1 after it blocks SIGHUP): a pool manager still
         * starting would die of the signal, and sweeps when it starts anyway. */
        if (sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1/unit/sandboxd_2dpoold_2eservice",
                                       "org.freedesktop.systemd1.Unit", "ActiveState", NULL, &state) < 0 ||
            strcmp(state, "active") != 0)
                return;
        (void) sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "KillUnit",
                                  NULL, NULL, "ssi", "sandboxd-poold.service", "main", SIGHUP);
}
