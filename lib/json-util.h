/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
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

/* The readers of a record that must be whole, as another member or etcd hands it: each 0, or
 * -EBADMSG when the value is missing or not of its type or range. Nothing is written then. */
/* A string shorter than size, copied into buf. */
int json_to_text(struct json_object *v, char *buf, size_t size);
/* An integer of at least 0. */
int json_to_count(struct json_object *v, int64_t *ret);
/* The same, for the field key of o. */
int json_get_text(struct json_object *o, const char *key, char *buf, size_t size);
int json_get_count(struct json_object *o, const char *key, int64_t *ret);
/* A finite number from 0 to below 2^63, integer or not. */
int json_get_number(struct json_object *o, const char *key, double *ret);
int json_get_bool(struct json_object *o, const char *key, bool *ret);

/* A new field of o: 0, or -ENOMEM. */
int json_add_text(struct json_object *o, const char *key, const char *v);
int json_add_int(struct json_object *o, const char *key, int64_t v);
int json_add_double(struct json_object *o, const char *key, double v);
int json_add_bool(struct json_object *o, const char *key, bool v);
