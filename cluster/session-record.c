/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/session-record.h"
#include "lib/api-key.h"
#include "lib/json-util.h"
#include "lib/macro.h"
#include "lib/session-state.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

static struct json_object *row_json(const Session *s) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o || json_add_text(o, "session_id", s->id) < 0 || json_add_text(o, "state", s->state) < 0 ||
            json_add_int(o, "ttl_s", s->ttl_s) < 0 || json_add_double(o, "created_at", s->created_at) < 0 ||
            json_add_double(o, "last_used", s->last_used) < 0 || json_add_double(o, "paused_at", s->paused_at) < 0 ||
            json_add_int(o, "run_count", s->run_count) < 0 || json_add_bool(o, "up", s->up) < 0 ||
            json_add_bool(o, "state_reset", s->state_reset) < 0 || json_add_text(o, "key_name", s->key_name) < 0)
                return NULL;
        return TAKE_PTR(o);
}

char *session_record_format(const Session *s, size_t n) {
        cleanup_json struct json_object *list = json_object_new_array();

        for (size_t i = 0; list && i < n; i++) {
                struct json_object *o = row_json(&s[i]);

                if (!o || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
        }
        return list ? strdup(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN)) : NULL;
}

static int row_parse(struct json_object *o, Session *ret) {
        Session s = {};
        double ttl, runs;
        size_t n;

        if (!json_object_is_type(o, json_type_object) || json_get_text(o, "session_id", s.id, sizeof(s.id)) < 0 ||
            json_get_text(o, "state", s.state, sizeof(s.state)) < 0 || json_get_number(o, "ttl_s", &ttl) < 0 ||
            json_get_number(o, "created_at", &s.created_at) < 0 || json_get_number(o, "last_used", &s.last_used) < 0 ||
            json_get_number(o, "paused_at", &s.paused_at) < 0 || json_get_number(o, "run_count", &runs) < 0 || json_get_bool(o, "up", &s.up) < 0 ||
            json_get_bool(o, "state_reset", &s.state_reset) < 0 || json_get_text(o, "key_name", s.key_name, sizeof(s.key_name)) < 0)
                return -EBADMSG;
        n = strlen(s.key_name);
        if (!session_id_valid(s.id) || strspn(s.key_name, API_KEY_NAME_CHARS) != n ||
            !session_state_live(session_state_from_string(s.state)))
                return -EBADMSG;
        s.ttl_s = (int64_t) ttl;
        s.run_count = (int64_t) runs;
        *ret = s;
        return 0;
}

int session_record_parse(const char *json, Session **ret, size_t *ret_n) {
        cleanup_json struct json_object *list = json_tokener_parse(json);
        Session *out;
        size_t n;

        if (!list || !json_object_is_type(list, json_type_array))
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
