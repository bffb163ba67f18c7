/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/macro.h"
#include "nspawn/pool/pool-socket.h"
#include "tests/unit/tap.h"

/* The pool manager's wake-up socket: one datagram per wake-up, never a blocked worker. */
static void test_wake(void) {
        char dir[] = "/tmp/test-pool-socket-XXXXXX", path[64];
        int manager = -1, worker = -1, sent = 0;
        struct stat st;

        if (!mkdtemp(dir))
                abort();
        (void) snprintf(path, sizeof(path), "%s/wake.sock", dir);
        tap_is_int(pool_wake_open(&worker), 0, "a worker's wake-up socket");
        tap_is_int(pool_wake(worker, path), 0, "no manager listening: nothing sent, no error");

        tap_is_int(pool_wake_listen(path, &manager), 0, "the manager listens");
        tap_ok(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600, "on a socket of mode 0600");
        tap_is_int(pool_wake_drain(manager), 0, "nothing queued yet");
        tap_is_int(pool_wake(worker, path), 1, "a wake-up is sent");
        tap_is_int(pool_wake(worker, path), 1, "and another");
        tap_is_int(pool_wake_drain(manager), 2, "the manager reads both");

        /* A manager that does not read: its queue fills, and waking it never blocks. */
        for (int i = 0; i < 1000; i++)
                sent += pool_wake(worker, path) == 1;
        tap_ok(sent > 0 && sent < 1000, "a full queue: later wake-ups are dropped (%d of 1000 sent)", sent);
        tap_is_int(pool_wake(worker, path), 0, "and say so without an error");
        tap_is_int(pool_wake_drain(manager), sent, "what was queued is read");

        (void) close(manager);
        tap_is_int(pool_wake_listen(path, &manager), 0, "a restarted manager takes over the path");
        tap_is_int(pool_wake(worker, path), 1, "the same worker socket wakes it: nothing was connected");
        tap_is_int(pool_wake_drain(manager), 1, "the new manager reads it");

        /* A sweep asked for among plain wake-ups is seen; plain ones alone ask for none. */
        bool sweep = true;
        tap_is_int(pool_wake(worker, path), 1, "a plain wake-up");
        tap_ok(pool_wake_drain_sweep(manager, &sweep) == 1 && !sweep, "a plain wake-up asks for no sweep");
        tap_is_int(pool_wake(worker, path), 1, "a plain wake-up");
        tap_is_int(pool_wake_sweep(worker, path), 1, "a sweep asked for");
        tap_is_int(pool_wake(worker, path), 1, "and another plain one");
        tap_ok(pool_wake_drain_sweep(manager, &sweep) == 3 && sweep, "the manager reads all three, and sees the sweep");
        (void) close(manager);
        (void) close(worker);
        (void) unlink(path);
        (void) rmdir(dir);
}

int main(void) {
        test_wake();
        return tap_done();
}
