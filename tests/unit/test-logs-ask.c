/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/logs-ask.h"
#include "tests/unit/tap.h"

int main(void) {
        static const char *const bad[] = {
                "",
                "{}",
                "{\"request_id\":\"abc\"}",
                "{\"request_id\":\"abc\",\"lease\":\"0\"}",
                "{\"request_id\":\"abc\",\"lease\":\"12x\"}",
                "{\"request_id\":\"abc\",\"lease\":12}",
                "{\"request_id\":\"ABC\",\"lease\":\"12\"}",
                "{\"request_id\":\"a b\",\"lease\":\"12\"}",
                "{\"request_id\":\"\",\"lease\":\"12\"}",
        };
        char id[LOGS_REQUEST_ID_MAX];
        int64_t lease = 0;
        char *json = NULL;

        tap_is_int(logs_ask_format("98c32a1835d6bd669f65438104ec5fd7", 875847029679204129, &json), 0, "ask formatted");
        tap_is_int(logs_ask_parse(json, id, &lease), 0, "... and parsed back");
        tap_is_str(id, "98c32a1835d6bd669f65438104ec5fd7", "... the same request id");
        tap_ok(lease == 875847029679204129, "... the same lease");
        free(json);
        json = NULL;
        tap_is_int(logs_ask_format("x\"y", 1, &json), -EINVAL, "a request id that is not hex refused");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(logs_ask_parse(bad[i], id, &lease), -EBADMSG, "ask %zu refused", i);
        return tap_done();
}
