/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/settings.h"

#define SETTINGS_FILE "/etc/sandboxd/sandboxd.conf"

int ctl_setting_line(const char *line, const char *name, char *ret, size_t size) {
        size_t k = strlen(name), n;

        line += strspn(line, " \t");
        if (strncmp(line, name, k) != 0 || line[k] != '=')
                return 0;
        line += k + 1;
        n = strcspn(line, "\r\n");
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
                n--;
        if (n >= 2 && (line[0] == '"' || line[0] == '\'') && line[n - 1] == line[0]) {
                line++;
                n -= 2;
        }
        (void) snprintf(ret, size, "%.*s", (int) n, line);
        return 1;
}

void ctl_setting(const char *name, const char *def, char *ret, size_t size) {
        const char *env = getenv(name), *file = getenv("SANDBOXD_CONF");
        char line[4096];
        FILE *f;

        (void) snprintf(ret, size, "%s", env && *env ? env : def);
        if (env && *env)
                return;
        f = fopen(file && *file ? file : SETTINGS_FILE, "re");
        if (!f)
                return;
        /* The last line that sets it wins, as with EnvironmentFile=. */
        while (fgets(line, sizeof(line), f))
                (void) ctl_setting_line(line, name, ret, size);
        (void) fclose(f);
}
