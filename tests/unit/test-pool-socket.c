/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool-socket.h"
#include "tests/unit/tap.h"

/* A machine's socket: its owner's only, connected before the runner accepts, greeted in pieces. */
static void test_greeting(void) {
        char dir[] = "/tmp/test-pool-socket-XXXXXX", path[64];
        cleanup_close int listener = -1, worker = -1, runner = -1;
        struct stat st;
        size_t got = 0;

        if (!mkdtemp(dir))
                abort();
        (void) snprintf(path, sizeof(path), "%s/m.sock", dir);
        tap_is_int(pool_connect(path, &worker), -ENOENT, "nothing listens yet");
        tap_is_int(pool_listen(path, &listener), 0, "the machine's socket");
        tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
        tap_is_int(pool_connect(path, &worker), 0, "connected before the runner accepts");
        runner = accept(listener, NULL, NULL);
        tap_ok(runner >= 0, "the runner accepts");
        tap_is_int(pool_read_greeting(worker, &got), -EAGAIN, "no greeting yet");
        tap_ok(write(runner, "rea", 3) == 3, "half a greeting");
        tap_is_int(pool_wait_greeting(worker, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC / 10), -ETIME, "half is not enough");
        got = 3;
        tap_ok(write(runner, "dy\n", 3) == 3, "the rest");
        tap_is_int(pool_read_greeting(worker, &got), 0, "greeted");
        closep(&runner);
        (void) unlink(path);
        (void) rmdir(dir);
}

int main(void) {
        test_greeting();
        return tap_done();
}
