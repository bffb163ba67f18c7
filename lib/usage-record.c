/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "lib/api-key.h"
#include "lib/json-util.h"
#include "lib/macro.h"
#include "lib/usage-record.h"

DEFINE_JSON_CLEANUP

int usage_kind_valid(const char *kind) {
        return strcmp(kind, "in_flight") == 0 || strcmp(kind, "exec") == 0 || strcmp(kind, "cpu") == 0;
}

char *usage_record_format(const UsageRow *rows, size_t n) {
        cleanup_json struct json_object *o = json_object_new_object(), *list = json_object_new_array();

        if (!o || !list)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                struct json_object *row = json_object_new_array();

                if (!row || json_object_array_add(row, json_object_new_string(rows[i].key)) < 0 ||
                    json_object_array_add(row, json_object_new_string(rows[i].kind)) < 0 ||
                    json_object_array_add(row, json_object_new_int64(rows[i].end_ms)) < 0 ||
                    json_object_array_add(row, json_object_new_int64(rows[i].amount)) < 0 || json_object_array_add(list, row) < 0) {
                        json_object_put(row);
                        return NULL;
                }
        }
        if (json_object_object_add(o, "rows", TAKE_PTR(list)) < 0)
                return NULL;
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static int row_parse(struct json_object *a, UsageRow *ret) {
        UsageRow r = {};
        size_t n;

        if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != 4 ||
            json_to_text(json_object_array_get_idx(a, 0), r.key, sizeof(r.key)) < 0 ||
            json_to_text(json_object_array_get_idx(a, 1), r.kind, sizeof(r.kind)) < 0 ||
            json_to_count(json_object_array_get_idx(a, 2), &r.end_ms) < 0 || json_to_count(json_object_array_get_idx(a, 3), &r.amount) < 0)
                return -EBADMSG;
        n = strlen(r.key);
        if (n == 0 || strspn(r.key, API_KEY_NAME_CHARS) != n || !usage_kind_valid(r.kind))
                return -EBADMSG;
        *ret = r;
        return 0;
}

int usage_record_parse(const char *json, UsageRow **ret, size_t *ret_n) {
        cleanup_json struct json_object *o = json_tokener_parse(json);
        struct json_object *list;
        UsageRow *out;
        size_t n;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "rows", &list) ||
            !json_object_is_type(list, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(list);
        out = calloc(n + 1, sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (row_parse(json_object_array_get_idx(list, i), &out[i]) < 0) {
                        free(out);
                        return -EBADMSG;
                }
        *ret = out;
        *ret_n = n;
        return 0;
}
