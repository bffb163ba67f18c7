/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc-util.h"
#include "lib/env-file.h"
#include "lib/macro.h"

static bool blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

static bool name_valid(const char *s, size_t n) {
        if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

/* The line [s, s + n) as an assignment into *ret: 1, 0 when it is none, -ENOMEM. */
static int parse_line(const char *s, size_t n, EnvVar *ret) {
        const char *eq, *v;
        size_t k, vn;

        while (n > 0 && blank(*s))
                s++, n--;
        while (n > 0 && blank(s[n - 1]))
                n--;
        if (n == 0 || *s == '#' || *s == ';')
                return 0;
        eq = memchr(s, '=', n);
        if (!eq)
                return 0;
        k = (size_t) (eq - s);
        while (k > 0 && blank(s[k - 1]))
                k--;
        if (!name_valid(s, k))
                return 0;
        v = eq + 1;
        vn = n - (size_t) (v - s);
        while (vn > 0 && blank(*v))
                v++, vn--;
        if (vn >= 2 && (v[0] == '"' || v[0] == '\'') && v[vn - 1] == v[0])
                v++, vn -= 2;
        ret->name = strndup(s, k);
        ret->value = strndup(v, vn);
        if (!ret->name || !ret->value) {
                free(ret->name);
                free(ret->value);
                return -ENOMEM;
        }
        return 1;
}

EnvVar *env_file_free(EnvVar *vars, size_t n) {
        for (size_t i = 0; vars && i < n; i++) {
                free(vars[i].name);
                free(vars[i].value);
        }
        free(vars);
        return NULL;
}

int env_file_parse(const char *text, EnvVar **ret, size_t *ret_n) {
        EnvVar *vars = NULL;
        size_t n = 0, cap = 0;

        for (const char *p = text; p && *p;) {
                const char *end = strchrnul(p, '\n');
                EnvVar v;
                int r;

                r = parse_line(p, (size_t) (end - p), &v);
                if (r > 0 && ARRAY_GROW(vars, cap, n, 16) < 0) {
                        free(v.name);
                        free(v.value);
                        r = -ENOMEM;
                }
                if (r < 0) {
                        (void) env_file_free(vars, n);
                        return r;
                }
                if (r > 0)
                        vars[n++] = v;
                p = *end ? end + 1 : end;
        }
        *ret = vars;
        *ret_n = n;
        return 0;
}

const char *env_file_get(const EnvVar *vars, size_t n, const char *name) {
        for (size_t i = n; i > 0; i--)
                if (strcmp(vars[i - 1].name, name) == 0)
                        return vars[i - 1].value;
        return NULL;
}

const char *env_get_or(const char *name, const char *def) {
        const char *v = getenv(name);

        return v && *v ? v : def;
}
