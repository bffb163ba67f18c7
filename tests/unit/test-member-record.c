/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/member-record.h"
#include "tests/unit/tap.h"

static void test_round_trip(void) {
        MemberRecord m = {.name = "m1", .address = "10.0.0.1:8080", .agent = "10.0.0.1:8081", .draining = true, .warm = 2, .in_flight = 1, .max = 128, .target = 3, .created_total = 40, .sessions_active = 1, .sessions_paused = 4},
                     back = {};
        char *json = member_record_format(&m);

        tap_ok(json != NULL, "record formatted");
        tap_is_int(member_record_parse(json, &back), 0, "... and parsed back");
        tap_ok(memcmp(&m, &back, sizeof(m)) == 0, "... the same record");
        free(json);
}

static void test_refused(void) {
        static const char *const bad[] = {
                "",
                "[]",
                "{\"name\":\"m1\"}",
                /* A line break in an address would be a second HAProxy command. */
                "{\"name\":\"m1\",\"address\":\"10.0.0.1:8080\\nshutdown\",\"agent\":\"10.0.0.1:8081\",\"state\":\"ready\","
                "\"pool\":{\"warm\":0,\"in_flight\":0,\"starting\":0,\"waiting\":0,\"max\":1,\"target\":1,\"created_total\":0},"
                "\"sessions\":{\"active\":0,\"paused\":0}}",
                "{\"name\":\"M1\",\"address\":\"10.0.0.1:8080\",\"agent\":\"10.0.0.1:8081\",\"state\":\"ready\","
                "\"pool\":{\"warm\":0,\"in_flight\":0,\"starting\":0,\"waiting\":0,\"max\":1,\"target\":1,\"created_total\":0},"
                "\"sessions\":{\"active\":0,\"paused\":0}}",
                "{\"name\":\"m1\",\"address\":\"10.0.0.1:8080\",\"agent\":\"10.0.0.1:8081\",\"state\":\"gone\","
                "\"pool\":{\"warm\":0,\"in_flight\":0,\"starting\":0,\"waiting\":0,\"max\":1,\"target\":1,\"created_total\":0},"
                "\"sessions\":{\"active\":0,\"paused\":0}}",
                "{\"name\":\"m1\",\"address\":\"10.0.0.1:8080\",\"agent\":\"10.0.0.1:8081\",\"state\":\"ready\","
                "\"pool\":{\"warm\":-1,\"in_flight\":0,\"starting\":0,\"waiting\":0,\"max\":1,\"target\":1,\"created_total\":0},"
                "\"sessions\":{\"active\":0,\"paused\":0}}",
        };
        MemberRecord m;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(member_record_parse(bad[i], &m), -EBADMSG, "record %zu refused", i);
}

static void test_addresses(void) {
        static const struct {
                const char *address;
                bool valid;
                const char *agent;
        } cases[] = {
                {"10.0.0.1:8080", true, "10.0.0.1:8081"},
                {"host-1.example:80", true, "host-1.example:81"},
                {"[fd00::1]:8080", true, "[fd00::1]:8081"},
                {"10.0.0.1:65535", true, NULL},
                {"10.0.0.1", false, NULL},
                {"10.0.0.1:0", false, NULL},
                {"10.0.0.1:65536", false, NULL},
                {"10.0.0.1:80x", false, NULL},
                {":80", false, NULL},
                {"a b:80", false, NULL},
                {"-x:80", false, NULL},
                {"[fd00::1:8080", false, NULL},
                {"10.0.0.1:8080\n", false, NULL},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char agent[MEMBER_ADDRESS_MAX] = "";

                tap_is_int(member_address_valid(cases[i].address), cases[i].valid, "address '%s' valid: %d", cases[i].address, cases[i].valid);
                tap_is_int(member_agent_address(cases[i].address, agent), cases[i].agent ? 0 : -EINVAL, "... agent address");
                if (cases[i].agent)
                        tap_is_str(agent, cases[i].agent, "... is '%s'", cases[i].agent);
        }
}

static void test_drain_path(void) {
        char path[64];
        size_t dir = 0;

        tap_is_int(member_drain_path("/var/lib/sandboxd/db/sandboxd.db", path, sizeof(path), &dir), 0, "drain path");
        tap_is_str(path, "/var/lib/sandboxd/db/member-drain", "... beside the database");
        tap_is_int((int) dir, (int) strlen("/var/lib/sandboxd/db"), "... its directory's length");
        tap_is_int(member_drain_path("/var/lib/sandboxd/db/sandboxd.db", path, 20, &dir), -ENAMETOOLONG, "too small a buffer refused");
}

int main(void) {
        test_drain_path();
        test_round_trip();
        test_refused();
        test_addresses();
        return tap_done();
}
