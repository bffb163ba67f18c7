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

/* What json-c would build of a text: each value costs it memory of its own (measured with json-c
 * 0.16 on x86-64: some 70 bytes a number, 150 an empty array, 900 an object with its hash table),
 * whatever the few bytes the text spends on it. */
typedef struct JsonSyntaxCounts {
        size_t values;     /* every value, containers and members' values included */
        size_t containers; /* arrays and objects */
        size_t top;        /* the values directly in the outermost array or object */
} JsonSyntaxCounts;

/* json_syntax_valid(), counting what s holds into *ret as it goes (counted up to where it stopped
 * when it is not valid). Pure. */
bool json_syntax_scan(const char *s, size_t len, unsigned max_depth, JsonSyntaxCounts *ret);
