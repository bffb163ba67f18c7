/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/egress/audit-line.h"
#include "tests/unit/tap.h"

/* What a line says: 'R' refused, 'G' reached (went), 'A' aside, with the name kept. */
static void check(const char *text, char want, const char *want_host) {
        char line[1024];
        AuditLine l;
        char got;

        (void) snprintf(line, sizeof(line), "%s", text);
        if (!tap_is_int(audit_line_parse(line, &l), 0, "parsed: %s", text))
                return;
        got = l.refused ? 'R' : l.reached ? 'G' : l.aside ? 'A' : '-';
        if (l.refused + l.reached + l.aside > 1)
                got = '!';
        tap_is_int(got, want, "%s: %c", text, want);
        tap_is_str(l.host, want_host, "%s: the name kept", text);
}

static void test_squid(void) {
        check("127.64.0.1 40000 TCP_TUNNEL/200 www.example.org -", 'G', "www.example.org");
        check("127.64.0.1 40000 TCP_DENIED/403 other.example.org -", 'R', "other.example.org");
        /* A tunnel cut for its SNI: refused, whatever its status says. */
        check("127.64.0.1 40000 TCP_TUNNEL/200 www.example.org terminate", 'R', "www.example.org");
        /* A peek decides nothing. */
        check("127.64.0.1 40000 NONE_NONE/000 www.example.org peek", '-', "www.example.org");
}

static void test_front(void) {
        /* Went to the host: answered, cut by the client while the body came, or found malformed
         * by HAProxy after the request's start had gone (P first, but H second). */
        check("127.64.0.1 40000 FRONT_--/200 www.example.org -", 'G', "www.example.org");
        check("127.64.0.1 40000 FRONT_CD/200 www.example.org -", 'G', "www.example.org");
        check("127.64.0.1 40000 FRONT_PH/400 www.example.org -", 'G', "www.example.org");
        check("127.64.0.1 40000 FRONT_SH/502 www.example.org -", 'G', "www.example.org");
        /* Refused by its rules or its parser: with a name when it had one. */
        check("127.64.0.1 40000 FRONT_PR/403 other.example.org -", 'R', "other.example.org");
        check("127.64.0.1 40000 FRONT_PR/400 - -", 'R', "");
        /* Not refused, not reached: a name the resolver did not know; a client that went before
         * anything did; a host that refused the connection. */
        check("127.64.0.1 40000 FRONT_PR/502 nowhere.example.org unresolved", 'A', "nowhere.example.org");
        check("127.64.0.1 40000 FRONT_CR/400 - -", 'A', "");
        check("127.64.0.1 40000 FRONT_SC/503 www.example.org -", 'A', "www.example.org");
}

static void test_not_ours(void) {
        AuditLine l;
        const char *bad[] = {
                "127.64.0.1 40000 FRONT_PR/403 a b c -", /* a name with spaces: more fields */
                "127.64.0.1 40000 FRONT_PR/403",
                "host 40000 FRONT_--/200 www.example.org -",
                "127.64.0.1 0 FRONT_--/200 www.example.org -",
                "127.64.0.1 65536 FRONT_--/200 www.example.org -",
                "",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char line[256];

                (void) snprintf(line, sizeof(line), "%s", bad[i]);
                tap_is_int(audit_line_parse(line, &l), -EINVAL, "not ours: '%s'", bad[i]);
        }
        /* A name with what no name has: the line counts, the name is not kept. */
        check("127.64.0.1 40000 FRONT_PR/403 a\x1b[0m -", 'R', "");
}

int main(void) {
        test_squid();
        test_front();
        test_not_ours();
        return tap_done();
}
