/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>

#include "lib/fd-wait.h"
#include "lib/time-util.h"

int fd_wait_readable(int fd, int client_fd, uint64_t deadline) {
        for (;;) {
                /* Only the hang-up of the client's connection: what else comes on it (nginx's
                 * records) is libfcgi's to read, after the answer. */
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = client_fd, .events = POLLRDHUP}};
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                if (now >= deadline)
                        return -ETIME;
                r = poll(p, client_fd >= 0 ? 2 : 1, (int) ((deadline - now + 999) / 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                if (client_fd >= 0 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
                        return -ECANCELED;
                if (p[0].revents)
                        return 0;
        }
}
