/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/fd-wait.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "tests/unit/tap.h"

/* A wait on an answer ends when it comes, at its deadline, or when the client hangs up. */
int main(void) {
        int answer[2], client[2];

        if (!tap_ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, answer) == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client) == 0,
                    "two socket pairs"))
                return tap_done();
        tap_is_int(fd_wait(answer[0], POLLIN, client[0], now_usec(CLOCK_MONOTONIC) + 50 * USEC_PER_MSEC), -ETIME, "nothing: the deadline");
        tap_is_int(fd_wait(answer[0], POLLIN, client[0], 0), -ETIME, "a deadline passed already");
        tap_ok(!fd_client_gone(client[0]), "a client still there is not gone");
        tap_ok(write(client[1], "x", 1) == 1, "the client sends something");
        tap_is_int(fd_wait(answer[0], POLLIN, client[0], now_usec(CLOCK_MONOTONIC) + 50 * USEC_PER_MSEC), -ETIME,
                   "what the client sends is no answer and no hang-up");
        tap_ok(write(answer[1], "y", 1) == 1, "the answer");
        tap_is_int(fd_wait(answer[0], POLLIN, client[0], UINT64_MAX), 0, "readable, no deadline");
        tap_is_int(fd_wait(answer[0], POLLIN, -1, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC), 0, "readable, no client watched");
        tap_is_int(fd_wait(answer[0], POLLOUT, client[0], UINT64_MAX), 0, "writable");
        (void) close(client[1]);
        tap_ok(fd_client_gone(client[0]), "a client that closed is gone");
        tap_ok(!fd_client_gone(-1), "no client is never gone");
        tap_is_int(fd_wait(answer[0], POLLIN, client[0], now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC), -ECANCELED,
                   "the client gone wins over an answer");
        tap_is_int(fd_wait(answer[1], POLLIN, client[0], UINT64_MAX), -ECANCELED, "a wait without a deadline ends when the client goes");
        (void) close(answer[0]);
        (void) close(answer[1]);
        (void) close(client[0]);
        return tap_done();
}
