/* SPDX-License-Identifier: MIT */
/* What /proc says of a process (proc-stat.c), on this test's own process and a child of it. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/macro.h"
#include "nspawn/runner/proc-stat.h"
#include "tests/unit/tap.h"

/* Burns about ms of CPU time. */
static void burn(long ms) {
        clock_t until = clock() + (clock_t) (ms * (CLOCKS_PER_SEC / 1000));
        volatile unsigned long spin = 0;

        while (clock() < until)
                spin++;
}

static void test_cpu(void) {
        int64_t before = proc_cpu_usec(getpid()), after;

        tap_ok(before >= 0, "this process's CPU time is read");
        burn(300);
        after = proc_cpu_usec(getpid());
        if (!tap_ok(after - before >= 200 * 1000, "300 ms burnt show as at least 200 ms"))
                tap_diag("  before %lld, after %lld", (long long) before, (long long) after);
        tap_is_int(proc_cpu_usec(0), -1, "no PID 0");
        tap_is_int(proc_cpu_usec(-1), -1, "no negative PID");
        tap_is_int(proc_cpu_usec(0x3fffffff), -1, "a PID beyond pid_max is unknown");
}

static void test_peak(void) {
        size_t n = 64U << 20;
        volatile char *p = malloc(n);
        int64_t peak;

        for (size_t i = 0; p && i < n; i += 4096)
                p[i] = 1;
        peak = proc_peak_bytes(getpid());
        if (!tap_ok(peak >= (int64_t) n, "64 MiB touched show in the peak"))
                tap_diag("  peak %lld", (long long) peak);
        free((void *) p);
        tap_ok(proc_peak_bytes(getpid()) >= (int64_t) n, "a peak, not what is held now");
        tap_is_int(proc_peak_bytes(0), 0, "no PID 0: 0");
        tap_is_int(proc_peak_bytes(0x3fffffff), 0, "an unknown PID: 0");
}

/* Here the child's PID in its namespace is its PID here: one namespace, one NSpid. */
static void test_outer_pid(void) {
        pid_t child = fork();

        if (child == 0) {
                pause();
                _exit(0);
        }
        tap_ok(child > 0, "a child");
        tap_is_int(proc_outer_pid(getpid(), child), child, "a child is found by its PID");
        tap_is_int(proc_outer_pid(getpid(), child + 100000), -1, "no child has that PID: -1");
        tap_is_int(proc_outer_pid(child, getpid()), -1, "the child has no children: -1");
        tap_is_int(proc_outer_pid(0x3fffffff, 1), -1, "an unknown init: -1");
        (void) kill(child, SIGKILL);
        (void) waitpid(child, NULL, 0);
}

int main(void) {
        test_cpu();
        test_peak();
        test_outer_pid();
        return tap_done();
}
