/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/usage-record.h"
#include "tests/unit/tap.h"

static void test_round_trip(void) {
        UsageRow rows[3] = {
                {.key = "team-a", .kind = "in_flight", .amount = 2},
                {.key = "team-a", .kind = "exec", .end_ms = 1796296585000, .amount = 3},
                {.key = "b.c_d", .kind = "cpu", .end_ms = 1796296620000, .amount = 1840},
        };
        UsageRow *back = NULL;
        size_t n = 0;
        char *json = usage_record_format(rows, 3);

        tap_ok(json != NULL, "usage formatted");
        tap_is_int(usage_record_parse(json, &back, &n), 0, "... and parsed back");
        tap_is_int((int) n, 3, "... three rows");
        tap_ok(back && memcmp(back, rows, sizeof(rows)) == 0, "... the same rows");
        free(back);
        free(json);
}

static void test_refused(void) {
        static const char *const bad[] = {
                "",
                "[]",
                "{}",
                "{\"rows\":[[\"a\",\"exec\",1]]}",
                "{\"rows\":[[\"a\",\"sessions_active\",0,1]]}", /* not a usage record's kind */
                "{\"rows\":[[\"a b\",\"exec\",0,1]]}",
                "{\"rows\":[[\"a\",\"exec\",0,-1]]}",
                "{\"rows\":[[\"a\",\"exec\",\"0\",1]]}",
                "{\"rows\":[[\"\",\"exec\",0,1]]}",
        };
        UsageRow *back = NULL;
        size_t n;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(usage_record_parse(bad[i], &back, &n), -EBADMSG, "usage record %zu refused", i);
        tap_is_int(usage_kind_valid("cpu"), 1, "cpu is a kind");
        tap_is_int(usage_kind_valid("sessions_paused"), 0, "sessions_paused is not one of a usage record's");
}

int main(void) {
        test_round_trip();
        test_refused();
        return tap_done();
}
