/* SPDX-License-Identifier: MIT */
#pragma once

/* The one way sandboxd's functions fail: they return 0 (or more) on success and -errno on failure.
 * When a failure has words for the caller (a refused field, systemd's reason, a recorded cause),
 * the function also fills a caller-owned Error, the only carrier of such words. It is a fixed
 * buffer, not a heap message: filling it cannot fail, and it travels by value. */

#include <stddef.h>

typedef struct Error {
        int status;        /* the HTTP status the API answers with, when the callee knows it; else 0 */
        char message[512]; /* valid UTF-8, NUL-terminated; "" until set */
} Error;

/* Formats the message into *e (if e is not NULL), cut to fit without splitting a character, and
 * returns r, so that `return error_set(err, -EINVAL, "...");` works. Leaves e->status alone. */
int error_set(Error *e, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same, with the HTTP status the answer takes. */
int error_set_status(Error *e, int status, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* What to say about failure r: the message when one was set, else strerror(-r). */
const char *error_message(const Error *e, int r);
