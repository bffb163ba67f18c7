/* SPDX-License-Identifier: MIT */
/* The few ways sandboxd reads a field of a parsed JSON object, one definition each, for the workers
 * and the runner alike. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "lib/json-util.h"

struct json_object *json_field(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

int64_t json_int(struct json_object *o, const char *key, int64_t def) {
        struct json_object *v = json_field(o, key);

        return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

const char *json_word(struct json_object *o, const char *key, const char *const *allowed) {
        struct json_object *v = json_field(o, key);

        if (!v)
                return allowed[0];
        for (const char *const *a = allowed; *a; a++)
                if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), *a) == 0)
                        return *a;
        return NULL;
}

int json_to_text(struct json_object *v, char *buf, size_t size) {
        size_t n;

        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        n = (size_t) json_object_get_string_len(v);
        if (n >= size)
                return -EBADMSG;
        memcpy(buf, json_object_get_string(v), n + 1);
        return 0;
}

int json_to_count(struct json_object *v, int64_t *ret) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = json_object_get_int64(v);
        return 0;
}

/* The field key of o, present or not: json_to_*() refuse NULL. */
static struct json_object *field_any(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int json_get_text(struct json_object *o, const char *key, char *buf, size_t size) {
        return json_to_text(field_any(o, key), buf, size);
}

int json_get_count(struct json_object *o, const char *key, int64_t *ret) {
        return json_to_count(field_any(o, key), ret);
}

int json_get_number(struct json_object *o, const char *key, double *ret) {
        struct json_object *v = field_any(o, key);

        double d;

        if (!(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return -EBADMSG;
        /* Below 2^63: a caller may make it an int64_t. json-c reads NaN and Infinity, too. */
        d = json_object_get_double(v);
        if (!isfinite(d) || d < 0 || d >= 0x1p63)
                return -EBADMSG;
        *ret = d;
        return 0;
}

int json_get_bool(struct json_object *o, const char *key, bool *ret) {
        struct json_object *v = field_any(o, key);

        if (!json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(v);
        return 0;
}

static int add(struct json_object *o, const char *key, struct json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_text(struct json_object *o, const char *key, const char *v) {
        return add(o, key, json_object_new_string(v));
}

int json_add_int(struct json_object *o, const char *key, int64_t v) {
        return add(o, key, json_object_new_int64(v));
}

int json_add_double(struct json_object *o, const char *key, double v) {
        return add(o, key, json_object_new_double(v));
}

int json_add_bool(struct json_object *o, const char *key, bool v) {
        return add(o, key, json_object_new_boolean(v));
}
