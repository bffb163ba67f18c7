/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* Waits until fd is readable or deadline (CLOCK_MONOTONIC µs) passes, watching client_fd (< 0:
 * none) for its peer's hang-up meanwhile: a worker's connection to nginx, which nginx closes when
 * the HTTP client goes. 0 (readable), -ETIME, -ECANCELED (the client is gone), or -errno. For any
 * wait of a request on another process's answer: the pool manager's, a runner's. */
int fd_wait_readable(int fd, int client_fd, uint64_t deadline);
