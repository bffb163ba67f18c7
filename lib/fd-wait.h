/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Waiting on one descriptor until a deadline, on behalf of a client that may go away.
 *
 * A worker's thread serves one HTTP request; nginx closes the FastCGI connection it came on when
 * its client goes (it never sends FCGI_ABORT_REQUEST). A wait that names that connection ends with
 * -ECANCELED once it is closed: whatever the request waits for then (a machine, a session's turn,
 * the code's end), nobody waits for it any more. Only the hang-up is watched: what else comes on
 * the connection is libfcgi's to read. */

/* Waits until fd has one of events (poll()'s), or until deadline (CLOCK_MONOTONIC µs; UINT64_MAX:
 * none) has passed, watching client_fd (< 0: none) for its peer's hang-up meanwhile: 0, -ETIME,
 * -ECANCELED (the client is gone, which wins over fd being ready), or a negative errno. */
int fd_wait(int fd, short events, int client_fd, uint64_t deadline);

/* Whether client_fd's peer has hung up, without waiting; false for client_fd < 0. */
bool fd_client_gone(int client_fd);
