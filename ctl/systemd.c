/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>

#include "ctl/systemd.h"
#include "lib/error.h"
#include "lib/macro.h"

#define SYSTEMD_BINARY "/lib/systemd/systemd"
#define HOST_STATE_DEFAULT "/var/lib/sandboxd/private-systemd"

/* Whether /proc/PID/exe is systemd's binary, as sandboxd-host checks it. */
static bool pid_is_systemd(long pid) {
        char link[64], exe[PATH_MAX], want[PATH_MAX];
        ssize_t n;

        (void) snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
        n = readlink(link, exe, sizeof(exe) - 1);
        if (n < 0 || !realpath(SYSTEMD_BINARY, want))
                return false;
        exe[n] = 0;
        return strcmp(exe, want) == 0;
}

/* The host's own PID 1 is systemd, booted as such (not merely a systemd binary in a container). */
static bool host_is_systemd(void) {
        struct stat st;

        return pid_is_systemd(1) && stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

static long private_pid(void) {
        const char *dir = getenv("SANDBOXD_HOST_STATE");
        char path[PATH_MAX];
        long pid = 0;
        FILE *f;

        (void) snprintf(path, sizeof(path), "%s/pid", dir && *dir ? dir : HOST_STATE_DEFAULT);
        f = fopen(path, "re");
        if (!f)
                return -ENOENT;
        if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
        (void) fclose(f);
        return pid > 1 && pid_is_systemd(pid) ? pid : -ENOENT;
}

int ctl_systemd_root(char *ret, size_t size) {
        long pid;

        if (host_is_systemd()) {
                (void) snprintf(ret, size, "%s", "");
                return 0;
        }
        pid = private_pid();
        if (pid < 0)
                return (int) pid;
        (void) snprintf(ret, size, "/proc/%ld/root", pid);
        return 0;
}

int ctl_journal_open(sd_journal **ret, Error *reterr) {
        char root[64];
        int r;

        r = ctl_systemd_root(root, sizeof(root));
        if (r >= 0 && root[0])
                /* SD_JOURNAL_OS_ROOT: the directory is a root file system; its /run/log/journal and
                 * /var/log/journal are read, as journalctl --root does. */
                r = sd_journal_open_directory(ret, root, SD_JOURNAL_OS_ROOT);
        else
                r = sd_journal_open(ret, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return error_set(reterr, r, "cannot open the journal: %s", strerror(-r));
        return 0;
}

int ctl_bus_open(sd_bus **ret, Error *reterr) {
        sd_bus *bus = NULL;
        char root[64], address[128];
        int r;

        r = ctl_systemd_root(root, sizeof(root));
        if (r < 0)
                return error_set(reterr, r, "no systemd runs sandboxd (start it: sandboxd-host up)");
        if (!root[0]) {
                r = sd_bus_open_system(ret);
                return r < 0 ? error_set(reterr, r, "cannot connect to the system bus: %s", strerror(-r)) : 0;
        }

        (void) snprintf(address, sizeof(address), "unix:path=%s/run/dbus/system_bus_socket", root);
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                (void) sd_bus_unref(bus);
                return error_set(reterr, r, "cannot connect to the bus of sandboxd's systemd (%s): %s", address + 10, strerror(-r));
        }
        *ret = bus;
        return 0;
}

int ctl_unit_property(sd_bus *bus, const char *unit, const char *interface, const char *property, char **ret, Error *reterr) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *path = NULL;
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return error_set(reterr, r, "out of memory");
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, interface, property, &error, ret);
        if (r < 0)
                return error_set(reterr, r, "cannot read %s of %s: %s", property, unit, error.message ? error.message : strerror(-r));
        return 0;
}
