/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "lib/egress.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_parse(void) {
        static const struct {
                const char *in;
                const char *out; /* formatted back; NULL: -EINVAL */
        } cases[] = {
                {"pypi.org", "pypi.org"},
                {"PyPI.Org", "pypi.org"},
                {"files.pythonhosted.org:443", "files.pythonhosted.org:443"},
                {"*.example.com", "*.example.com"},
                {"*.example.com:8443", "*.example.com:8443"},
                {"a-b.c0.io:1", "a-b.c0.io:1"},
                {"registry.npmjs.org:65535", "registry.npmjs.org:65535"},
                {"x.y.z.example:80", "x.y.z.example:80"},
                /* Refused: no name, one label, addresses, odd ports and characters. */
                {"", NULL},
                {"localhost", NULL},
                {"*.com.", NULL},
                {"example.com.", NULL},
                {".example.com", NULL},
                {"exa mple.com", NULL},
                {"exa_mple.com", NULL},
                {"-a.example.com", NULL},
                {"a-.example.com", NULL},
                {"a..example.com", NULL},
                {"*example.com", NULL},
                {"*.*.example.com", NULL},
                {"a.*.example.com", NULL},
                {"*", NULL},
                {"*.", NULL},
                {"10.0.0.1", NULL},
                {"169.254.169.254", NULL},
                {"0x7f.1", NULL},
                {"127.1", NULL},
                {"1.0x1", NULL},
                {"10.0xa", NULL},
                {"0x7f.0x1", NULL},
                {"[::1]", NULL},
                {"::1", NULL},
                {"example.com:", NULL},
                {"example.com:0", NULL},
                {"example.com:080", NULL},
                {"example.com:65536", NULL},
                {"example.com:-1", NULL},
                {"example.com:+80", NULL},
                {"example.com:80:81", NULL},
                {"example.com:http", NULL},
                {"user@example.com", NULL},
                {"example.com/path", NULL},
                {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", NULL}, /* a label of 64 */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                EgressRule r;
                char out[EGRESS_ENTRY_MAX + 1] = "";
                int ret = egress_rule_parse(cases[i].in, strlen(cases[i].in), &r);

                if (cases[i].out) {
                        tap_ok(ret == 0 && egress_rule_format(&r, out, sizeof(out)) == 0 && strcmp(out, cases[i].out) == 0, "'%s' -> '%s' (got '%s')",
                               cases[i].in, cases[i].out, out);
                } else
                        tap_is_int(ret, -EINVAL, "'%s' is refused", cases[i].in);
        }

        /* A label of 63 is one; a name of 253 is one, 254 is not. */
        char name[300];
        EgressRule r;

        memset(name, 'a', 63);
        memcpy(name + 63, ".com", 5);
        tap_is_int(egress_rule_parse(name, strlen(name), &r), 0, "a label of 63 characters");
        for (size_t i = 0; i < 253; i++)
                name[i] = (i % 2) ? '.' : 'a';
        name[253] = 0;
        tap_is_int(egress_rule_parse(name, 253, &r), 0, "a name of 253 characters");
        name[253] = 'a';
        name[254] = 0;
        tap_is_int(egress_rule_parse(name, 254, &r), -EINVAL, "a name of 254 characters is refused");
        /* len, not the NUL, ends the entry. */
        tap_is_int(egress_rule_parse("pypi.org,npmjs.org", 8, &r), 0, "an entry is len bytes");
        tap_is_str(r.name, "pypi.org", "... and only those");
}

static bool covers(const char *rule, const char *what) {
        EgressRule a, b;

        if (egress_rule_parse(rule, strlen(rule), &a) < 0 || egress_rule_parse(what, strlen(what), &b) < 0)
                return false;
        return egress_rule_covers(&a, &b);
}

static void test_covers(void) {
        static const struct {
                const char *rule, *what;
                bool covers;
        } cases[] = {
                {"pypi.org", "pypi.org", true},
                {"pypi.org", "PYPI.ORG", true},
                {"pypi.org", "pypi.org:443", true},
                {"pypi.org", "pypi.org:80", true},
                {"pypi.org", "pypi.org:8080", false},
                {"pypi.org", "www.pypi.org", false},
                {"pypi.org", "*.pypi.org", false},
                {"pypi.org:443", "pypi.org:443", true},
                {"pypi.org:443", "pypi.org", false}, /* 80 too */
                {"pypi.org:443", "pypi.org:80", false},
                {"pypi.org:8443", "pypi.org:8443", true},
                {"*.example.com", "a.example.com", true},
                {"*.example.com", "a.b.example.com:443", true},
                {"*.example.com", "example.com", false},
                {"*.example.com", "badexample.com", false},
                {"*.example.com", "a.example.com.evil.org", false},
                {"*.example.com", "*.example.com", true},
                {"*.example.com", "*.a.example.com", true},
                {"*.a.example.com", "*.example.com", false},
                {"*.example.com:8443", "a.example.com", false},
                {"*.example.com:8443", "a.example.com:8443", true},
                {"a.example.com", "*.example.com", false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(covers(cases[i].rule, cases[i].what) == cases[i].covers, "'%s' %s '%s'", cases[i].rule,
                       cases[i].covers ? "covers" : "does not cover", cases[i].what);
}

static void test_lists(void) {
        static const char file[] = "# what sandboxes may reach\n"
                                   "pypi.org\n"
                                   "  files.pythonhosted.org   # wheels\n"
                                   "\n"
                                   "*.example.com:8443\r\n"
                                   "registry.npmjs.org";
        EgressList l = {};
        EgressRule what;
        unsigned line = 0;
        size_t index = 0;

        tap_is_int(egress_list_parse_text(file, strlen(file), &l, &line), 0, "the operator's file parses");
        tap_is_int((long long) l.n, 4, "... to its 4 entries");
        (void) egress_rule_parse("registry.npmjs.org:443", 22, &what);
        tap_ok(egress_list_covers(&l, &what), "... the last line without a newline among them");
        (void) egress_rule_parse("a.example.com", 13, &what);
        tap_ok(!egress_list_covers(&l, &what), "... a port the wildcard does not name is not covered");
        egress_list_done(&l);

        tap_is_int(egress_list_parse_text("", 0, &l, &line), 0, "an empty file is an empty list");
        tap_is_int((long long) l.n, 0, "... of no entry");
        tap_ok(!egress_list_covers(&l, &what), "... which covers nothing");
        egress_list_done(&l);

        tap_is_int(egress_list_parse_text("pypi.org\n\n10.0.0.1\n", 19, &l, &line), -EINVAL, "an address in the file is refused");
        tap_is_int(line, 3, "... naming its line");
        tap_ok(l.n == 0 && !l.rules, "... and leaving no list");

        tap_is_int(egress_list_parse_csv("pypi.org,*.pythonhosted.org,example.com:8443", &l, &index), 0, "a key's list parses");
        tap_is_int((long long) l.n, 3, "... to its 3 entries");
        egress_list_done(&l);
        tap_is_int(egress_list_parse_csv("pypi.org,,npmjs.org", &l, &index), -EINVAL, "an empty entry is refused");
        tap_is_int((long long) index, 1, "... naming its index");
        tap_is_int(egress_list_parse_csv("", &l, &index), -EINVAL, "an empty key list is refused");

        char big[EGRESS_LIST_MAX * 8 + 16] = "";
        size_t n = 0;

        for (int i = 0; i <= EGRESS_LIST_MAX; i++)
                n += (size_t) snprintf(big + n, sizeof(big) - n, "a%d.io\n", i);
        tap_is_int(egress_list_parse_text(big, n, &l, &line), -E2BIG, "more than %d entries are refused", EGRESS_LIST_MAX);
}

int main(void) {
        test_parse();
        test_covers();
        test_lists();
        return tap_done();
}
