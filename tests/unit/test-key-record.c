/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/key-record.h"
#include "tests/unit/tap.h"

#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_round_trip(void) {
        ApiKey k = {.name = "team-a", .token_sha256 = HASH, .max_concurrent = 4, .executions_per_minute = 60, .cpu_seconds_per_day = 3600,
                    .max_sessions = 2, .max_paused_sessions = 5, .session_disk_bytes = 1 << 20, .created_at = "2026-12-03T11:00:00.000Z",
                    .images = "demo-agent", .egress = "none"},
               back;
        char *json = key_record_format(&k);

        tap_ok(json != NULL, "key formatted");
        tap_is_int(key_record_parse(json, &back), 0, "... and parsed back");
        tap_ok(memcmp(&k, &back, sizeof(k)) == 0, "... the same key");
        tap_ok(strstr(json, "token\"") == NULL, "... with no token, only its hash");
        free(json);
}

static void test_refused(void) {
        static const char *const bad[] = {
                "",
                "{}",
                "[]",
                /* A hash that is not 64 lower-case hex digits. */
                "{\"name\":\"a\",\"token_sha256\":\"ABC\",\"created_at\":\"x\",\"revoked_at\":\"\",\"images\":\"\",\"egress\":\"\","
                "\"max_concurrent\":0,\"executions_per_minute\":0,\"cpu_seconds_per_day\":0,\"max_sessions\":0,"
                "\"max_paused_sessions\":0,\"session_disk_bytes\":0}",
                /* A name lib/api-key.h refuses. */
                "{\"name\":\"-a\",\"token_sha256\":\"" HASH "\",\"created_at\":\"x\",\"revoked_at\":\"\",\"images\":\"\",\"egress\":\"\","
                "\"max_concurrent\":0,\"executions_per_minute\":0,\"cpu_seconds_per_day\":0,\"max_sessions\":0,"
                "\"max_paused_sessions\":0,\"session_disk_bytes\":0}",
                /* A negative quota. */
                "{\"name\":\"a\",\"token_sha256\":\"" HASH "\",\"created_at\":\"x\",\"revoked_at\":\"\",\"images\":\"\",\"egress\":\"\","
                "\"max_concurrent\":-1,\"executions_per_minute\":0,\"cpu_seconds_per_day\":0,\"max_sessions\":0,"
                "\"max_paused_sessions\":0,\"session_disk_bytes\":0}",
                /* A field missing. */
                "{\"name\":\"a\",\"token_sha256\":\"" HASH "\",\"created_at\":\"x\",\"revoked_at\":\"\",\"images\":\"\","
                "\"max_concurrent\":0,\"executions_per_minute\":0,\"cpu_seconds_per_day\":0,\"max_sessions\":0,"
                "\"max_paused_sessions\":0,\"session_disk_bytes\":0}",
        };
        ApiKey k;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(key_record_parse(bad[i], &k), -EBADMSG, "key record %zu refused", i);
}

int main(void) {
        test_round_trip();
        test_refused();
        return tap_done();
}
