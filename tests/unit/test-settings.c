/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/env-file.h"
#include "lib/settings.h"
#include "tests/unit/tap.h"

/* The environment a service started with: the file's values at start, and the unit's own. */
static const char *env_of_service(const char *name) {
        static const char *const env[][2] = {
                {"SANDBOXD_WORKERS", "4"},
                {"SANDBOXD_API_KEYS", "off"},
                {"SANDBOXD_DB", "/a"},
                {"SANDBOXD_POOL_TARGET", "2"}, /* a drop-in's Environment=, the file has none */
        };

        for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
                if (strcmp(env[i][0], name) == 0)
                        return env[i][1];
        return NULL;
}

static SettingsFile file_of(const char *text) {
        SettingsFile f = {};

        if (env_file_parse(text, &f.vars, &f.n) < 0)
                abort();
        return f;
}

static void test_restart_value(void) {
        SettingsFile start = file_of("SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n");
        SettingsFile now = file_of("SANDBOXD_WORKERS=8\n");

        tap_is_str(settings_restart_value(&start, &now, "SANDBOXD_WORKERS", "4"), "8", "restart value: the file's now");
        tap_is_str(settings_restart_value(&start, &now, "SANDBOXD_API_KEYS", "off"), NULL,
                   "restart value: a name the file set at start and no more is unset (the environment had it from the file)");
        tap_is_str(settings_restart_value(&start, &now, "SANDBOXD_POOL_TARGET", "2"), "2", "restart value: a name no file set keeps the unit's");
        settings_file_done(&start);
        settings_file_done(&now);
}

static void test_changed(void) {
        static const struct {
                const char *start, *applied, *now;
                const char *live, *restart;
        } cases[] = {
                {"SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "", ""},
                {"SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n",
                 "SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\nSANDBOXD_API_KEYS=on\n", "SANDBOXD_API_KEYS", ""},
                /* Applied by a reload: nothing left to do. */
                {"SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "SANDBOXD_API_KEYS=on\nSANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=on\n", "", ""},
                /* Back to off: removing the line gives the default, which the environment did not have. */
                {"SANDBOXD_WORKERS=4\nSANDBOXD_API_KEYS=off\n", "SANDBOXD_API_KEYS=on\nSANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=4\n", "SANDBOXD_API_KEYS", ""},
                {"SANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=8\nSANDBOXD_API_KEYS=on\nSANDBOXD_WORKERS=6\n", "SANDBOXD_API_KEYS",
                 "SANDBOXD_WORKERS"},
                /* A reload applies no restart setting: it stays pending. */
                {"SANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=8\n", "SANDBOXD_WORKERS=8\n", "", "SANDBOXD_WORKERS"},
                {"SANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=4\n", "SANDBOXD_WORKERS=4\nSANDBOXD_POOL_TARGET=2\nSANDBOXD_MEMORY_MAX=1G\n", "",
                 "SANDBOXD_MEMORY_MAX"},
                {"SANDBOXD_WORKERS=4\nSANDBOXD_DB=/a\n", "SANDBOXD_WORKERS=4\nSANDBOXD_DB=/a\n", "", "", "SANDBOXD_WORKERS SANDBOXD_DB"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SettingsFile start = file_of(cases[i].start), applied = file_of(cases[i].applied), now = file_of(cases[i].now);
                char live[256], restart[256];

                tap_ok(settings_changed(&start, &applied, &now, env_of_service, true, live, sizeof(live)) >= 0, "changed %zu: live listed", i);
                tap_is_str(live, cases[i].live, "changed %zu: the live settings", i);
                tap_ok(settings_changed(&start, &applied, &now, env_of_service, false, restart, sizeof(restart)) >= 0, "changed %zu: others listed", i);
                tap_is_str(restart, cases[i].restart, "changed %zu: those that need a restart", i);
                tap_is_int(settings_changed(&start, &applied, &now, env_of_service, false, restart, 4), strlen(cases[i].restart) >= 4 ? -ENOBUFS : 0,
                           "changed %zu: a list that does not fit is an error", i);
                settings_file_done(&start);
                settings_file_done(&applied);
                settings_file_done(&now);
        }
}

static void test_status(void) {
        static const struct {
                const char *text;
                int r;
                SettingsStamp stamp;
                const char *pending;
        } cases[] = {
                {"4 workers, 64 requests of work in flight at most; settings of 1764640984.000000007", 0, {1764640984, 7}, ""},
                {"settings of 0.000000000", 0, {0, 0}, ""},
                {"settings of 12.123456789; restart needed for SANDBOXD_WORKERS SANDBOXD_DB", 0, {12, 123456789}, "SANDBOXD_WORKERS SANDBOXD_DB"},
                {"4 workers", -ENOENT, {0, 0}, NULL},
                {"", -ENOENT, {0, 0}, NULL},
                {NULL, -ENOENT, {0, 0}, NULL},
                {"settings of x.000000000", -ENOENT, {0, 0}, NULL},
                {"settings of -1.000000000", -ENOENT, {0, 0}, NULL},
                {"settings of 12.5", -ENOENT, {0, 0}, NULL},
                {"settings of 12", -ENOENT, {0, 0}, NULL},
        };
        SettingsStamp stamp = {1764640984, 42};
        char text[128], pending[64];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SettingsStamp s = {-1, -1};

                if (!tap_is_int(settings_status_parse(cases[i].text, &s, pending, sizeof(pending)), cases[i].r, "status %zu: parsed", i) ||
                    cases[i].r < 0)
                        continue;
                tap_ok(s.sec == cases[i].stamp.sec && s.nsec == cases[i].stamp.nsec, "status %zu: the stamp", i);
                tap_is_str(pending, cases[i].pending, "status %zu: what waits for a restart", i);
        }

        tap_is_int(settings_status_format(&stamp, "SANDBOXD_WORKERS", text, sizeof(text)), 0, "status: formatted");
        tap_is_str(text, "settings of 1764640984.000000042; restart needed for SANDBOXD_WORKERS", "status: stamp and pending names");
        tap_is_int(settings_status_format(&stamp, "", text, sizeof(text)), 0, "status: formatted with nothing pending");
        tap_is_str(text, "settings of 1764640984.000000042", "status: the stamp alone");
        tap_is_int(settings_status_format(&stamp, NULL, text, 10), -ENOBUFS, "status: too small a buffer is an error");
}

static void test_file_read(void) {
        char path[] = "/tmp/test-settings.XXXXXX";
        SettingsFile f = {};
        int fd = mkstemp(path);

        tap_ok(fd >= 0 && write(fd, "A=1\nA=2\n", 8) == 8, "file: written");
        tap_is_int(settings_file_read(path, &f), 0, "file: read");
        tap_is_str(env_file_get(f.vars, f.n, "A"), "2", "file: its assignments");
        tap_ok(f.stamp.sec > 0, "file: its modification time");
        settings_file_done(&f);
        tap_is_int(ftruncate(fd, 0), 0, "file: emptied");
        tap_is_int(settings_file_read(path, &f), 0, "file: an empty one is read");
        tap_is_int((long long) f.n, 0, "file: and sets nothing");
        settings_file_done(&f);
        tap_ok(pwrite(fd, "A=1\0B=2\n", 8, 0) == 8, "file: written with a NUL");
        tap_is_int(settings_file_read(path, &f), -EINVAL, "file: one with a NUL is refused");
        tap_is_int(ftruncate(fd, (1 << 20) + 1), 0, "file: made a megabyte and a byte");
        tap_is_int(settings_file_read(path, &f), -EFBIG, "file: one over a megabyte is refused");
        (void) close(fd);
        (void) unlink(path);
        f = (SettingsFile){.stamp = {1, 1}};
        tap_is_int(settings_file_read(path, &f), 0, "file: a missing one is no error");
        tap_ok(f.n == 0 && f.stamp.sec == 0 && f.stamp.nsec == 0, "file: a missing one sets nothing, stamp 0");
}

int main(void) {
        tap_ok(settings_is_live("SANDBOXD_API_KEYS"), "live: SANDBOXD_API_KEYS");
        tap_ok(!settings_is_live("SANDBOXD_WORKERS"), "live: not SANDBOXD_WORKERS");
        tap_ok(!settings_is_live("SANDBOXD_API_KEYS_X"), "live: a name that only starts like one is not");
        test_restart_value();
        test_changed();
        test_status();
        test_file_read();
        return tap_done();
}
