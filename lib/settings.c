/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/env-file.h"
#include "lib/macro.h"
#include "lib/settings.h"

/* What settings_file_read() takes: far more than every setting there is, with comments. */
#define SETTINGS_FILE_MAX_BYTES (1 << 20)

#define STATUS_PREFIX "settings of "
#define STATUS_PENDING "; restart needed for "

/* What a running service takes from the file on reload (lib/daemon.c applies them). Only settings
 * read anew for each request belong here: one that sized something at start (workers, the pool,
 * the limits of machines already made) or that another service shares would be half applied. */
static const char *const live_settings[] = {
        /* The workers check keys request by request; nothing else reads it. */
        "SANDBOXD_API_KEYS",
};

int settings_file_read(const char *path, SettingsFile *ret) {
        cleanup_free char *text = NULL;
        SettingsFile f = {};
        struct stat st;
        size_t len = 0;
        ssize_t n = -1;
        FILE *file;
        int r;

        file = fopen(path, "re");
        if (!file) {
                if (errno != ENOENT)
                        return negative_errno();
                *ret = f;
                return 0;
        }
        r = fstat(fileno(file), &st) < 0 ? negative_errno() : 0;
        /* A settings file is lines of KEY=VALUE: one of a megabyte, or with a NUL in it, is not. */
        if (r >= 0 && st.st_size > SETTINGS_FILE_MAX_BYTES)
                r = -EFBIG;
        if (r >= 0)
                n = getdelim(&text, &len, 0, file);
        /* An empty file is EOF at once: no error, and nothing in text. */
        if (r >= 0 && n < 0 && ferror(file))
                r = -EIO;
        if (r >= 0 && n >= 0 && (size_t) n != strlen(text))
                r = -EINVAL;
        (void) fclose(file);
        if (r < 0)
                return r;
        r = env_file_parse(n >= 0 ? text : "", &f.vars, &f.n);
        if (r < 0)
                return r;
        f.stamp = (SettingsStamp){.sec = st.st_mtim.tv_sec, .nsec = st.st_mtim.tv_nsec};
        *ret = f;
        return 0;
}

void settings_file_done(SettingsFile *f) {
        f->vars = env_file_free(f->vars, f->n);
        f->n = 0;
}

bool settings_is_live(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(live_settings); i++)
                if (strcmp(live_settings[i], name) == 0)
                        return true;
        return false;
}

const char *settings_restart_value(const SettingsFile *start, const SettingsFile *now, const char *name, const char *env_value) {
        const char *v = env_file_get(now->vars, now->n, name);

        if (v)
                return v;
        return env_file_get(start->vars, start->n, name) ? NULL : env_value;
}

static bool value_equal(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether vars[i] is the first assignment of its name in vars, then in none of the lists before. */
static bool first_of_name(const SettingsFile *const *files, size_t k, size_t i) {
        const char *name = files[k]->vars[i].name;

        for (size_t j = 0; j < i; j++)
                if (strcmp(files[k]->vars[j].name, name) == 0)
                        return false;
        for (size_t l = 0; l < k; l++)
                if (env_file_get(files[l]->vars, files[l]->n, name))
                        return false;
        return true;
}

/* name appended to ret (holding len bytes), after a space unless first. */
static int append_name(char *ret, size_t size, size_t *len, const char *name) {
        int n = snprintf(ret + *len, size - *len, "%s%s", *len > 0 ? " " : "", name);

        if (n < 0 || (size_t) n >= size - *len)
                return -ENOBUFS;
        *len += (size_t) n;
        return 0;
}

int settings_changed(const SettingsFile *start, const SettingsFile *applied, const SettingsFile *now, const char *(*env)(const char *name),
                     bool live, char *ret, size_t size) {
        const SettingsFile *const files[] = {start, applied, now};
        size_t len = 0;
        int count = 0;

        if (size == 0)
                return -ENOBUFS;
        ret[0] = 0;
        /* A name no file sets has the environment's value, at start as after a restart. */
        for (size_t k = 0; k < ELEMENTSOF(files); k++)
                for (size_t i = 0; i < files[k]->n; i++) {
                        const char *name = files[k]->vars[i].name, *running;

                        if (settings_is_live(name) != live || !first_of_name(files, k, i))
                                continue;
                        /* A live setting runs with what the last reload applied; any other with
                         * what the service started with. */
                        running = live ? settings_restart_value(start, applied, name, env(name)) : env(name);
                        if (value_equal(running, settings_restart_value(start, now, name, env(name))))
                                continue;
                        if (append_name(ret, size, &len, name) < 0)
                                return -ENOBUFS;
                        count++;
                }
        return count;
}

int settings_status_format(const SettingsStamp *stamp, const char *pending, char *ret, size_t size) {
        int n = snprintf(ret, size, STATUS_PREFIX "%" PRId64 ".%09ld%s%s", stamp->sec, stamp->nsec, pending && *pending ? STATUS_PENDING : "",
                         pending ? pending : "");

        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int settings_status_parse(const char *text, SettingsStamp *ret_stamp, char *ret_pending, size_t size) {
        const char *p = text ? strstr(text, STATUS_PREFIX) : NULL, *q;
        SettingsStamp s = {};
        char *end = NULL;

        if (!p || size == 0)
                return -ENOENT;
        p += strlen(STATUS_PREFIX);
        if (*p < '0' || *p > '9')
                return -ENOENT;
        s.sec = strtoll(p, &end, 10);
        if (*end != '.' || strspn(end + 1, "0123456789") != 9)
                return -ENOENT;
        s.nsec = strtol(end + 1, &end, 10);
        q = strncmp(end, STATUS_PENDING, strlen(STATUS_PENDING)) == 0 ? end + strlen(STATUS_PENDING) : "";
        (void) snprintf(ret_pending, size, "%s", q);
        *ret_stamp = s;
        return 0;
}
