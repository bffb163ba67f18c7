/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "fcgi/http-accept.h"

#define OWS " \t"

/* One media range, as pointers into the header. */
typedef struct Range {
        const char *type;
        size_t type_len;
        const char *subtype;
        size_t subtype_len;
        int weight; /* thousandths; -1: the range cannot be read */
} Range;

/* A qvalue: "0", "0.5", "1", "1.000", at most three decimals. Thousandths, or -1. */
static int qvalue(const char *s, size_t n) {
        int v, scale = 100;

        if (n == 0 || (s[0] != '0' && s[0] != '1') || (n > 1 && s[1] != '.') || n > 5)
                return -1;
        v = (s[0] - '0') * 1000;
        for (size_t i = 2; i < n; i++, scale /= 10) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v += (s[i] - '0') * scale;
        }
        return v > 1000 ? -1 : v;
}

/* A parameter's value at *p, a token or a quoted string (whose commas and semicolons are its own):
 * its length, *p moved past it. */
static size_t param_value(const char **p) {
        const char *start = *p, *s = start;

        if (*s != '"')
                s += strcspn(s, OWS ";,");
        else {
                for (s++; *s && *s != '"'; s++)
                        if (*s == '\\' && s[1])
                                s++;
                if (*s == '"')
                        s++;
        }
        *p = s;
        return (size_t) (s - start);
}

/* The range at *p, up to its comma: *p moved past that comma. */
static Range range_next(const char **p) {
        Range r = {.weight = 1000};
        const char *s = *p + strspn(*p, OWS ","), *slash;

        r.type = s;
        s += strcspn(s, OWS ";,");
        slash = memchr(r.type, '/', (size_t) (s - r.type));
        if (!slash || slash == r.type || slash + 1 == s)
                r.weight = -1;
        else {
                r.type_len = (size_t) (slash - r.type);
                r.subtype = slash + 1;
                r.subtype_len = (size_t) (s - r.subtype);
        }
        for (;;) {
                const char *name, *value;
                size_t name_len, value_len;

                s += strspn(s, OWS);
                if (*s != ';')
                        break;
                s += 1 + strspn(s + 1, OWS);
                name = s;
                name_len = strcspn(s, OWS "=;,");
                s += name_len + strspn(s + name_len, OWS);
                if (*s != '=')
                        continue;
                s += 1 + strspn(s + 1, OWS);
                value = s;
                value_len = param_value(&s);
                if (name_len == 1 && (name[0] == 'q' || name[0] == 'Q') && r.weight >= 0)
                        r.weight = qvalue(value, value_len);
        }
        /* Whatever else is left of the range makes it unreadable. */
        if (*s && *s != ',')
                r.weight = -1;
        s += strcspn(s, ",");
        *p = *s ? s + 1 : s;
        return r;
}

static bool part_is(const char *s, size_t n, const char *want, size_t want_len) {
        return n == want_len && strncasecmp(s, want, n) == 0;
}

/* 3: the type itself; 2: "type/ *"; 1: "* / *"; 0: no match. */
static int specificity(const Range *r, const char *type) {
        const char *slash = strchr(type, '/');
        size_t tl = slash ? (size_t) (slash - type) : strlen(type);
        const char *sub = slash ? slash + 1 : "";

        if (part_is(r->type, r->type_len, "*", 1))
                return part_is(r->subtype, r->subtype_len, "*", 1) ? 1 : 0;
        if (!part_is(r->type, r->type_len, type, tl))
                return 0;
        if (part_is(r->subtype, r->subtype_len, "*", 1))
                return 2;
        return part_is(r->subtype, r->subtype_len, sub, strlen(sub)) ? 3 : 0;
}

int http_accept_weight(const char *accept, const char *type, HttpAcceptMatch match) {
        int best = 0, weight = -1;

        for (const char *p = accept; p && p[strspn(p, OWS ",")];) {
                Range r = range_next(&p);
                int s;

                if (r.weight < 0)
                        continue;
                s = specificity(&r, type);
                if (s == 0 || (match == HTTP_ACCEPT_EXACT && s != 3) || s <= best)
                        continue;
                best = s;
                weight = r.weight;
        }
        return weight;
}

bool http_accepts(const char *accept, const char *type) {
        if (!accept || !accept[strspn(accept, OWS)])
                return true;
        return http_accept_weight(accept, type, HTTP_ACCEPT_ANY) > 0;
}
