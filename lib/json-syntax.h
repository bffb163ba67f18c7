/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The deepest nesting json_syntax_valid() can be asked to allow. */
#define JSON_SYNTAX_DEPTH_MAX 256U

/* Whether s is one JSON text by RFC 8259's grammar, with white space around it allowed and at most
 * max_depth arrays and objects open at once. Bytes of 0x80 and above pass inside strings and nowhere
 * else; whether they are well-formed UTF-8 is utf8_valid()'s to say. Numbers of any size pass: what
 * fits is the caller's question. Pure. */
bool json_syntax_valid(const char *s, size_t len, unsigned max_depth);
