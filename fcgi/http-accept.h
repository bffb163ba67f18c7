/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* The one reading of an Accept header (RFC 9110 12.5.1) that every route uses: media ranges
 * separated by commas, each "type/subtype", "type/ *" or "* / *" (without the blanks), then
 * parameters ";name=value" (a value a token or a quoted string), the weight among them as
 * "q=0.5". */

/* How closely a media range must name a type to count. */
typedef enum HttpAcceptMatch {
        HTTP_ACCEPT_ANY,   /* "* / *", "type/ *" or the type itself: what a client takes */
        HTTP_ACCEPT_EXACT, /* the type itself only: what a client asks for by name */
} HttpAcceptMatch;

/* The weight, in thousandths (0..1000), that accept gives type ("type/subtype", lower case): the
 * one of the most specific range that matches it (the type itself, then "type/ *", then "* / *";
 * among ranges as specific, the first). -1 when no range matches, or accept is NULL or blank. A
 * range that cannot be read (no "/", a weight that is not a qvalue) matches nothing. Parameters
 * other than q do not narrow a range: sandboxd sends none. Pure. */
int http_accept_weight(const char *accept, const char *type, HttpAcceptMatch match);

/* Whether a client with this Accept header takes type: no header (or a blank one) takes anything,
 * else the weight of type must be above zero. Pure. */
bool http_accepts(const char *accept, const char *type);
