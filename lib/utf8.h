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

/* How many of s's n bytes to pass on now when more may follow: all but a last sequence that is cut
 * short (at most 3 bytes, each a possible start of a well-formed one), which waits for the bytes
 * that complete it. Pure. */
size_t utf8_whole_prefix(const uint8_t *s, size_t n);
