/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "lib/fd-wait.h"
#include "lib/time-util.h"

/* A closed connection reads as the end: POLLRDHUP (or POLLHUP, POLLERR). nginx sends nothing after
 * the request's body, so any of these means the client is gone. */
static bool hung_up(short revents) {
        return revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL);
}

bool fd_client_gone(int client_fd) {
        struct pollfd p = {.fd = client_fd, .events = POLLRDHUP};

        return client_fd >= 0 && poll(&p, 1, 0) > 0 && hung_up(p.revents);
}

int fd_wait(int fd, short events, int client_fd, uint64_t deadline) {
        for (;;) {
                struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = client_fd, .events = POLLRDHUP}};
                uint64_t now = now_usec(CLOCK_MONOTONIC), ms;
                int r;

                if (deadline != UINT64_MAX && now >= deadline)
                        return -ETIME;
                /* Rounded up: a wait that ends a little early would only be made again. */
                ms = deadline == UINT64_MAX ? UINT64_MAX : (deadline - now + 999) / 1000;
                r = poll(p, client_fd >= 0 ? 2 : 1, ms > INT32_MAX ? -1 : (int) ms);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                if (client_fd >= 0 && hung_up(p[1].revents))
                        return -ECANCELED;
                if (p[0].revents)
                        return 0;
        }
}
