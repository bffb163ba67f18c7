/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/validate.h"
#include "lib/json-limits.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

DEFINE_JSON_CLEANUP

/* ---- validate_parse_body ---- */

typedef struct BodyCase {
        const char *name;
        const char *body;
        size_t len; /* 0: strlen(body) */
        int expected;
} BodyCase;

static const BodyCase body_cases[] = {
        {"empty body", "", 0, -EINVAL},
        {"not JSON", "code=print(1)", 0, -EINVAL},
        {"truncated object", "{\"code\":\"x\"", 0, -EINVAL},
        {"trailing garbage", "{\"code\":\"x\"} x", 0, -EINVAL},
        {"two objects", "{}{}", 0, -EINVAL},
        {"trailing NUL", "{}\0", 3, -EINVAL},
        {"NUL inside", "{\"a\"\0:1}", 8, -EINVAL},
        {"array instead of object", "[{\"code\":\"x\"}]", 0, -EINVAL},
        {"string instead of object", "\"code\"", 0, -EINVAL},
        {"number instead of object", "42", 0, -EINVAL},
        {"null instead of object", "null", 0, -EINVAL},
        {"true instead of object", "true", 0, -EINVAL},
        {"invalid UTF-8 (0xff)", "{\"code\":\"\xff\"}", 0, -EINVAL},
        {"invalid UTF-8 (lone continuation 0x80)", "{\"code\":\"a\x80\"}", 0, -EINVAL},
        {"invalid UTF-8 (truncated sequence)", "{\"code\":\"\xe2\x82\"}", 0, -EINVAL},
        {"invalid UTF-8 in a key", "{\"\xfe\":1}", 0, -EINVAL},
        {"invalid UTF-8 outside strings", "{\"code\":\"x\"}\xff", 0, -EINVAL},
        {"single quotes", "{'code':'x'}", 0, -EINVAL},
        {"unquoted key", "{code:\"x\"}", 0, -EINVAL},
        {"trailing comma", "{\"code\":\"x\",}", 0, -EINVAL},
        {"comment", "/* c */{}", 0, -EINVAL},
        {"hex number", "{\"t\":0x10}", 0, -EINVAL},
        {"leading zero", "{\"t\":05}", 0, -EINVAL},
        {"plus sign", "{\"t\":+1}", 0, -EINVAL},
        {"bad escape", "{\"c\":\"\\x41\"}", 0, -EINVAL},
        {"empty object", "{}", 0, 0},
        {"object", "{\"code\":\"print(1)\"}", 0, 0},
        {"white space around", " \t\r\n{\"code\":\"x\"}\r\n ", 0, 0},
        {"UTF-8 text", "{\"code\":\"print('caf\xc3\xa9 \xf0\x9f\x98\x80')\"}", 0, 0},
        {"escaped NUL", "{\"code\":\"a\\u0000b\"}", 0, 0},
        {"nested arrays and objects", "{\"a\":[{\"b\":[1,2,{\"c\":null}]}],\"d\":-1.5e3}", 0, 0},
};

static void test_parse_body(void) {
        for (size_t i = 0; i < ELEMENTSOF(body_cases); i++) {
                const BodyCase *c = &body_cases[i];
                size_t len = c->len ? c->len : strlen(c->body);
                struct json_object *sentinel = (struct json_object *) &sentinel, *obj = sentinel;
                int r = validate_parse_body(c->body, len, &obj);

                if (c->expected < 0)
                        tap_ok(r == c->expected && obj == sentinel, "parse body rejects %s", c->name);
                else
                        tap_ok(r == 0 && obj != sentinel && json_object_is_type(obj, json_type_object), "parse body accepts %s", c->name);
                if (r == 0 && obj != sentinel)
                        (void) json_object_put(obj);
        }
}

/* Not RFC 8259 JSON or not valid UTF-8, which json-c 0.16 takes even in its strict mode (its UTF-8
 * check only counts continuation bytes): validate.c rejects them on every json-c. */
static void test_parse_body_json_c_leniency(void) {
        static const BodyCase cases[] = {
                {"invalid UTF-8 (overlong C0 AF)", "{\"code\":\"\xc0\xaf\"}", 0, -EINVAL},
                {"invalid UTF-8 (overlong E0 80 80)", "{\"code\":\"\xe0\x80\x80\"}", 0, -EINVAL},
                {"invalid UTF-8 (surrogate ED A0 80)", "{\"code\":\"\xed\xa0\x80\"}", 0, -EINVAL},
                {"invalid UTF-8 (F4 90 80 80, above U+10FFFF)", "{\"code\":\"\xf4\x90\x80\x80\"}", 0, -EINVAL},
                {"invalid UTF-8 (F5 80 80 80)", "{\"code\":\"\xf5\x80\x80\x80\"}", 0, -EINVAL},
                {"NaN", "{\"t\":NaN}", 0, -EINVAL},
                {"Infinity", "{\"t\":-Infinity}", 0, -EINVAL},
                {"raw control character in a string", "{\"code\":\"a\x01\"}", 0, -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *obj = NULL;
                int r = validate_parse_body(cases[i].body, strlen(cases[i].body), &obj);

                tap_ok(r == -EINVAL, "parse body rejects %s", cases[i].name);
                if (r == 0)
                        (void) json_object_put(obj);
        }
}

/* An object whose single member nests depth levels: {"a":[[[...1...]]]} or {"a":{"a":...}}. */
static char *make_nested(size_t depth, bool objects) {
        size_t size = 8 + depth * 6, o = 0;
        char *b = malloc(size);

        if (!b)
                abort();
        o += (size_t) sprintf(b + o, "{\"a\":");
        for (size_t i = 0; i < depth; i++)
                o += (size_t) sprintf(b + o, "%s", objects ? "{\"a\":" : "[");
        b[o++] = '1';
        for (size_t i = 0; i < depth; i++)
                b[o++] = objects ? '}' : ']';
        b[o++] = '}';
        b[o] = 0;
        return b;
}

static void test_parse_body_depth(void) {
        static const struct {
                size_t depth;
                bool objects;
                int expected;
        } cases[] = {
                {20, false, 0},
                {20, true, 0},
                {1000, false, -EINVAL},
                {1000, true, -EINVAL},
                {100000, false, -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_free char *b = make_nested(cases[i].depth, cases[i].objects);
                cleanup_json struct json_object *obj = NULL;

                tap_is_int(validate_parse_body(b, strlen(b), &obj), cases[i].expected, "parse body with %zu nested %s",
                           cases[i].depth, cases[i].objects ? "objects" : "arrays");
        }
}

/* ---- validate_execute ---- */

static const ValidateLimits limits = {
        .max_code_bytes = 16,
        .max_stdin_bytes = 8,
        .max_files = 2,
        .max_file_bytes = 6,
        .max_return_files = 2,
        .default_timeout_s = 20,
        .max_timeout_s = 60,
};

typedef struct ExecCase {
        const char *body;
        int status; /* 0: valid */
        const char *message;
        unsigned timeout_s; /* when valid */
} ExecCase;

#define OK(body, t) \
        { body, 0, NULL, t }
#define BAD(body, status, message) \
        { body, status, message, 0 }
#define CODE "\"code\":\"print(1)\""

#define NET_TYPE "network must be an object whose \"allow\" is an array of 1 to 32 host names"

static const ExecCase exec_cases[] = {
        /* code */
        BAD("{}", 400, "code is required and must be a string"),
        BAD("{\"code\":null}", 400, "code is required and must be a string"),
        BAD("{\"code\":1}", 400, "code is required and must be a string"),
        BAD("{\"code\":[\"print(1)\"]}", 400, "code is required and must be a string"),
        BAD("{\"code\":{}}", 400, "code is required and must be a string"),
        BAD("{\"language\":\"ruby\"}", 400, "code is required and must be a string"),
        OK("{\"code\":\"\"}", 20),
        OK("{\"code\":\"0123456789abcdef\"}", 20),
        BAD("{\"code\":\"0123456789abcdefg\"}", 400, "code is larger than 16 bytes"),
        /* language */
        OK("{" CODE ",\"language\":\"python\"}", 20),
        OK("{" CODE ",\"language\":null}", 20),
        OK("{" CODE ",\"language\":\"node\"}", 20),
        OK("{" CODE ",\"language\":\"bash\"}", 20),
        BAD("{\"code\":\"a\\u0000b\",\"language\":\"bash\"}", 400, "bash code must not contain NUL characters"),
        BAD("{\"code\":\"a\\u0000b\",\"language\":\"node\"}", 400, "node code must not contain NUL characters"),
        OK("{\"code\":\"a\\u0000b\",\"language\":\"python\"}", 20),
        BAD("{" CODE ",\"language\":\"javascript\"}", 400, "unsupported language \"javascript\""),
        BAD("{" CODE ",\"language\":\"ruby\"}", 400, "unsupported language \"ruby\""),
        BAD("{" CODE ",\"language\":\"Python\"}", 400, "unsupported language \"Python\""),
        BAD("{" CODE ",\"language\":\"\"}", 400, "unsupported language \"\""),
        BAD("{" CODE ",\"language\":1}", 400, "language must be a string"),
        /* timeout_s */
        OK("{" CODE "}", 20),
        OK("{" CODE ",\"timeout_s\":0}", 20),
        OK("{" CODE ",\"timeout_s\":null}", 20),
        OK("{" CODE ",\"timeout_s\":1}", 1),
        OK("{" CODE ",\"timeout_s\":5}", 5),
        OK("{" CODE ",\"timeout_s\":60}", 60),
        BAD("{" CODE ",\"timeout_s\":61}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":-1}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":\"5\"}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":5.5}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":1e1}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":true}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":[5]}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":4294967301}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":9223372036854775807}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":18446744073709551621}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":99999999999999999999}", 400, "timeout_s must be between 1 and 60"),
        BAD("{" CODE ",\"timeout_s\":-99999999999999999999}", 400, "timeout_s must be between 1 and 60"),
        /* stdin */
        OK("{" CODE ",\"stdin\":\"12345678\"}", 20),
        OK("{" CODE ",\"stdin\":null}", 20),
        BAD("{" CODE ",\"stdin\":\"123456789\"}", 400, "stdin is larger than 8 bytes"),
        BAD("{" CODE ",\"stdin\":1}", 400, "stdin must be a string"),
        BAD("{" CODE ",\"stdin\":[\"a\"]}", 400, "stdin must be a string"),
        /* files */
        OK("{" CODE ",\"files\":[]}", 20),
        OK("{" CODE ",\"files\":null}", 20),
        OK("{" CODE ",\"files\":[{\"path\":\"a.txt\",\"content_b64\":\"Zm9v\"},{\"path\":\"d/b\",\"content_b64\":\"Zm9v\"}]}", 20),
        OK("{" CODE ",\"files\":[{\"path\":\"empty\",\"content_b64\":\"\",\"mode\":420}]}", 20),
        BAD("{" CODE ",\"files\":\"a.txt\"}", 400, "files must be an array of {\"path\", \"content_b64\"} objects"),
        BAD("{" CODE ",\"files\":{\"path\":\"a\",\"content_b64\":\"\"}}", 400, "files must be an array of {\"path\", \"content_b64\"} objects"),
        BAD("{" CODE ",\"files\":[1]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[null]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\"}]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"content_b64\":\"Zm9v\"}]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"path\":1,\"content_b64\":\"Zm9v\"}]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":null}]}", 400, "files[0] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"\"},{\"path\":\"b\"}]}", 400, "files[1] must be an object with string fields \"path\" and \"content_b64\""),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"Zm9\"}]}", 400, "files[0].content_b64 is not valid base64"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"Zm9v\\n\"}]}", 400, "files[0].content_b64 is not valid base64"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"Zh==\"}]}", 400, "files[0].content_b64 is not valid base64"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"\"},{\"path\":\"b\",\"content_b64\":\"****\"}]}", 400, "files[1].content_b64 is not valid base64"),
        BAD("{" CODE ",\"files\":[{\"path\":\"../x\",\"content_b64\":\"Zm9v\"}]}", 502, "the sandbox returned HTTP 400: file path escapes working directory: '../x'"),
        BAD("{" CODE ",\"files\":[{\"path\":\"/etc/passwd\",\"content_b64\":\"\"}]}", 502, "the sandbox returned HTTP 400: file path escapes working directory: '/etc/passwd'"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a/../../x\",\"content_b64\":\"\"}]}", 502, "the sandbox returned HTTP 400: file path escapes working directory: 'a/../../x'"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a/\",\"content_b64\":\"\"}]}", 400, "files[0].path must name a file"),
        BAD("{" CODE ",\"files\":[{\"path\":\"\",\"content_b64\":\"\"}]}", 400, "files[0].path must name a file"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"\"},{\"path\":\".\",\"content_b64\":\"\"}]}", 400, "files[1].path must name a file"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\\u0000b\",\"content_b64\":\"\"}]}", 400, "files[0].path must name a file"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"\"},{\"path\":\"b\",\"content_b64\":\"\"},{\"path\":\"c\",\"content_b64\":\"\"}]}", 400, "files has more than 2 entries"),
        BAD("{" CODE ",\"files\":[{\"path\":\"a\",\"content_b64\":\"Zm9v\"},{\"path\":\"b\",\"content_b64\":\"Zm9vYg==\"}]}", 400, "files is larger than 6 bytes"),
        /* return_files */
        OK("{" CODE ",\"return_files\":[]}", 20),
        OK("{" CODE ",\"return_files\":[\"out.txt\",\"d/e\"]}", 20),
        BAD("{" CODE ",\"return_files\":\"out.txt\"}", 400, "return_files must be an array of strings"),
        BAD("{" CODE ",\"return_files\":[1]}", 400, "return_files must be an array of strings"),
        BAD("{" CODE ",\"return_files\":[\"a\",null]}", 400, "return_files must be an array of strings"),
        BAD("{" CODE ",\"return_files\":[\"a\",\"b\",\"c\"]}", 400, "return_files has more than 2 entries"),
        BAD("{" CODE ",\"return_files\":[\"a/\"]}", 400, "return_files[0] must name a file"),
        BAD("{" CODE ",\"return_files\":[\"a\",\"\"]}", 400, "return_files[1] must name a file"),
        BAD("{" CODE ",\"return_files\":[\"../x\"]}", 502, "the sandbox returned HTTP 400: file path escapes working directory: '../x'"),
        BAD("{" CODE ",\"return_files\":[\"/etc/shadow\"]}", 502, "the sandbox returned HTTP 400: file path escapes working directory: '/etc/shadow'"),
        /* network: its shape and each entry's grammar; whether it may be reached is the route's */
        OK("{" CODE ",\"network\":{\"allow\":[\"pypi.org\",\"*.pythonhosted.org\",\"example.com:8443\"]}}", 20),
        BAD("{" CODE ",\"network\":true}", 400, NET_TYPE),
        OK("{" CODE ",\"network\":null}", 20), /* null is absent, as for every field */
        BAD("{" CODE ",\"network\":{}}", 400, NET_TYPE),
        BAD("{" CODE ",\"network\":{\"allow\":[]}}", 400, NET_TYPE),
        BAD("{" CODE ",\"network\":{\"allow\":\"pypi.org\"}}", 400, NET_TYPE),
        BAD("{" CODE ",\"network\":{\"allow\":[\"pypi.org\"],\"deny\":[]}}", 400, NET_TYPE),
        BAD("{" CODE ",\"network\":{\"allow\":[\"pypi.org\",1]}}", 400, "network.allow[1] must be a host name or *.suffix, with an optional :port"),
        BAD("{" CODE ",\"network\":{\"allow\":[\"169.254.169.254\"]}}", 400, "network.allow[0] must be a host name or *.suffix, with an optional :port"),
        BAD("{" CODE ",\"network\":{\"allow\":[\"pypi.org:0\"]}}", 400, "network.allow[0] must be a host name or *.suffix, with an optional :port"),
        BAD("{" CODE ",\"network\":{\"allow\":[\"a.io\",\"b.io\",\"c.io\",\"d.io\",\"e.io\",\"f.io\",\"g.io\",\"h.io\",\"i.io\",\"j.io\","
            "\"k.io\",\"l.io\",\"m.io\",\"n.io\",\"o.io\",\"p.io\",\"q.io\",\"r.io\",\"s.io\",\"t.io\",\"u.io\",\"v.io\",\"w.io\",\"x.io\","
            "\"y.io\",\"z.io\",\"aa.io\",\"ab.io\",\"ac.io\",\"ad.io\",\"ae.io\",\"af.io\",\"ag.io\"]}}",
            400, NET_TYPE),
        /* order: the first failing field decides */
        BAD("{\"code\":1,\"language\":\"ruby\",\"timeout_s\":99}", 400, "code is required and must be a string"),
        BAD("{" CODE ",\"language\":\"ruby\",\"timeout_s\":99}", 400, "unsupported language \"ruby\""),
        /* fields the API does not know are ignored */
        OK("{" CODE ",\"extra\":{\"deep\":[1,2,3]}}", 20),
};

static void test_execute(void) {
        for (size_t i = 0; i < ELEMENTSOF(exec_cases); i++) {
                const ExecCase *c = &exec_cases[i];
                cleanup_json struct json_object *body = NULL;
                ExecRequest req = {.code = "untouched", .timeout_s = 12345};
                Error err = {.status = -1};
                int r;

                r = validate_parse_body(c->body, strlen(c->body), &body);
                if (!tap_is_int(r, 0, "parse %s", c->body))
                        continue;

                r = validate_execute(body, &limits, &req, &err);
                if (c->status == 0) {
                        tap_ok(r == 0 && req.timeout_s == c->timeout_s, "valid: %s (timeout %u)", c->body, c->timeout_s);
                        if (r < 0)
                                tap_diag("  status %d, message '%s'", err.status, err.message);
                } else {
                        tap_ok(r == -EINVAL && err.status == c->status && strcmp(err.message, c->message) == 0 &&
                                       strcmp(req.code, "untouched") == 0 && req.timeout_s == 12345,
                               "rejected %d: %s", c->status, c->body);
                        if (r != -EINVAL || err.status != c->status || strcmp(err.message, c->message) != 0)
                                tap_diag("  got r=%d %d '%s', want %d '%s'", r, err.status, err.message, c->status, c->message);
                }
        }
}

/* What a valid request hands on: borrowed views of the body, lengths that count embedded NULs. */
static void test_execute_fields(void) {
        static const char body_text[] = "{\"code\":\"a\\u0000b\",\"stdin\":\"in\\u0000\",\"timeout_s\":7,"
                                        "\"files\":[{\"path\":\"x\",\"content_b64\":\"\"}],\"return_files\":[\"y\"]}";
        cleanup_json struct json_object *body = NULL, *minimal = NULL;
        ExecRequest req = {}, min = {.stdin_data = "untouched"};
        Error err = {};
        struct json_object *files = NULL, *rf = NULL;

        if (!tap_is_int(validate_parse_body(body_text, strlen(body_text), &body), 0, "parse the full request"))
                return;
        (void) json_object_object_get_ex(body, "files", &files);
        (void) json_object_object_get_ex(body, "return_files", &rf);

        tap_is_int(validate_execute(body, &limits, &req, &err), 0, "full request is valid");
        tap_ok(req.code_len == 3 && memcmp(req.code, "a\0b", 3) == 0, "code keeps its embedded NUL (3 bytes)");
        tap_ok(req.stdin_data && req.stdin_len == 3 && memcmp(req.stdin_data, "in\0", 3) == 0, "stdin keeps its embedded NUL (3 bytes)");
        tap_is_int(req.timeout_s, 7, "timeout_s taken");
        tap_ok(req.files == files && req.return_files == rf, "files and return_files are the body's arrays");

        if (!tap_is_int(validate_parse_body("{\"code\":\"x\"}", strlen("{\"code\":\"x\"}"), &minimal), 0, "parse the minimal request"))
                return;
        tap_is_int(validate_execute(minimal, &limits, &min, &err), 0, "minimal request is valid");
        tap_ok(min.stdin_data == NULL && min.stdin_len == 0 && min.files == NULL && min.return_files == NULL,
               "absent stdin, files, return_files are NULL");
}

/* An escaping path far longer than the message buffer: truncated, not overflowing. */
static void test_execute_long_escape(void) {
        static const char prefix[] = "the sandbox returned HTTP 400: file path escapes working directory: '/";
        static char path[4001];
        cleanup_free char *text = NULL;
        cleanup_json struct json_object *body = NULL;
        ExecRequest req = {};
        Error err = {};

        memset(path, 'a', sizeof(path) - 1);
        if (asprintf(&text, "{\"code\":\"x\",\"files\":[{\"path\":\"/%s\",\"content_b64\":\"\"}]}", path) < 0)
                abort();
        if (!tap_is_int(validate_parse_body(text, strlen(text), &body), 0, "parse a request with a 4001-byte absolute path"))
                return;
        tap_ok(validate_execute(body, &limits, &req, &err) == -EINVAL && err.status == 502 &&
                       strncmp(err.message, prefix, strlen(prefix)) == 0 && strlen(err.message) == sizeof(err.message) - 1,
               "4001-byte absolute path: 502, message truncated to %zu bytes", sizeof(err.message) - 1);
}

/* node and bash get their code as one argument: the kernel's limit on one, whatever the API's. */
static void test_execute_argument_limit(void) {
        static const ValidateLimits big = {.max_code_bytes = 1U << 20, .default_timeout_s = 20, .max_timeout_s = 60};
        static const char *const languages[] = {"node", "bash", "python"};

        for (size_t l = 0; l < ELEMENTSOF(languages); l++)
                for (size_t len = EXEC_ARG_CODE_MAX; len <= EXEC_ARG_CODE_MAX + 1; len++) {
                        cleanup_free char *code = malloc(len + 1), *text = NULL;
                        cleanup_json struct json_object *body = NULL;
                        ExecRequest req = {};
                        Error err = {};
                        int r;
                        bool fits = len <= EXEC_ARG_CODE_MAX || strcmp(languages[l], "python") == 0;

                        if (!code)
                                abort();
                        memset(code, 'x', len);
                        code[len] = 0;
                        if (asprintf(&text, "{\"code\":\"%s\",\"language\":\"%s\"}", code, languages[l]) < 0)
                                abort();
                        if (!tap_is_int(validate_parse_body(text, strlen(text), &body), 0, "parse %zu bytes of %s", len, languages[l]))
                                continue;
                        r = validate_execute(body, &big, &req, &err);
                        if (fits)
                                tap_ok(r == 0 && strcmp(req.language, languages[l]) == 0, "%zu bytes of %s: valid", len, languages[l]);
                        else
                                tap_ok(r == -EINVAL && err.status == 400 && strcmp(err.message, "code is larger than 131071 bytes") == 0,
                                       "%zu bytes of %s: refused (got '%s')", len, languages[l], err.message);
                }
}

/* ---- validate_execute_004 (reference 004's POST /execute) ---- */

static const ValidateLimits limits_004 = {
        .max_code_bytes = 1U << 20,
        .max_stdin_bytes = 8,
        .max_files = 1000,
        .max_file_bytes = 6,
        .max_return_files = 2,
        .default_timeout_s = 20,
        .max_timeout_s = 60,
};

static const ExecCase cases_004[] = {
        OK("{\"code\":\"print(1)\"}", 20),
        BAD("{}", 400, "code is required and must be a string"),
        BAD("{\"code\":7}", 400, "code is required and must be a string"),
        BAD("{\"code\":\"x\",\"stdin_data\":1}", 400, "stdin_data must be a string"),
        OK("{\"code\":\"x\",\"stdin_data\":\"12345678\"}", 20),
        BAD("{\"code\":\"x\",\"stdin_data\":\"123456789\"}", 400, "stdin_data is larger than 8 bytes"),
        OK("{\"code\":\"x\",\"attachments\":[]}", 20),
        OK("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a.csv\",\"content_base_64\":\"YWJj\"},"
           "{\"filename\":\"in.jpg\",\"content_base_64\":\"\"}]}",
           20),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a\",\"content_base_64\":\"\"},{\"filename\":\"b\",\"content_base_64\":\"\"},"
            "{\"filename\":\"c\",\"content_base_64\":\"\"}]}",
            400, "attachments has more than 2 entries"),
        BAD("{\"code\":\"x\",\"attachments\":{}}", 400, "attachments must be an array of {\"filename\", \"content_base_64\"} objects"),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a\"}]}", 400,
            "attachments[0] must be an object with string fields \"filename\" and \"content_base_64\""),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a\",\"content_b64\":\"\"}]}", 400,
            "attachments[0] must be an object with string fields \"filename\" and \"content_base_64\""),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a\",\"content_base_64\":\"!!!!\"}]}", 400,
            "attachments[0].content_base_64 is not valid base64"),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"../a\",\"content_base_64\":\"\"}]}", 400,
            "attachments[0].filename must name a file in the working directory"),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"\",\"content_base_64\":\"\"}]}", 400,
            "attachments[0].filename must name a file in the working directory"),
        BAD("{\"code\":\"x\",\"attachments\":[{\"filename\":\"a\",\"content_base_64\":\"YWJjZGVmZw==\"}]}", 400,
            "attachments is larger than 6 bytes"),
        OK("{\"code\":\"x\",\"return_files\":[\"out.png\"]}", 20),
        BAD("{\"code\":\"x\",\"return_files\":[\"/etc/shadow\"]}", 400, "return_files[0] must name a file"),
        BAD("{\"code\":\"x\",\"return_files\":\"out.png\"}", 400, "return_files must be an array of strings"),
        /* /v1/execute's fields mean nothing here */
        OK("{\"code\":\"x\",\"language\":\"ruby\",\"stdin\":7,\"files\":\"no\"}", 20),
};

static void test_execute_004(void) {
        for (size_t i = 0; i < ELEMENTSOF(cases_004); i++) {
                const ExecCase *c = &cases_004[i];
                cleanup_json struct json_object *body = NULL;
                ExecRequest req = {};
                Error err = {};
                int r;

                if (!tap_is_int(validate_parse_body(c->body, strlen(c->body), &body), 0, "parse %s", c->body))
                        continue;
                r = validate_execute_004(body, &limits_004, &req, &err);
                if (c->status == 0)
                        tap_ok(r == 0 && req.import_policy && req.reference_004 && strcmp(req.language, "python") == 0,
                               "004 valid: %s", c->body);
                else
                        tap_ok(r == -EINVAL && err.status == c->status && strcmp(err.message, c->message) == 0,
                               "004 rejected: %s -> '%s' (got %d '%s')", c->body, c->message, err.status, err.message);
                execute_request_done(&req);
        }
}

/* maxLength 2000 counts characters: 2000 three-byte characters pass, 2001 ASCII ones do not. The
 * attachments become files [{path, content_b64}] that the request owns. */
static void test_execute_004_fields(void) {
        cleanup_free char *wide = malloc(2000 * 3 + 1), *text = NULL, *narrow = NULL;
        cleanup_json struct json_object *body = NULL, *body2 = NULL, *body3 = NULL;
        static const char att[] = "{\"code\":\"x\",\"stdin_data\":\"in\",\"attachments\":[{\"filename\":\"in.jpg\",\"content_base_64\":\"YWJj\"}]}";
        ExecRequest req = {};
        Error err = {};
        struct json_object *e, *v = NULL;

        if (!wide)
                abort();
        for (size_t i = 0; i < 2000; i++)
                memcpy(wide + 3 * i, "\xe2\x82\xac", 3);
        wide[2000 * 3] = 0;
        if (asprintf(&text, "{\"code\":\"%s\"}", wide) < 0 || asprintf(&narrow, "{\"code\":\"%02001d\"}", 0) < 0)
                abort();
        if (validate_parse_body(text, strlen(text), &body) == 0)
                tap_ok(validate_execute_004(body, &limits_004, &req, &err) == 0, "2000 characters of 3 bytes each: valid");
        execute_request_done(&req);
        if (validate_parse_body(narrow, strlen(narrow), &body2) == 0)
                tap_ok(validate_execute_004(body2, &limits_004, &req, &err) == -EINVAL && err.status == 400 &&
                               strcmp(err.message, "code is longer than 2000 characters") == 0,
                       "2001 characters: refused (got '%s')", err.message);

        if (!tap_is_int(validate_parse_body(att, strlen(att), &body3), 0, "parse a request with an attachment"))
                return;
        if (!tap_is_int(validate_execute_004(body3, &limits_004, &req, &err), 0, "a request with an attachment is valid"))
                return;
        tap_ok(req.stdin_data && req.stdin_len == 2 && memcmp(req.stdin_data, "in", 2) == 0, "stdin_data is the stdin");
        tap_ok(req.files && req.files == req.owned_files && json_object_array_length(req.files) == 1, "one file, owned");
        e = req.files ? json_object_array_get_idx(req.files, 0) : NULL;
        tap_ok(e && json_object_object_get_ex(e, "path", &v) && strcmp(json_object_get_string(v), "in.jpg") == 0 &&
                       json_object_object_get_ex(e, "content_b64", &v) && strcmp(json_object_get_string(v), "YWJj") == 0,
               "the attachment as {path, content_b64}");
        execute_request_done(&req);
        tap_ok(req.files == NULL && req.owned_files == NULL, "done: the files are released");
}

/* ---- validate_call ---- */

typedef struct CallCase {
        const char *body;
        int status; /* 0: valid */
        const char *message;
        const char *module;
        unsigned timeout_s;
} CallCase;

static const ValidateLimits call_limits = {.default_timeout_s = 30, .max_timeout_s = 120};

static const CallCase call_cases[] = {
        {"{\"image\":\"demo-agent\",\"function\":\"get_weather\"}", 0, NULL, "agent", 30},
        {"{\"image\":\"i\",\"function\":\"f\",\"module\":\"pkg.tools\",\"args\":{\"a\":1},\"timeout_s\":120}", 0, NULL, "pkg.tools", 120},
        {"{\"image\":\"i\",\"function\":\"f\",\"timeout_s\":0}", 0, NULL, "agent", 30},
        {"{}", 400, "image and function are required", NULL, 0},
        {"{\"image\":\"i\"}", 400, "image and function are required", NULL, 0},
        {"{\"function\":\"f\"}", 400, "image and function are required", NULL, 0},
        {"{\"image\":\"\",\"function\":\"f\"}", 400, "image and function are required", NULL, 0},
        {"{\"image\":1,\"function\":\"f\"}", 400, "image and function are required", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"timeout_s\":121}", 400, "timeout_s must be between 1 and 120", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"timeout_s\":\"5\"}", 400, "timeout_s must be between 1 and 120", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"args\":[]}", 400, "args must be a JSON object", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"args\":\"a=1\"}", 400, "args must be a JSON object", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"module\":\"a..b\"}", 400, "module must be a Python module name", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"module\":\"../x\"}", 400, "module must be a Python module name", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"f\",\"module\":7}", 400, "module must be a Python module name", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"os.system\"}", 400, "function must be a Python function name", NULL, 0},
        {"{\"image\":\"i\",\"function\":\"9lives\"}", 400, "function must be a Python function name", NULL, 0},
};

static void test_call(void) {
        for (size_t i = 0; i < ELEMENTSOF(call_cases); i++) {
                const CallCase *c = &call_cases[i];
                cleanup_json struct json_object *body = NULL;
                CallRequest req = {};
                Error err = {};
                int r;

                if (!tap_is_int(validate_parse_body(c->body, strlen(c->body), &body), 0, "parse %s", c->body))
                        continue;
                r = validate_call(body, &call_limits, &req, &err);
                if (c->status == 0)
                        tap_ok(r == 0 && strcmp(req.module, c->module) == 0 && req.timeout_s == c->timeout_s, "call valid: %s", c->body);
                else
                        tap_ok(r == -EINVAL && err.status == c->status && strcmp(err.message, c->message) == 0,
                               "call rejected: %s -> '%s' (got '%s')", c->body, c->message, err.message);
        }
}

/* A body is counted before json-c builds it: many small values (900 bytes of json-c's each, for an
 * object) are refused, up to JSON_MAX_VALUES and JSON_MAX_CONTAINERS; what a request needs passes. */
static void test_parse_body_values(void) {
        static const struct {
                const char *item;
                size_t n;
                int expected;
        } cases[] = {
                {"{\"path\":\"a\",\"content_b64\":\"\"}", 1000, 0},
                {"{}", JSON_MAX_CONTAINERS - 2, 0},
                {"{}", JSON_MAX_CONTAINERS - 1, -E2BIG},
                {"1", JSON_MAX_VALUES - 2, 0},
                {"1", JSON_MAX_VALUES - 1, -E2BIG},
                {"[]", 100000, -E2BIG},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t il = strlen(cases[i].item), k = 0;
                char *b = malloc(cases[i].n * (il + 1) + 16);
                struct json_object *obj = NULL;

                k += (size_t) sprintf(b, "{\"files\":[");
                for (size_t j = 0; j < cases[i].n; j++) {
                        if (j)
                                b[k++] = ',';
                        memcpy(b + k, cases[i].item, il);
                        k += il;
                }
                memcpy(b + k, "]}", 3);
                tap_is_int(validate_parse_body(b, k + 2, &obj), cases[i].expected, "a body of %zu %s", cases[i].n, cases[i].item);
                json_object_put(obj);
                free(b);
        }
}

int main(void) {
        test_call();
        test_parse_body();
        test_parse_body_json_c_leniency();
        test_parse_body_depth();
        test_parse_body_values();
        test_execute();
        test_execute_fields();
        test_execute_argument_limit();
        test_execute_004();
        test_execute_004_fields();
        test_execute_long_escape();
        return tap_done();
}
