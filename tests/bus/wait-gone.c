/* SPDX-License-Identifier: MIT */
/* sandbox_wait_gone() against a real systemd (not a unit test: it starts units on the system bus,
 * as root, under sandboxd's systemd). TAP. tests/bats/broker.bats runs it, and counts under strace
 * what the wait sends while a unit runs: a poll would send two calls every few milliseconds.
 *
 * Usage: wait-gone all   every case below
 *        wait-gone ends  only the wait for a unit that ends after SLEEP_S (for strace -c) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/sandbox.h"
#include "tests/unit/tap.h"

#define SLEEP_S "1"
#define SLEEP_USEC USEC_PER_SEC
/* How late the wait may see the end: a signal's trip, not a poll's period; generous for a loaded host. */
#define LATE_USEC (400 * USEC_PER_MSEC)

static int start_sleep(sd_bus *bus, const char *unit, const char *seconds) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sv)", 3,
                                          "CollectMode", "s", "inactive-or-failed",
                                          "Type", "s", "exec",
                                          "ExecStart", "a(sasb)", 1, "/bin/sleep", 2, "/bin/sleep", seconds, false);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call(bus, m, 10 * USEC_PER_SEC, &error, NULL);
        if (r < 0)
                tap_diag("starting %s: %s", unit, error.message ? error.message : strerror(-r));
        return r;
}

static void stop(sd_bus *bus, const char *unit) {
        (void) sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                  "StopUnit", NULL, NULL, "ss", unit, "replace");
}

/* A unit that ends by itself: the wait returns once it has ended, and promptly. */
static void test_ends(sd_bus *bus, const char *unit) {
        uint64_t t0, dt;
        int r;

        if (start_sleep(bus, unit, SLEEP_S) < 0) {
                tap_ok(false, "a unit of %s s started", SLEEP_S);
                return;
        }
        t0 = now_usec(CLOCK_MONOTONIC);
        r = sandbox_wait_gone(bus, unit, 15 * USEC_PER_SEC);
        dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(r == 0, "the wait for a unit that ends returns 0 (%d)", r);
        tap_ok(dt + 50 * USEC_PER_MSEC >= SLEEP_USEC && dt <= SLEEP_USEC + LATE_USEC,
               "it returns when the unit has ended: after %.3f s for a %s s unit", (double) dt / USEC_PER_SEC, SLEEP_S);
}

static void test_cases(sd_bus *bus, const char *gone, const char *long_unit) {
        uint64_t t0, dt;
        int r;

        t0 = now_usec(CLOCK_MONOTONIC);
        r = sandbox_wait_gone(bus, gone, 15 * USEC_PER_SEC);
        dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(r == 0 && dt < 200 * USEC_PER_MSEC, "a unit that never was: 0 at once (%d after %.3f s)", r, (double) dt / USEC_PER_SEC);

        if (start_sleep(bus, long_unit, "30") < 0) {
                tap_ok(false, "a unit of 30 s started");
                return;
        }
        r = sandbox_wait_gone(bus, long_unit, 0);
        tap_ok(r == -ETIME, "timeout 0 on a running unit: -ETIME at once (%d)", r);
        t0 = now_usec(CLOCK_MONOTONIC);
        r = sandbox_wait_gone(bus, long_unit, 500 * USEC_PER_MSEC);
        dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(r == -ETIME && dt >= 500 * USEC_PER_MSEC && dt < 500 * USEC_PER_MSEC + LATE_USEC,
               "a unit that runs on: -ETIME at the deadline (%d after %.3f s)", r, (double) dt / USEC_PER_SEC);
        stop(bus, long_unit);
        r = sandbox_wait_gone(bus, long_unit, 15 * USEC_PER_SEC);
        tap_ok(r == 0, "once stopped: 0 (%d)", r);
        r = sandbox_wait_gone(bus, long_unit, 0);
        tap_ok(r == 0, "and timeout 0 then sees it gone (%d)", r);
}

int main(int argc, char **argv) {
        __attribute__((cleanup(sd_bus_flush_close_unrefp))) sd_bus *bus = NULL;
        char ends[64], gone[64], long_unit[64];
        bool all = argc == 2 && strcmp(argv[1], "all") == 0;
        int r;

        if (argc != 2 || (!all && strcmp(argv[1], "ends") != 0)) {
                (void) fprintf(stderr, "usage: wait-gone all|ends\n");
                return 2;
        }
        (void) snprintf(ends, sizeof(ends), "sandboxd-test-wait-%d-a.service", (int) getpid());
        (void) snprintf(gone, sizeof(gone), "sandboxd-test-wait-%d-b.service", (int) getpid());
        (void) snprintf(long_unit, sizeof(long_unit), "sandboxd-test-wait-%d-c.service", (int) getpid());
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                tap_ok(false, "system bus: %s", strerror(-r));
                return 1;
        }
        test_ends(bus, ends);
        if (all)
                test_cases(bus, gone, long_unit);
        printf("1..%u\n", tap_count);
        return tap_failures ? 1 : 0;
}
