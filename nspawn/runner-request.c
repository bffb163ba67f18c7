/* SPDX-License-Identifier: MIT */
/* The one definition of a request to an execution machine's runner: which fields it holds, how deep
 * it may nest and how large its caps may be, for the worker that writes it and the runner that reads
 * it alike. It knows no worker's types: the worker fills a RunnerJob from what it validated. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "lib/b64.h"
#include "lib/json-limits.h"
#include "lib/json-util.h"
#include "lib/language.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "nspawn/runner-request.h"

DEFINE_JSON_CLEANUP

static const char *const policies[] = {"none", "curated", NULL};

/* Each files entry anew, from the two fields the runner writes a file from. */
static struct json_object *files_copy(struct json_object *files) {
        cleanup_json struct json_object *copy = json_object_new_array();
        size_t n = json_object_array_length(files);

        if (!copy)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL, *f;

                (void) json_object_object_get_ex(e, "path", &p);
                (void) json_object_object_get_ex(e, "content_b64", &c);
                f = json_object_new_object();
                if (!f || json_object_array_add(copy, f) < 0) {
                        (void) json_object_put(f);
                        return NULL;
                }
                if (json_object_object_add(f, "path", json_object_get(p)) < 0 ||
                    (c && json_object_object_add(f, "content_b64", json_object_get(c)) < 0))
                        return NULL;
        }
        return TAKE_PTR(copy);
}

struct json_object *runner_request_new(const RunnerJob *job) {
        cleanup_json struct json_object *in = json_object_new_object();

        if (!in)
                return NULL;
        if (json_object_object_add(in, "code", json_object_new_string_len(job->code, (int) job->code_len)) < 0 ||
            json_object_object_add(in, "language", json_object_new_string(job->language)) < 0 ||
            (job->import_policy && json_object_object_add(in, "import_policy", json_object_new_string("curated")) < 0) ||
            json_object_object_add(in, "output_cap", json_object_new_int64((int64_t) job->output_cap)) < 0 ||
            json_object_object_add(in, "return_cap", json_object_new_int64((int64_t) job->return_cap)) < 0 ||
            (job->stream && json_object_object_add(in, "stream", json_object_new_boolean(1)) < 0) ||
            (job->egress && json_object_object_add(in, "egress", json_object_new_boolean(1)) < 0))
                return NULL;
        if (job->stdin_data && json_object_object_add(in, "stdin", json_object_new_string_len(job->stdin_data, (int) job->stdin_len)) < 0)
                return NULL;
        if (job->files) {
                struct json_object *files = files_copy(job->files);

                if (!files || json_object_object_add(in, "files", files) < 0) {
                        (void) json_object_put(files);
                        return NULL;
                }
        }
        if (job->return_files && json_object_object_add(in, "return_files", json_object_get(job->return_files)) < 0)
                return NULL;
        return TAKE_PTR(in);
}

static int cap(struct json_object *o, const char *key, int64_t def, int64_t *ret) {
        struct json_object *v = json_field(o, key);

        if (!v) {
                *ret = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        *ret = json_object_get_int64(v);
        return errno == 0 && *ret >= 0 && *ret <= RUNNER_CAP_MAX ? 0 : -EINVAL;
}

static const char *path_text(struct json_object *p) {
        return json_object_is_type(p, json_type_string) ? json_object_get_string(p) : json_object_to_json_string(p);
}

static bool path_ok(struct json_object *p) {
        return json_object_is_type(p, json_type_string) &&
               path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), NULL, 0) >= 0;
}

static int check_files(struct json_object *files, Error *reterr) {
        if (!json_object_is_type(files, json_type_array))
                return error_set(reterr, -EINVAL, "files must be a list");
        for (size_t i = 0; i < json_object_array_length(files); i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = json_field(e, "path"), *c = json_field(e, "content_b64");

                if (!json_object_is_type(e, json_type_object) || !path_ok(p))
                        return error_set(reterr, -EINVAL, "file path escapes working directory: '%s'", path_text(p));
                if (c && (!json_object_is_type(c, json_type_string) ||
                          b64_decoded_size(json_object_get_string(c), (size_t) json_object_get_string_len(c)) < 0))
                        return error_set(reterr, -EINVAL, "invalid base64 for '%s'", path_text(p));
        }
        return 0;
}

static int check_return_files(struct json_object *paths, Error *reterr) {
        if (!json_object_is_type(paths, json_type_array))
                return error_set(reterr, -EINVAL, "return_files must be a list");
        for (size_t i = 0; i < json_object_array_length(paths); i++) {
                struct json_object *p = json_object_array_get_idx(paths, i);

                if (!path_ok(p))
                        return error_set(reterr, -EINVAL, "file path escapes working directory: '%s'", path_text(p));
        }
        return 0;
}

int runner_request_parse(const char *data, size_t len, struct json_object **ret_root, RunnerRequest *ret, Error *reterr) {
        cleanup_json struct json_object *root = NULL;
        struct json_tokener *tok;
        RunnerRequest rq = {};
        int r;

        if (len > INT32_MAX)
                return error_set(reterr, -EINVAL, "request is not JSON");
        tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, data, (int) len);
        r = root && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        if (!r)
                return error_set(reterr, -EINVAL, "request is not JSON");

        rq.code = json_field(root, "code");
        if (!json_object_is_type(root, json_type_object) || !json_object_is_type(rq.code, json_type_string))
                return error_set(reterr, -EINVAL, "request has no code");
        rq.language = json_word(root, "language", language_names);
        rq.policy = json_word(root, "import_policy", policies);
        if (!rq.language || !rq.policy)
                return error_set(reterr, -EINVAL, "unknown language or import policy");
        rq.stdin_text = json_field(root, "stdin");
        if (rq.stdin_text && !json_object_is_type(rq.stdin_text, json_type_string))
                return error_set(reterr, -EINVAL, "stdin must be a string");
        if (cap(root, "output_cap", 1 << 20, &rq.output_cap) < 0 || cap(root, "return_cap", 8 << 20, &rq.return_cap) < 0)
                return error_set(reterr, -EINVAL, "caps out of range");
        rq.files = json_field(root, "files");
        if (rq.files && (r = check_files(rq.files, reterr)) < 0)
                return r;
        rq.return_files = json_field(root, "return_files");
        if (rq.return_files && (r = check_return_files(rq.return_files, reterr)) < 0)
                return r;
        if (json_field(root, "stream") && !json_object_is_type(json_field(root, "stream"), json_type_boolean))
                return error_set(reterr, -EINVAL, "stream must be a boolean");
        rq.stream = json_object_get_boolean(json_field(root, "stream"));
        if (json_field(root, "egress") && !json_object_is_type(json_field(root, "egress"), json_type_boolean))
                return error_set(reterr, -EINVAL, "egress must be a boolean");
        rq.egress = json_object_get_boolean(json_field(root, "egress"));

        *ret_root = TAKE_PTR(root);
        *ret = rq;
        return 0;
}
