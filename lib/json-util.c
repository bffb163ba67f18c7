/* SPDX-License-Identifier: MIT */
/* The few ways sandboxd reads a field of a parsed JSON object, one definition each, for the workers
 * and the runner alike. */
#include <json-c/json.h>
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
