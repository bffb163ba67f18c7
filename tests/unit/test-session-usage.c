/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "nspawn/pool/session-usage.h"
#include "tests/unit/tap.h"

int main(void) {
        static const struct {
                const char *reply;
                int expected;
                long long cpu_ms;
        } cases[] = {
                {"{\"status\":200,\"cpu_ms\":10230,\"cpu_source\":\"cgroup\"}", 0, 10230},
                {"{\"status\":200,\"cpu_ms\":0,\"cpu_source\":\"none\"}", 0, 0},
                {"{\"status\":200,\"cpu_ms\":7}", 0, 7},
                {"{\"cpu_ms\":7,\"status\":200}", 0, 7},
                {"{\"status\":400,\"error\":\"unknown op\"}", -EBADMSG, 0},
                {"{\"status\":200}", -EBADMSG, 0},
                {"{\"status\":200,\"cpu_ms\":-5}", -EBADMSG, 0},
                {"{\"status\":200,\"cpu_ms\":12x}", -EBADMSG, 0},
                {"{\"status\":200,\"cpu_ms\":99999999999999999999999}", -EBADMSG, 0},
                {"[1]", -EBADMSG, 0},
                {"", -EBADMSG, 0},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int64_t cpu = -1;
                int r = session_usage_parse(cases[i].reply, strlen(cases[i].reply), &cpu);

                tap_is_int(r, cases[i].expected, "'%s': %s", cases[i].reply, cases[i].expected == 0 ? "read" : "refused");
                if (cases[i].expected == 0)
                        tap_is_int(cpu, cases[i].cpu_ms, "'%s': its cpu_ms", cases[i].reply);
        }
        {
                static const char nul[] = "{\"status\":200,\"cpu_ms\":1}\0junk";
                int64_t cpu = -1;

                tap_is_int(session_usage_parse(nul, sizeof(nul) - 1, &cpu), -EBADMSG, "a NUL inside the reply: refused");
        }
        tap_is_int(session_usage_parse(NULL, 0, NULL), -EBADMSG, "no reply: refused");
        return tap_done();
}
