/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/key-record.h"
#include "lib/api-key.h"
#include "lib/json-util.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

static const struct {
        const char *name;
        size_t offset;
} counts[] = {
        {"max_concurrent", offsetof(ApiKey, max_concurrent)},
        {"executions_per_minute", offsetof(ApiKey, executions_per_minute)},
        {"cpu_seconds_per_day", offsetof(ApiKey, cpu_seconds_per_day)},
        {"max_sessions", offsetof(ApiKey, max_sessions)},
        {"max_paused_sessions", offsetof(ApiKey, max_paused_sessions)},
        {"session_disk_bytes", offsetof(ApiKey, session_disk_bytes)},
};

static const struct {
        const char *name;
        size_t offset, size;
} texts[] = {
        {"name", offsetof(ApiKey, name), sizeof(((ApiKey *) NULL)->name)},
        {"token_sha256", offsetof(ApiKey, token_sha256), sizeof(((ApiKey *) NULL)->token_sha256)},
        {"created_at", offsetof(ApiKey, created_at), sizeof(((ApiKey *) NULL)->created_at)},
        {"revoked_at", offsetof(ApiKey, revoked_at), sizeof(((ApiKey *) NULL)->revoked_at)},
        {"images", offsetof(ApiKey, images), sizeof(((ApiKey *) NULL)->images)},
        {"egress", offsetof(ApiKey, egress), sizeof(((ApiKey *) NULL)->egress)},
};

char *key_record_format(const ApiKey *k) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                if (json_add_text(o, texts[i].name, (const char *) k + texts[i].offset) < 0)
                        return NULL;
        for (size_t i = 0; i < ELEMENTSOF(counts); i++)
                if (json_add_int(o, counts[i].name, *(const int64_t *) (const void *) ((const char *) k + counts[i].offset)) < 0)
                        return NULL;
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

int key_record_parse(const char *json, ApiKey *ret) {
        cleanup_json struct json_object *o = json_tokener_parse(json);
        ApiKey k = {};
        size_t n;

        if (!o || !json_object_is_type(o, json_type_object))
                return -EBADMSG;
        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                if (json_get_text(o, texts[i].name, (char *) &k + texts[i].offset, texts[i].size) < 0)
                        return -EBADMSG;
        for (size_t i = 0; i < ELEMENTSOF(counts); i++)
                if (json_get_count(o, counts[i].name, (int64_t *) (void *) ((char *) &k + counts[i].offset)) < 0)
                        return -EBADMSG;
        n = strlen(k.name);
        /* lib/api-key.h's rule for a name, and a hash as api_key_hash() writes it. */
        if (n == 0 || k.name[0] == '-' || strspn(k.name, API_KEY_NAME_CHARS) != n ||
            strlen(k.token_sha256) != 64 || strspn(k.token_sha256, "0123456789abcdef") != 64 || strlen(k.created_at) == 0)
                return -EBADMSG;
        *ret = k;
        return 0;
}
