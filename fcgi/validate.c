/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fcgi/messages.h"
#include "fcgi/validate.h"
#include "lib/b64.h"
#include "lib/egress.h"
#include "lib/error.h"
#include "lib/json-limits.h"
#include "lib/json-syntax.h"
#include "lib/json-util.h"
#include "lib/language.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/utf8.h"
#include "nspawn/runner-request.h"

const ValidateLimits validate_execute_limits = {
        .max_code_bytes = 1U << 20,
        .max_stdin_bytes = 8U << 20,
        .max_files = 1000,
        .max_file_bytes = 12U << 20,
        .max_return_files = 100,
        .default_timeout_s = 20,
        .max_timeout_s = 60,
};

const ValidateLimits validate_call_limits = {
        .default_timeout_s = 30,
        .max_timeout_s = 120,
};

/* A number too large for a double, which json-c makes infinite: no JSON value. */
static bool json_finite(struct json_object *v) {
        switch (json_object_get_type(v)) {
        case json_type_double:
                return isfinite(json_object_get_double(v));
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        if (!json_finite(json_object_array_get_idx(v, i)))
                                return false;
                return true;
        case json_type_object: {
                json_object_object_foreach(v, key, val) {
                        (void) key;
                        if (!json_finite(val))
                                return false;
                }
                return true;
        }
        default:
                return true;
        }
}

/* RFC 8259 JSON in well-formed UTF-8, checked here (json-syntax.h says why); json-c, lenient, then
 * builds what the check let through. */
int validate_parse_body(const char *body, size_t len, struct json_object **ret) {
        struct json_tokener *tok;
        struct json_object *obj;
        JsonSyntaxCounts counts;

        if (len == 0 || !json_syntax_scan(body, len, JSON_MAX_DEPTH, &counts) || !utf8_valid((const uint8_t *) body, len))
                return -EINVAL;
        if (counts.values > JSON_MAX_VALUES || counts.containers > JSON_MAX_CONTAINERS)
                return -E2BIG;

        tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;

        obj = json_tokener_parse_ex(tok, body, (int) len);
        if (!obj || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len ||
            !json_object_is_type(obj, json_type_object) || !json_finite(obj)) {
                (void) json_object_put(obj);
                json_tokener_free(tok);
                return -EINVAL;
        }

        json_tokener_free(tok);
        *ret = obj;
        return 0;
}

static int validate_timeout(struct json_object *body, const ValidateLimits *limits, unsigned *ret, Error *err) {
        struct json_object *v = json_field(body, "timeout_s");
        int64_t t;

        if (!v) {
                *ret = limits->default_timeout_s;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return error_set_status(err, 400, -EINVAL, MSG_TIMEOUT_RANGE, limits->max_timeout_s);

        errno = 0;
        t = json_object_get_int64(v);
        if (errno != 0 || t < 0 || t > (int64_t) limits->max_timeout_s)
                return error_set_status(err, 400, -EINVAL, MSG_TIMEOUT_RANGE, limits->max_timeout_s);

        *ret = t == 0 ? limits->default_timeout_s : (unsigned) t;
        return 0;
}

/* A path of files[] or return_files[]: escaping answers as the runner inside the sandbox would (on
 * /v1/execute, whose reference says so; /execute's is a 400 like any other bad path). */
static int validate_entry_path(struct json_object *p, bool returned, bool sandbox_words, size_t i, Error *err) {
        const char *path = json_object_get_string(p);
        size_t len = (size_t) json_object_get_string_len(p);
        int r = path_relative_check(path, len, NULL, 0);

        if (r == -EXDEV && sandbox_words) {
                char detail[PATH_MAX_BYTES + 64];

                (void) snprintf(detail, sizeof(detail), MSG_PATH_ESCAPES, path);
                return error_set_status(err, 502, -EINVAL, MSG_SANDBOX_HTTP, 400, detail);
        }
        if (r < 0 && returned)
                return error_set_status(err, 400, -EINVAL, MSG_RETURN_FILE_NAME, i);
        if (r < 0)
                return error_set_status(err, 400, -EINVAL, MSG_FILE_NAME, i);
        return 0;
}

static int validate_files(struct json_object *body, const ValidateLimits *limits, ExecRequest *req, Error *err) {
        struct json_object *files = json_field(body, "files");
        size_t n, total = 0;

        if (!files)
                return 0;
        if (!json_object_is_type(files, json_type_array))
                return error_set_status(err, 400, -EINVAL, MSG_FILES_TYPE);

        n = json_object_array_length(files);
        if (n > limits->max_files)
                return error_set_status(err, 400, -EINVAL, MSG_FILES_TOO_MANY, limits->max_files);

        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL;
                long long size;
                int r;

                if (!json_object_is_type(e, json_type_object) ||
                    !json_object_object_get_ex(e, "path", &p) || !json_object_is_type(p, json_type_string) ||
                    !json_object_object_get_ex(e, "content_b64", &c) || !json_object_is_type(c, json_type_string))
                        return error_set_status(err, 400, -EINVAL, MSG_FILE_ENTRY, i);

                r = validate_entry_path(p, false, !req->reference_004, i, err);
                if (r < 0)
                        return r;

                size = b64_decoded_size(json_object_get_string(c), (size_t) json_object_get_string_len(c));
                if (size < 0)
                        return error_set_status(err, 400, -EINVAL, MSG_FILE_BASE64, i);
                total += (size_t) size;
                if (total > limits->max_file_bytes)
                        return error_set_status(err, 400, -EINVAL, MSG_TOO_LARGE, "files", limits->max_file_bytes);
        }

        req->files = files;
        return 0;
}

int validate_network_field(struct json_object *body, struct json_object **ret, Error *reterr) {
        struct json_object *net = json_field(body, "network"), *allow;
        size_t n;

        *ret = NULL;
        if (!net)
                return 0;
        allow = json_object_is_type(net, json_type_object) ? json_field(net, "allow") : NULL;
        if (!allow || !json_object_is_type(allow, json_type_array) || json_object_object_length(net) != 1)
                return error_set_status(reterr, 400, -EINVAL, MSG_NETWORK_TYPE, EGRESS_REQUEST_MAX);
        n = json_object_array_length(allow);
        if (n == 0 || n > EGRESS_REQUEST_MAX)
                return error_set_status(reterr, 400, -EINVAL, MSG_NETWORK_TYPE, EGRESS_REQUEST_MAX);
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(allow, i);
                EgressRule rule;

                if (!json_object_is_type(e, json_type_string) ||
                    egress_rule_parse(json_object_get_string(e), (size_t) json_object_get_string_len(e), &rule) < 0)
                        return error_set_status(reterr, 400, -EINVAL, MSG_NETWORK_ENTRY, i);
        }
        *ret = allow;
        return 0;
}

int validate_files_field(struct json_object *body, const ValidateLimits *limits, struct json_object **ret, Error *reterr) {
        /* Not /v1/execute's: no sandbox's words for a path that climbs out. */
        ExecRequest req = {.reference_004 = true};
        int r = validate_files(body, limits, &req, reterr);

        if (r >= 0)
                *ret = req.files;
        return r;
}

static int validate_return_files(struct json_object *body, const ValidateLimits *limits, ExecRequest *req, Error *err) {
        struct json_object *rf = json_field(body, "return_files");
        size_t n;

        if (!rf)
                return 0;
        if (!json_object_is_type(rf, json_type_array))
                return error_set_status(err, 400, -EINVAL, MSG_RETURN_FILES_TYPE);

        n = json_object_array_length(rf);
        if (n > limits->max_return_files)
                return error_set_status(err, 400, -EINVAL, MSG_RETURN_FILES_TOO_MANY, limits->max_return_files);

        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(rf, i);
                int r;

                if (!json_object_is_type(p, json_type_string))
                        return error_set_status(err, 400, -EINVAL, MSG_RETURN_FILES_TYPE);
                r = validate_entry_path(p, true, !req->reference_004, i, err);
                if (r < 0)
                        return r;
        }

        req->return_files = rf;
        return 0;
}

static int validate_strings(struct json_object *body, const ValidateLimits *limits, ExecRequest *req, Error *err) {
        struct json_object *code = json_field(body, "code"), *lang = json_field(body, "language"), *in = json_field(body, "stdin");

        if (!code || !json_object_is_type(code, json_type_string))
                return error_set_status(err, 400, -EINVAL, MSG_CODE_REQUIRED);
        req->code = json_object_get_string(code);
        req->code_len = (size_t) json_object_get_string_len(code);
        if (req->code_len > limits->max_code_bytes)
                return error_set_status(err, 400, -EINVAL, MSG_TOO_LARGE, "code", limits->max_code_bytes);

        if (lang && !json_object_is_type(lang, json_type_string))
                return error_set_status(err, 400, -EINVAL, MSG_LANGUAGE_TYPE);
        req->language = language_names[0];
        if (lang) {
                req->language = NULL;
                for (size_t i = 0; i < LANGUAGES_N; i++)
                        if (strcmp(json_object_get_string(lang), language_names[i]) == 0)
                                req->language = language_names[i];
                if (!req->language)
                        return error_set_status(err, 400, -EINVAL, MSG_UNSUPPORTED_LANGUAGE, json_object_get_string(lang));
        }
        if (strcmp(req->language, "python") != 0) {
                if (req->code_len > EXEC_ARG_CODE_MAX)
                        return error_set_status(err, 400, -EINVAL, MSG_TOO_LARGE, "code", EXEC_ARG_CODE_MAX);
                if (memchr(req->code, 0, req->code_len))
                        return error_set_status(err, 400, -EINVAL, MSG_CODE_NUL, req->language);
        }

        if (in && !json_object_is_type(in, json_type_string))
                return error_set_status(err, 400, -EINVAL, MSG_STDIN_TYPE);
        if (in) {
                req->stdin_data = json_object_get_string(in);
                req->stdin_len = (size_t) json_object_get_string_len(in);
                if (req->stdin_len > limits->max_stdin_bytes)
                        return error_set_status(err, 400, -EINVAL, MSG_TOO_LARGE, "stdin", limits->max_stdin_bytes);
        }
        return 0;
}

int validate_execute(struct json_object *body, const ValidateLimits *limits, ExecRequest *ret, Error *reterr) {
        ExecRequest req = {};
        int r;

        r = validate_strings(body, limits, &req, reterr);
        if (r < 0)
                return r;
        r = validate_timeout(body, limits, &req.timeout_s, reterr);
        if (r < 0)
                return r;
        r = validate_files(body, limits, &req, reterr);
        if (r < 0)
                return r;
        r = validate_return_files(body, limits, &req, reterr);
        if (r < 0)
                return r;
        r = validate_network_field(body, &req.network_allow, reterr);
        if (r < 0)
                return r;

        *ret = req;
        return 0;
}

/* Characters, as JSON Schema's maxLength counts them: code points (the body is valid UTF-8). */
static size_t utf8_chars(const char *s, size_t len) {
        size_t n = 0;

        for (size_t i = 0; i < len; i++)
                n += ((unsigned char) s[i] & 0xc0) != 0x80;
        return n;
}

/* Reference 004's attachments, as /v1/execute's files: [{"path", "content_b64"}], made here. */
static int validate_attachments(struct json_object *body, const ValidateLimits *limits, ExecRequest *req, Error *err) {
        struct json_object *att = json_field(body, "attachments"), *files;
        size_t n, total = 0;

        if (!att)
                return 0;
        if (!json_object_is_type(att, json_type_array))
                return error_set_status(err, 400, -EINVAL, MSG_ATTACHMENTS_TYPE);
        n = json_object_array_length(att);
        if (n > EXEC_004_ATTACHMENTS_MAX)
                return error_set_status(err, 400, -EINVAL, MSG_ATTACHMENTS_TOO_MANY, EXEC_004_ATTACHMENTS_MAX);

        files = json_object_new_array();
        if (!files)
                return error_set_status(err, 500, -ENOMEM, MSG_INTERNAL, "out of memory");
        req->owned_files = req->files = files;
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(att, i), *name = NULL, *c = NULL, *f;
                long long size;

                if (!json_object_is_type(e, json_type_object) ||
                    !json_object_object_get_ex(e, "filename", &name) || !json_object_is_type(name, json_type_string) ||
                    !json_object_object_get_ex(e, "content_base_64", &c) || !json_object_is_type(c, json_type_string))
                        return error_set_status(err, 400, -EINVAL, MSG_ATTACHMENT_ENTRY, i);
                if (path_relative_check(json_object_get_string(name), (size_t) json_object_get_string_len(name), NULL, 0) < 0)
                        return error_set_status(err, 400, -EINVAL, MSG_ATTACHMENT_NAME, i);
                size = b64_decoded_size(json_object_get_string(c), (size_t) json_object_get_string_len(c));
                if (size < 0)
                        return error_set_status(err, 400, -EINVAL, MSG_ATTACHMENT_BASE64, i);
                total += (size_t) size;
                if (total > limits->max_file_bytes)
                        return error_set_status(err, 400, -EINVAL, MSG_TOO_LARGE, "attachments", limits->max_file_bytes);

                f = json_object_new_object();
                if (!f || json_object_array_add(files, f) < 0) {
                        json_object_put(f);
                        return error_set_status(err, 500, -ENOMEM, MSG_INTERNAL, "out of memory");
                }
                if (json_object_object_add(f, "path", json_object_get(name)) < 0 ||
                    json_object_object_add(f, "content_b64", json_object_get(c)) < 0)
                        return error_set_status(err, 500, -ENOMEM, MSG_INTERNAL, "out of memory");
        }
        return 0;
}

int validate_execute_004(struct json_object *body, const ValidateLimits *limits, ExecRequest *ret, Error *reterr) {
        ExecRequest req = {.language = "python", .import_policy = true, .reference_004 = true, .timeout_s = limits->default_timeout_s};
        struct json_object *code = json_field(body, "code"), *in = json_field(body, "stdin_data");
        int r;

        if (!code || !json_object_is_type(code, json_type_string))
                return error_set_status(reterr, 400, -EINVAL, MSG_CODE_REQUIRED);
        req.code = json_object_get_string(code);
        req.code_len = (size_t) json_object_get_string_len(code);
        if (utf8_chars(req.code, req.code_len) > EXEC_004_CODE_CHARS_MAX)
                return error_set_status(reterr, 400, -EINVAL, MSG_CODE_TOO_LONG, EXEC_004_CODE_CHARS_MAX);
        if (in && !json_object_is_type(in, json_type_string))
                return error_set_status(reterr, 400, -EINVAL, MSG_STDIN_DATA_TYPE);
        if (in) {
                req.stdin_data = json_object_get_string(in);
                req.stdin_len = (size_t) json_object_get_string_len(in);
                if (req.stdin_len > limits->max_stdin_bytes)
                        return error_set_status(reterr, 400, -EINVAL, MSG_TOO_LARGE, "stdin_data", limits->max_stdin_bytes);
        }
        r = validate_attachments(body, limits, &req, reterr);
        if (r >= 0)
                r = validate_return_files(body, limits, &req, reterr);
        if (r >= 0)
                r = validate_network_field(body, &req.network_allow, reterr);
        if (r < 0) {
                execute_request_done(&req);
                return r;
        }
        *ret = req;
        return 0;
}

void execute_request_done(ExecRequest *x) {
        json_object_put(x->owned_files);
        x->owned_files = x->files = NULL;
}

void execute_request_job(const ExecRequest *x, size_t output_cap, size_t return_cap, RunnerJob *ret) {
        *ret = (RunnerJob){
                .code = x->code,
                .code_len = x->code_len,
                .language = x->language,
                .import_policy = x->import_policy,
                .stdin_data = x->stdin_data,
                .stdin_len = x->stdin_len,
                .files = x->files,
                .return_files = x->return_files,
                .stream = x->stream,
                .egress = x->network_allow != NULL,
                .output_cap = output_cap,
                .return_cap = return_cap,
        };
}

/* A Python identifier, ASCII only (what an agent's tool module and function are called). */
static bool python_identifier(const char *s, size_t n) {
        if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

static bool python_module(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 256)
                return false;
        for (const char *p = s;;) {
                const char *dot = strchr(p, '.');
                size_t len = dot ? (size_t) (dot - p) : strlen(p);

                if (!python_identifier(p, len))
                        return false;
                if (!dot)
                        return true;
                p = dot + 1;
        }
}

static const char *required_string(struct json_object *body, const char *key) {
        struct json_object *v = json_field(body, key);

        if (!v || !json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0)
                return NULL;
        return json_object_get_string(v);
}

int validate_call(struct json_object *body, const ValidateLimits *limits, CallRequest *ret, Error *reterr) {
        CallRequest c = {.module = "agent"};
        struct json_object *module = json_field(body, "module"), *args = json_field(body, "args");
        int r;

        c.image = required_string(body, "image");
        c.function = required_string(body, "function");
        if (!c.image || !c.function)
                return error_set_status(reterr, 400, -EINVAL, MSG_CALL_REQUIRED);
        if (!python_identifier(c.function, strlen(c.function)))
                return error_set_status(reterr, 400, -EINVAL, MSG_CALL_FUNCTION);
        if (module && (!json_object_is_type(module, json_type_string) || !python_module(json_object_get_string(module))))
                return error_set_status(reterr, 400, -EINVAL, MSG_CALL_MODULE);
        if (module)
                c.module = json_object_get_string(module);
        if (args && !json_object_is_type(args, json_type_object))
                return error_set_status(reterr, 400, -EINVAL, MSG_CALL_ARGS);
        c.args = args;

        r = validate_timeout(body, limits, &c.timeout_s, reterr);
        if (r < 0)
                return r;

        *ret = c;
        return 0;
}
