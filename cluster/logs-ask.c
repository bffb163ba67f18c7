/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-journal.h>

#include "cluster/logs-ask.h"
#include "lib/journal-entry.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

static int request_id_valid(const char *s) {
        size_t n = strlen(s);

        return n > 0 && n < LOGS_REQUEST_ID_MAX && strspn(s, "0123456789abcdef-") == n;
}

int logs_ask_format(const char *request_id, int64_t lease, char **ret) {
        cleanup_json struct json_object *o = json_object_new_object();
        char buf[32];

        if (!request_id_valid(request_id))
                return -EINVAL;
        (void) snprintf(buf, sizeof(buf), "%" PRId64, lease);
        if (!o || json_object_object_add(o, "request_id", json_object_new_string(request_id)) < 0 ||
            json_object_object_add(o, "lease", json_object_new_string(buf)) < 0)
                return -ENOMEM;
        *ret = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        return *ret ? 0 : -ENOMEM;
}

int logs_ask_parse(const char *json, char request_id[static LOGS_REQUEST_ID_MAX], int64_t *ret_lease) {
        cleanup_json struct json_object *o = json_tokener_parse(json);
        struct json_object *id, *lease;
        char *end;
        long long v;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "request_id", &id) ||
            !json_object_object_get_ex(o, "lease", &lease) || !json_object_is_type(id, json_type_string) ||
            !json_object_is_type(lease, json_type_string) || !request_id_valid(json_object_get_string(id)))
                return -EBADMSG;
        v = strtoll(json_object_get_string(lease), &end, 10);
        if (*end || v <= 0)
                return -EBADMSG;
        memcpy(request_id, json_object_get_string(id), strlen(json_object_get_string(id)) + 1);
        *ret_lease = v;
        return 0;
}

int logs_entries(const char *request_id, char **ret) {
        cleanup_json struct json_object *list = json_object_new_array();
        sd_journal *j = NULL;
        char match[128];
        int r;

        if (!list)
                return -ENOMEM;
        r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
        if (r < 0)
                return r;
        (void) snprintf(match, sizeof(match), "REQUEST_ID=%s", request_id);
        r = sd_journal_add_match(j, match, 0);
        SD_JOURNAL_FOREACH(j) {
                struct json_object *e = NULL;

                if (r < 0)
                        break;
                r = entry_to_json(j, &e);
                if (r >= 0 && json_object_array_add(list, e) < 0) {
                        json_object_put(e);
                        r = -ENOMEM;
                }
        }
        sd_journal_close(j);
        if (r < 0)
                return r;
        if (json_object_array_length(list) == 0)
                return -ENOENT;
        *ret = strdup(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN));
        return *ret ? 0 : -ENOMEM;
}
