/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lib/output-listener.h"

/* The host side of a warm sandbox's socket (nspawn/runner/runner.c). */

#define POOL_GREETING "ready\n"

/* A listening unix socket at path (replacing any stale one), mode 0600: handed to the sandbox as its
 * stdin, so only its owner (the workers' user) can connect. *ret_fd is the caller's. */
int pool_listen(const char *path, int *ret_fd);

/* Connects to a warm sandbox's socket, non-blocking. -ECONNREFUSED once its runner is gone. */
int pool_connect(const char *path, int *ret_fd);

/* Reads the runner's greeting: 0 when it is "ready\n", -EAGAIN if not all of it has come yet (poll
 * fd again), -EPROTO or -ECONNRESET otherwise. *got counts the bytes seen so far. */
int pool_read_greeting(int fd, size_t *got);

/* Waits for the greeting until deadline (CLOCK_MONOTONIC µs): -ETIME when it passed. */
int pool_wait_greeting(int fd, uint64_t deadline);

/* Sends input and closes the write side, waiting for room until deadline or client_fd's hang-up, as
 * pool_exchange() does first: for a caller that reads something else before the reply. */
int pool_send_request(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline);

/* Sends input (NULL: pool_send_request() sent it already), closes the write side, reads the reply until EOF (at most max_reply bytes: past that
 * -EMSGSIZE) or the deadline (-ETIME), or until client_fd (the request's connection from nginx; < 0:
 * none) hangs up (-ECANCELED, lib/fd-wait.h). *ret_reply (NUL-terminated) is the caller's. */
int pool_exchange(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline, size_t max_reply, char **ret_reply,
                  size_t *ret_len);

/* As pool_exchange(), for a request the runner answers in frames (lib/stream-frame.h): the output
 * goes to listener as it comes (lib/output-listener.h), and the reply frame's data is *ret_reply. A
 * reply that comes unframed (the runner refused the request before it knew it was streamed) is taken
 * as pool_exchange() takes it. -ECANCELED also when the listener is gone; -EBADMSG for bytes that are
 * no frame. */
int pool_exchange_stream(int fd, const char *input, size_t input_len, int client_fd, uint64_t deadline, size_t max_reply,
                         const OutputListener *listener, char **ret_reply, size_t *ret_len);
