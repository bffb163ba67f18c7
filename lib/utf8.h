/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies s, replacing each ill-formed UTF-8 subsequence with U+FFFD, so any process output becomes a
 * valid JSON string. Returns a new NUL-terminated buffer (caller frees) or NULL on out of memory. Pure. */
char *utf8_sanitize(const uint8_t *s, size_t n, size_t *ret_len);

/* Whether s is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF). Pure. */
bool utf8_valid(const uint8_t *s, size_t n);
