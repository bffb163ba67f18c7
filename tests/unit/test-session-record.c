/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/session-record.h"
#include "tests/unit/tap.h"

static void test_round_trip(void) {
        Session s[3] = {
                {.id = "session-m1-abcdefghijkl", .state = "active", .ttl_s = 600, .created_at = 1796296584.25, .last_used = 1796296590.5,
                 .run_count = 3, .up = true, .key_name = "team-a"},
                {.id = "session-m1-bcdefghijklm", .state = "paused", .ttl_s = 60, .created_at = 1, .last_used = 2, .paused_at = 3, .state_reset = true},
                {.id = "session-m1-cdefghijklmn", .state = "pausing", .ttl_s = 60, .created_at = 1, .last_used = 2, .up = true},
        };
        Session *back = NULL;
        size_t n = 0;
        char *json = session_record_format(s, 3);

        tap_ok(json != NULL, "sessions formatted");
        tap_is_int(session_record_parse(json, &back, &n), 0, "... and parsed back");
        tap_is_int((int) n, 3, "... three of them: active, paused, pausing");
        tap_ok(back && memcmp(back, s, sizeof(s)) == 0, "... the same rows");
        free(back);
        free(json);
        json = session_record_format(NULL, 0);
        tap_is_str(json, "[]", "no session: an empty list");
        tap_is_int(session_record_parse(json, &back, &n), 0, "... parsed back");
        tap_is_int((int) n, 0, "... empty");
        free(back);
        free(json);
}

static void test_refused(void) {
        static const char *const bad[] = {
                "",
                "{}",
                "[{}]",
                "[{\"session_id\":\"sandbox-abcdefghijkl\",\"state\":\"active\",\"ttl_s\":1,\"created_at\":1,\"last_used\":1,\"paused_at\":0,"
                "\"run_count\":0,\"up\":true,\"state_reset\":false,\"key_name\":\"\"}",
                "[{\"session_id\":\"session-m1-abcdefghijkl\",\"state\":\"deleted\",\"ttl_s\":1,\"created_at\":1,\"last_used\":1,\"paused_at\":0,"
                "\"run_count\":0,\"up\":false,\"state_reset\":false,\"key_name\":\"\"}",
                "[{\"session_id\":\"session-m1-abcdefghijkl\",\"state\":\"gone\",\"ttl_s\":1,\"created_at\":1,\"last_used\":1,\"paused_at\":0,"
                "\"run_count\":0,\"up\":true,\"state_reset\":false,\"key_name\":\"\"}",
                "[{\"session_id\":\"session-m1-abcdefghijkl\",\"state\":\"active\",\"ttl_s\":1,\"created_at\":1,\"last_used\":1,\"paused_at\":0,"
                "\"run_count\":0,\"up\":true,\"state_reset\":false,\"key_name\":\"a b\"}",
                "[{\"session_id\":\"session-m1-abcdefghijkl\",\"state\":\"active\",\"ttl_s\":-1,\"created_at\":1,\"last_used\":1,\"paused_at\":0,"
                "\"run_count\":0,\"up\":true,\"state_reset\":false,\"key_name\":\"\"}",
        };
        Session *back = NULL;
        size_t n;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(session_record_parse(bad[i], &back, &n), -EBADMSG, "sessions record %zu refused", i);
}

int main(void) {
        test_round_trip();
        test_refused();
        return tap_done();
}
