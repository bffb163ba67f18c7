/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/socket-util.h"
#include "tests/unit/tap.h"

static void test_port(void) {
        static const struct {
                const char *s;
                int r;
                unsigned port;
        } cases[] = {
                {"1", 0, 1},
                {"8080", 0, 8080},
                {"65535", 0, 65535},
                {"0", -EINVAL, 0},
                {"65536", -EINVAL, 0},
                {"99999999999999999999", -EINVAL, 0},
                {"", -EINVAL, 0},
                {"080", -EINVAL, 0},
                {"+80", -EINVAL, 0},
                {" 80", -EINVAL, 0},
                {"80 ", -EINVAL, 0},
                {"0x50", -EINVAL, 0},
                {"-1", -EINVAL, 0},
                {"8 0", -EINVAL, 0},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint16_t port = 7;
                int r = socket_port_parse(cases[i].s, &port);

                tap_is_int(r, cases[i].r, "port '%s': %d", cases[i].s, cases[i].r);
                tap_is_int(port, cases[i].r == 0 ? cases[i].port : 7, "... %s", cases[i].r == 0 ? "its value" : "output untouched");
        }
}

static void test_address(void) {
        static const struct {
                const char *s;
                int r;
                const char *host;
                unsigned port;
                bool bracketed;
        } cases[] = {
                {"10.0.0.1:8080", 0, "10.0.0.1", 8080, false},
                {"host-1.example:80", 0, "host-1.example", 80, false},
                {"localhost:1", 0, "localhost", 1, false},
                {"[fd00::1]:8080", 0, "fd00::1", 8080, true},
                {"[::1]:65535", 0, "::1", 65535, true},
                {"[::ffff:10.0.0.1]:80", 0, "::ffff:10.0.0.1", 80, true},
                /* No port, or one out of range. */
                {"10.0.0.1", -EINVAL, NULL, 0, false},
                {"10.0.0.1:", -EINVAL, NULL, 0, false},
                {"10.0.0.1:0", -EINVAL, NULL, 0, false},
                {"10.0.0.1:65536", -EINVAL, NULL, 0, false},
                {"10.0.0.1:80x", -EINVAL, NULL, 0, false},
                {"10.0.0.1:-80", -EINVAL, NULL, 0, false},
                /* No host. */
                {":80", -EINVAL, NULL, 0, false},
                {"[]:80", -EINVAL, NULL, 0, false},
                {"", -EINVAL, NULL, 0, false},
                /* IPv6 without brackets: its last group would be taken for the port. */
                {"::1:80", -EINVAL, NULL, 0, false},
                {"fd00::1", -EINVAL, NULL, 0, false},
                /* Brackets that do not enclose exactly the host. */
                {"[fd00::1:8080", -EINVAL, NULL, 0, false},
                {"[fd00::1]8080", -EINVAL, NULL, 0, false},
                {"fd00::1]:8080", -EINVAL, NULL, 0, false},
                {"[fd00::1]]:8080", -EINVAL, NULL, 0, false},
                {"[[fd00::1]]:8080", -EINVAL, NULL, 0, false},
                {"[10.0.0.1]:80", -EINVAL, NULL, 0, false},
                {"[::1]", -EINVAL, NULL, 0, false},
                /* A host longer than a DNS name may be. */
                {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:80",
                 -EINVAL, NULL, 0, false},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SocketAddress a = {.host = "untouched"};
                int r = socket_address_parse(cases[i].s, &a);

                tap_is_int(r, cases[i].r, "address '%.40s': %d", cases[i].s, cases[i].r);
                if (cases[i].r < 0) {
                        tap_is_str(a.host, "untouched", "... output untouched");
                        continue;
                }
                tap_is_str(a.host, cases[i].host, "... host '%s'", cases[i].host);
                tap_is_int(a.port, cases[i].port, "... port %u", cases[i].port);
                tap_is_int(a.bracketed, cases[i].bracketed, "... bracketed: %d", cases[i].bracketed);
        }
}

static void test_peer(void) {
        int sv[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                tap_skip("no socketpair", "peer credentials");
                return;
        }
        tap_ok(socket_peer_allowed(sv[0], geteuid()), "a peer of the same user is allowed");
        tap_ok(geteuid() == 0 || !socket_peer_allowed(sv[0], geteuid() + 1), "... one of another user is not, unless root");
        tap_ok(!socket_peer_allowed(-1, geteuid()), "... and no socket says nothing");
        (void) close(sv[0]);
        (void) close(sv[1]);
}

int main(void) {
        test_port();
        test_address();
        test_peer();
        return tap_done();
}
