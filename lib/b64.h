/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Strict RFC 4648 base64 (standard alphabet, '=' padding, no white space).
 * Returns the decoded size, or -EINVAL if s is not valid base64. Pure. */
long long b64_decoded_size(const char *s, size_t n);

/* Decodes into *ret (caller frees, NUL-terminated for convenience); -EINVAL on bad input, -ENOMEM. */
int b64_decode(const char *s, size_t n, uint8_t **ret, size_t *ret_len);

/* Encodes into a new NUL-terminated string (caller frees); NULL on out of memory. */
char *b64_encode(const uint8_t *p, size_t n, size_t *ret_len);
