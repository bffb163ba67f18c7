/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/settings.h"
#include "lib/env-file.h"
#include "lib/macro.h"

#define SETTINGS_FILE "/etc/sandboxd/sandboxd.conf"

static EnvVar *file_vars;
static size_t n_file_vars;
static bool file_read;

const char *ctl_settings_file(void) {
        const char *file = getenv("SANDBOXD_CONF");

        return file && *file ? file : SETTINGS_FILE;
}

/* Once: a file that is missing or unreadable sets nothing, as for EnvironmentFile=-. */
static void read_file(void) {
        cleanup_free char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (file_read)
                return;
        file_read = true;
        f = fopen(ctl_settings_file(), "re");
        if (!f)
                return;
        if (getdelim(&text, &len, 0, f) >= 0)
                (void) env_file_parse(text, &file_vars, &n_file_vars);
        (void) fclose(f);
}

const char *ctl_setting_get(const char *name) {
        const char *env = getenv(name);

        if (env && *env)
                return env;
        read_file();
        return env_file_get(file_vars, n_file_vars, name);
}

void ctl_setting(const char *name, const char *def, char *ret, size_t size) {
        const char *v = ctl_setting_get(name);

        (void) snprintf(ret, size, "%s", v ? v : def);
}
