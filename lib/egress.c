/* SPDX-License-Identifier: MIT */
/* The egress lists' one grammar and one rule of coverage (egress.h), shared by the workers, which
 * check a request against its key's and the operator's, and sandboxctl, which checks a key's. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/egress.h"

static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A host name of n bytes at s, already in lower case: labels of 1 to 63 letters, digits and '-'
 * (not at either end), at least two of them; the last not all digits, and nothing inet_aton()
 * takes for an address ("1.0x1"): an address in any spelling is no name. */
static bool name_valid(const char *s, size_t n) {
        char copy[EGRESS_NAME_MAX + 1];
        size_t label = 0, labels = 1;
        bool digits_only = true;
        struct in_addr a;

        if (n == 0 || n > EGRESS_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (c == '.') {
                        if (label == 0 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        labels++;
                        digits_only = true;
                        continue;
                }
                if (!is_alnum(c) && c != '-')
                        return false;
                if (label == 0 && c == '-')
                        return false;
                if (++label > 63)
                        return false;
                if (c < '0' || c > '9')
                        digits_only = false;
        }
        if (label == 0 || s[n - 1] == '-' || labels < 2 || digits_only)
                return false;
        (void) memcpy(copy, s, n);
        copy[n] = 0;
        return inet_aton(copy, &a) == 0;
}

int egress_rule_parse(const char *s, size_t len, EgressRule *ret) {
        EgressRule r = {};
        const char *colon = memchr(s, ':', len);
        size_t n = colon ? (size_t) (colon - s) : len;

        if (colon) {
                const char *p = colon + 1, *end = s + len;
                unsigned long port = 0;

                /* Digits only, no sign, no leading zero, 1..65535. */
                if (p == end || end - p > 5 || *p == '0')
                        return -EINVAL;
                for (; p < end; p++) {
                        if (*p < '0' || *p > '9')
                                return -EINVAL;
                        port = port * 10 + (unsigned long) (*p - '0');
                }
                if (port > 65535)
                        return -EINVAL;
                r.port = (uint16_t) port;
        }
        if (n >= 2 && s[0] == '*' && s[1] == '.') {
                r.wildcard = true;
                s += 2;
                n -= 2;
        }
        if (n == 0 || n > EGRESS_NAME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                r.name[i] = s[i];
                if (s[i] >= 'A' && s[i] <= 'Z')
                        r.name[i] = (char) ('a' + (s[i] - 'A'));
        }
        r.name[n] = 0;
        if (!name_valid(r.name, n))
                return -EINVAL;
        *ret = r;
        return 0;
}

int egress_rule_format(const EgressRule *rule, char *buf, size_t size) {
        int n;

        if (rule->port)
                n = snprintf(buf, size, "%s%s:%u", rule->wildcard ? "*." : "", rule->name, rule->port);
        else
                n = snprintf(buf, size, "%s%s", rule->wildcard ? "*." : "", rule->name);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

/* Whether name is suffix or a name below it. */
static bool name_under(const char *name, const char *suffix, bool strictly) {
        size_t n = strlen(name), s = strlen(suffix);

        if (n == s)
                return !strictly && strcmp(name, suffix) == 0;
        return n > s && name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

bool egress_rule_covers(const EgressRule *rule, const EgressRule *what) {
        /* Ports: a rule's one port covers that port alone; no port is 80 and 443, which covers
         * either and both. */
        if (rule->port && rule->port != what->port)
                return false;
        if (!rule->port && what->port && what->port != 80 && what->port != 443)
                return false;
        if (!rule->wildcard)
                return !what->wildcard && strcmp(rule->name, what->name) == 0;
        /* "*.s" covers the names below s, and "*.t" for t = s or t below s. */
        return name_under(what->name, rule->name, !what->wildcard);
}

bool egress_list_covers(const EgressList *l, const EgressRule *what) {
        for (size_t i = 0; i < l->n; i++)
                if (egress_rule_covers(&l->rules[i], what))
                        return true;
        return false;
}

static int list_add(EgressList *l, const char *s, size_t len) {
        EgressRule *rules;
        int r;

        if (l->n >= EGRESS_LIST_MAX)
                return -E2BIG;
        rules = realloc(l->rules, (l->n + 1) * sizeof(EgressRule));
        if (!rules)
                return -ENOMEM;
        l->rules = rules;
        r = egress_rule_parse(s, len, &l->rules[l->n]);
        if (r < 0)
                return r;
        l->n++;
        return 0;
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

int egress_list_parse_text(const char *text, size_t len, EgressList *ret, unsigned *ret_line) {
        EgressList l = {};
        const char *p = text, *end = text + len;
        unsigned line = 0;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)), *stop;
                int r;

                eol = eol ? eol : end;
                line++;
                stop = memchr(p, '#', (size_t) (eol - p));
                stop = stop ? stop : eol;
                while (p < stop && is_space(*p))
                        p++;
                while (stop > p && is_space(stop[-1]))
                        stop--;
                if (stop > p) {
                        r = list_add(&l, p, (size_t) (stop - p));
                        if (r < 0) {
                                egress_list_done(&l);
                                if (ret_line)
                                        *ret_line = line;
                                return r;
                        }
                }
                if (eol == end)
                        break;
                p = eol + 1;
        }
        *ret = l;
        return 0;
}

int egress_list_parse_csv(const char *s, EgressList *ret, size_t *ret_index) {
        EgressList l = {};
        size_t index = 0;

        for (const char *p = s;; index++) {
                size_t n = strcspn(p, ",");
                int r = list_add(&l, p, n);

                if (r < 0) {
                        egress_list_done(&l);
                        if (ret_index)
                                *ret_index = index;
                        return r;
                }
                if (!p[n])
                        break;
                p += n + 1;
        }
        *ret = l;
        return 0;
}

void egress_list_done(EgressList *l) {
        free(l->rules);
        *l = (EgressList){};
}
