/* SPDX-License-Identifier: MIT */
/* What the worker accepts, the runner reads: every body here goes through validate_execute(),
 * runner_request_new() and runner_request_parse(), as it would from a client to a machine. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/validate.h"
#include "lib/json-limits.h"
#include "lib/macro.h"
#include "nspawn/runner-request.h"
#include "tests/unit/tap.h"

DEFINE_JSON_CLEANUP

/* A body whose files[0] carries an extra field nested depth levels deep. */
static char *nested_body(unsigned depth) {
        size_t n = 128 + 2 * (size_t) depth;
        char *s = malloc(n), *p = s;

        if (!s)
                abort();
        p += sprintf(p, "{\"code\":\"print(1)\",\"files\":[{\"path\":\"a.txt\",\"content_b64\":\"aGk=\",\"x\":");
        for (unsigned i = 0; i < depth; i++)
                *p++ = '[';
        for (unsigned i = 0; i < depth; i++)
                *p++ = ']';
        (void) strcpy(p, "}]}");
        return s;
}

/* The body through the worker's checks and into the runner's: the runner's verdict, or 1 when the
 * worker refused the body already. */
static int through(const char *body, RunnerRequest *ret, json_object **ret_root, Error *reterr) {
        cleanup_json struct json_object *parsed = NULL, *in = NULL;
        ExecRequest x = {};
        RunnerJob job;
        Error err = {};
        const char *text;
        size_t len;
        int r;

        if (validate_parse_body(body, strlen(body), &parsed) < 0 || validate_execute(parsed, &validate_execute_limits, &x, &err) < 0)
                return 1;
        execute_request_job(&x, 1 << 20, 8 << 20, &job);
        in = runner_request_new(&job);
        if (!in)
                abort();
        text = json_object_to_json_string_length(in, JSON_C_TO_STRING_PLAIN, &len);
        r = runner_request_parse(text, len, ret_root, ret, reterr);
        execute_request_done(&x);
        return r;
}

static void test_depth(void) {
        /* The body that broke: json-c's own default depth (32), which the runner used to parse with,
         * refuses it, and the worker's JSON_MAX_DEPTH takes it. */
        {
                char *body = nested_body(40);
                struct json_object *shallow = json_tokener_parse(body), *parsed = NULL;

                tap_ok(!shallow, "a field 40 deep is past json-c's default depth");
                tap_ok(validate_parse_body(body, strlen(body), &parsed) == 0, "and within the worker's");
                (void) json_object_put(shallow);
                (void) json_object_put(parsed);
                free(body);
        }
        for (unsigned depth = 30; depth <= JSON_MAX_DEPTH; depth += 2) {
                char *body = nested_body(depth);
                cleanup_json struct json_object *root = NULL;
                RunnerRequest rq = {};
                Error err = {};
                int r = through(body, &rq, &root, &err);

                if (r == 1)
                        tap_ok(depth + 4 > JSON_MAX_DEPTH, "an extra field %u deep: the worker refuses only past JSON_MAX_DEPTH", depth);
                else {
                        tap_is_int(r, 0, "an extra field %u deep: the runner takes what the worker took", depth);
                        tap_ok(root && json_object_array_length(rq.files) == 1 &&
                                       !json_object_object_get_ex(json_object_array_get_idx(rq.files, 0), "x", NULL),
                               "an extra field %u deep: not sent on to the machine", depth);
                }
                free(body);
        }
}

static void test_fields(void) {
        static const char *const bodies[] = {
                "{\"code\":\"print(1)\"}",
                "{\"code\":\"echo hi\",\"language\":\"bash\",\"stdin\":\"x\"}",
                "{\"code\":\"1\",\"language\":\"node\",\"files\":[{\"path\":\"d/e.txt\",\"content_b64\":\"\"}],\"return_files\":[\"d/e.txt\"]}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                cleanup_json struct json_object *root = NULL;
                RunnerRequest rq = {};
                Error err = {};

                tap_is_int(through(bodies[i], &rq, &root, &err), 0, "body %zu: accepted by both", i);
                tap_ok(rq.code && rq.language && rq.policy && rq.output_cap == 1 << 20 && rq.return_cap == 8 << 20,
                       "body %zu: every field the runner reads is there", i);
                tap_ok(!rq.stream, "body %zu: not streamed unless the worker asks", i);
        }
        {
                RunnerJob job = {.code = "print(1)", .code_len = 8, .language = "python", .stream = true, .output_cap = 10, .return_cap = 20};
                cleanup_json struct json_object *in = runner_request_new(&job), *root = NULL;
                const char *text = json_object_to_json_string(in);
                RunnerRequest rq = {};
                Error err = {};

                tap_is_int(runner_request_parse(text, strlen(text), &root, &rq, &err), 0, "a streamed request: accepted");
                tap_ok(rq.stream, "and streamed");
        }
}

/* What no worker writes, the runner refuses, with words the worker passes on. */
static void test_refusals(void) {
        static const struct {
                const char *text, *words;
        } cases[] = {
                {"not json", "request is not JSON"},
                {"{\"code\":1}", "request has no code"},
                {"{\"code\":\"x\",\"language\":\"perl\"}", "unknown language or import policy"},
                {"{\"code\":\"x\",\"stdin\":1}", "stdin must be a string"},
                {"{\"code\":\"x\",\"output_cap\":-1}", "caps out of range"},
                {"{\"code\":\"x\",\"return_cap\":2147483648}", "caps out of range"},
                {"{\"code\":\"x\",\"files\":{}}", "files must be a list"},
                {"{\"code\":\"x\",\"files\":[{\"path\":\"../x\"}]}", "file path escapes working directory: '../x'"},
                {"{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content_b64\":\"@@\"}]}", "invalid base64 for 'a'"},
                {"{\"code\":\"x\",\"return_files\":[\"/etc/passwd\"]}", "file path escapes working directory: '/etc/passwd'"},
                {"{\"code\":\"x\",\"stream\":1}", "stream must be a boolean"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_json struct json_object *root = NULL;
                RunnerRequest rq = {};
                Error err = {};
                int r = runner_request_parse(cases[i].text, strlen(cases[i].text), &root, &rq, &err);

                tap_is_int(r, -EINVAL, "refused: %s", cases[i].text);
                tap_is_str(error_message(&err, r), cases[i].words, "its words: %s", cases[i].words);
                tap_ok(!root, "nothing returned for %s", cases[i].text);
        }
}

int main(void) {
        test_depth();
        test_fields();
        test_refusals();
        printf("1..%u\n", tap_count);
        return tap_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
