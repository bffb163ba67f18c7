/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "fcgi/inflight.h"
#include "tests/unit/tap.h"

static void test_load(void) {
        static const struct {
                const char *method, *path;
                Load want;
        } cases[] = {
                {"GET", "/v1/pool", LOAD_CONTROL},
                {"GET", "/metrics", LOAD_CONTROL},
                {"GET", "/v1/openapi.json", LOAD_CONTROL},
                {"GET", "/v1/runtimes", LOAD_CONTROL},
                {"GET", "/v1/sessions", LOAD_CONTROL},
                {"GET", "/v1/sessions/session-abcdefghijkl", LOAD_CONTROL},
                {"GET", "/nowhere", LOAD_CONTROL},   /* a 404 */
                {"DELETE", "/v1/pool", LOAD_CONTROL}, /* a 405 */
                {"POST", "/v1/execute", LOAD_WORK},
                {"POST", "/execute", LOAD_WORK},
                {"POST", "/v1/call", LOAD_WORK},
                {"POST", "/v1/sessions", LOAD_WORK},
                {"DELETE", "/v1/sessions/session-abcdefghijkl", LOAD_WORK},
                {"POST", "/v1/sessions/session-abcdefghijkl/run", LOAD_WORK},
                {"GET", "/v1/sessions/session-abcdefghijkl/files", LOAD_WORK},
                {"GET", "/v1/sessions/session-abcdefghijkl/files/a.txt", LOAD_WORK},
                {"PUT", "/v1/sessions/session-abcdefghijkl/files/a.txt", LOAD_WORK},
                {"POST", "/session/session-abcdefghijkl/run", LOAD_WORK},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int(inflight_load(cases[i].method, cases[i].path, cases[i].path), cases[i].want, "%s %s is %s", cases[i].method,
                           cases[i].path, cases[i].want == LOAD_WORK ? "work" : "control");
}

static void test_bounds(void) {
        Inflight *f = inflight_new();

        tap_ok(f != NULL, "the shared page is mapped");
        if (!f)
                return;
        tap_is_int(inflight_take(f, 0, LOAD_WORK, 2), 0, "a first place of work is taken");
        tap_is_int(inflight_take(f, 1, LOAD_WORK, 2), 0, "a second, by another worker");
        tap_is_int(inflight_take(f, 0, LOAD_WORK, 2), -EBUSY, "a third is over the bound");
        tap_is_int(inflight_count(f, LOAD_WORK), 2, "a refusal leaves the count as it was");
        tap_is_int(inflight_take(f, 0, LOAD_CONTROL, 1), 0, "control has places of its own while work is full");
        tap_is_int(inflight_take(f, 1, LOAD_CONTROL, 1), -EBUSY, "and a bound of its own");

        inflight_give_back(f, 1, LOAD_WORK);
        tap_is_int(inflight_count(f, LOAD_WORK), 1, "a place given back is free");
        /* Worker 0 dies holding one of work and one of control. */
        inflight_release_worker(f, 0);
        tap_is_int(inflight_count(f, LOAD_WORK), 0, "a dead worker's work places are free");
        tap_is_int(inflight_count(f, LOAD_CONTROL), 0, "and its control places");
        tap_is_int(inflight_take(f, 1, LOAD_WORK, 2), 0, "after which places are taken again");
        tap_is_int(inflight_take(f, 1, LOAD_WORK, 2), 0, "up to the bound");
        tap_is_int(inflight_take(f, 1, LOAD_WORK, 2), -EBUSY, "and not past it");
}

int main(void) {
        test_load();
        test_bounds();
        return tap_done();
}
