/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

struct json_object;

/* A present field of o: NULL when o is no object, the key is absent, or its value is JSON null (all
 * of which mean "use the default"). Borrowed. */
struct json_object *json_field(struct json_object *o, const char *key);

/* An integer field of o, or def when it is absent or not an integer. */
int64_t json_int(struct json_object *o, const char *key, int64_t def);

/* A string field of o that must be one of allowed (NULL-terminated): that entry of allowed (so the
 * caller may compare pointers), allowed[0] when the field is absent or null, NULL for anything
 * else. */
const char *json_word(struct json_object *o, const char *key, const char *const *allowed);
