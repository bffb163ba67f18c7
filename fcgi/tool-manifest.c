/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fcgi/tool-manifest.h"
#include "lib/fd-util.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

/* A manifest lists a few modules and functions: anything larger is no manifest of ours. */
#define TOOL_MANIFEST_MAX_BYTES ((uint64_t) 256 * 1024)

static bool array_has(struct json_object *a, const char *s) {
        size_t n = json_object_array_length(a);

        for (size_t i = 0; i < n; i++) {
                struct json_object *v = json_object_array_get_idx(a, i);

                if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0)
                        return true;
        }
        return false;
}

int tool_manifest_allows(const char *text, size_t len, const char *image, const char *module, const char *function) {
        cleanup_json struct json_object *m = NULL;
        struct json_tokener *tok = json_tokener_new();
        struct json_object *marker = NULL, *name = NULL, *modules = NULL, *entry = NULL, *functions = NULL;

        if (!tok)
                return -ENOMEM;
        m = json_tokener_parse_ex(tok, text, (int) len);
        /* One JSON value, the whole text: trailing bytes but blanks make it no manifest. */
        if (m && strspn(text + json_tokener_get_parse_end(tok), " \t\r\n") != len - json_tokener_get_parse_end(tok)) {
                (void) json_object_put(m);
                m = NULL;
        }
        json_tokener_free(tok);
        if (!m || !json_object_object_get_ex(m, "sandboxd-tool-image", &marker) || !json_object_is_type(marker, json_type_int) ||
            json_object_get_int(marker) != 1 || !json_object_object_get_ex(m, "image", &name) ||
            !json_object_is_type(name, json_type_string) || strcmp(json_object_get_string(name), image) != 0 ||
            !json_object_object_get_ex(m, "modules", &modules) || !json_object_is_type(modules, json_type_object))
                return -ENOENT;
        if (!json_object_object_get_ex(modules, module, &entry) || !json_object_is_type(entry, json_type_object) ||
            !json_object_object_get_ex(entry, "functions", &functions) || !json_object_is_type(functions, json_type_array))
                return -ESRCH;
        return array_has(functions, function) ? 0 : -ENOSYS;
}

int tool_manifest_check(const char *dir, const char *image, const char *module, const char *function) {
        cleanup_free char *path = NULL, *text = NULL;
        cleanup_close int fd = -1;
        struct stat st;

        /* The name is one path component (image_name_from_ref()); never "..", never hidden. */
        if (!image[0] || image[0] == '.' || strchr(image, '/'))
                return -ENOENT;
        if (asprintf(&path, "%s/%s.json", dir, image) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT || errno == ELOOP ? -ENOENT : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t) st.st_size > TOOL_MANIFEST_MAX_BYTES)
                return -ENOENT;
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        if (fd_pread_exact(fd, text, (size_t) st.st_size, 0) < 0)
                return -EIO;
        text[st.st_size] = 0;
        return tool_manifest_allows(text, (size_t) st.st_size, image, module, function);
}

bool tool_image_listed(const char *list, const char *image) {
        size_t n = strlen(image);

        if (!list[0])
                return true;
        for (const char *p = list;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t) (comma - p) : strlen(p);

                if (len == n && memcmp(p, image, n) == 0)
                        return true;
                if (!comma)
                        return false;
                p = comma + 1;
        }
}
