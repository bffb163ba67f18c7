/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fd-wait.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "tests/unit/tap.h"

/* A wait on an answer ends when it comes, at its deadline, or when the client hangs up. */
int main(void) {
        int answer[2], client[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, answer) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client) < 0)
                return 1;
        tap_is_int(fd_wait_readable(answer[0], client[0], now_usec(CLOCK_MONOTONIC) + 50 * USEC_PER_MSEC), -ETIME, "nothing: the deadline");
        tap_is_int(fd_wait_readable(answer[0], client[0], 0), -ETIME, "a deadline passed already");
        tap_ok(write(client[1], "x", 1) == 1, "the client sends something");
        tap_is_int(fd_wait_readable(answer[0], client[0], now_usec(CLOCK_MONOTONIC) + 50 * USEC_PER_MSEC), -ETIME,
                   "what the client sends is no answer and no hang-up");
        tap_ok(write(answer[1], "y", 1) == 1, "the answer");
        tap_is_int(fd_wait_readable(answer[0], client[0], now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC), 0, "readable");
        tap_is_int(fd_wait_readable(answer[0], -1, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC), 0, "readable, no client watched");
        (void) close(client[1]);
        tap_is_int(fd_wait_readable(answer[0], client[0], now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC), -ECANCELED,
                   "the client gone wins over an answer");
        (void) close(answer[0]);
        (void) close(answer[1]);
        (void) close(client[0]);
        return tap_done();
}
