/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "cluster/haproxy-cli.h"
#include "tests/unit/tap.h"

/* Lines as HAProxy 2.6.12 (Debian 12) printed them for "show servers state work": the format's
 * version, the header, a server from the config, a disabled one on IPv6, one added at run time. */
static void test_server_state(void) {
        static const struct {
                const char *line;
                int r;
                const char *name, *addr;
                unsigned port;
                const char *agent_addr;
                unsigned agent_port;
        } cases[] = {
                {"1", -ENOENT, NULL, NULL, 0, NULL, 0},
                {"", -ENOENT, NULL, NULL, 0, NULL, 0},
                {"# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight "
                 "srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state "
                 "bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr "
                 "srv_agent_addr srv_agent_port",
                 -ENOENT, NULL, NULL, 0, NULL, 0},
                {"2 work 1 m1 127.0.0.1 2 0 100 100 2 1 0 2 0 0 0 0 - 18080 - 0 0 - 127.0.0.1 18081", 0, "m1", "127.0.0.1", 18080, "127.0.0.1", 18081},
                {"2 work 2 m2 ::1 0 5 100 100 2 1 0 0 8 0 0 0 - 18090 - 0 0 - ::1 18091", 0, "m2", "::1", 18090, "::1", 18091},
                {"2 work 3 m3 10.0.0.3 0 1 100 100 0 1 0 0 2 18 0 0 - 8080 - 0 0 - 10.0.0.3 8081", 0, "m3", "10.0.0.3", 8080, "10.0.0.3", 8081},
                /* Cut short, or one field missing: nothing guessed. */
                {"2 work 3 m3 10.0.0.3 0 1 100 100 0 1 0 0 2 18 0 0 - 8080", -EBADMSG, NULL, NULL, 0, NULL, 0},
                {"2 work 3 m3 10.0.0.3 0 1 100 100 0 1 0 0 2 18 0 - 8080 - 0 0 - 10.0.0.3 8081", -EBADMSG, NULL, NULL, 0, NULL, 0},
                {"2 work 3 m3 10.0.0.3 0 1 100 100 0 1 0 0 2 18 0 0 - 80x - 0 0 - 10.0.0.3 8081", -EBADMSG, NULL, NULL, 0, NULL, 0},
                {"2 work 3 m3 10.0.0.3 0 1 100 100 0 1 0 0 2 18 0 0 - 8080 - 0 0 - 10.0.0.3 0", -EBADMSG, NULL, NULL, 0, NULL, 0},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                HaproxyServerState s = {};
                int r = haproxy_server_state_parse(cases[i].line, &s);

                tap_is_int(r, cases[i].r, "state line %zu: %d", i, cases[i].r);
                if (cases[i].r < 0 || r < 0)
                        continue;
                tap_is_str(s.name, cases[i].name, "... server %s", cases[i].name);
                tap_is_str(s.addr, cases[i].addr, "... at %s", cases[i].addr);
                tap_is_int(s.port, cases[i].port, "... port %u", cases[i].port);
                tap_is_str(s.agent_addr, cases[i].agent_addr, "... agent at %s", cases[i].agent_addr);
                tap_is_int(s.agent_port, cases[i].agent_port, "... agent port %u", cases[i].agent_port);
        }
}

int main(void) {
        test_server_state();
        return tap_done();
}
