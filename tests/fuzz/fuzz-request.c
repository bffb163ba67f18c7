/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as a request body, through the parser, the validators and the pure
 * helpers they lean on (b64, utf8, paths), and as a message to the broker. Sanitizers catch memory errors; the checks below abort()
 * when a module breaks its own contract, which no sanitizer can see. `make fuzz` runs it. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/mcp-args.h"
#include "fcgi/mcp-rpc.h"
#include "fcgi/route.h"
#include "fcgi/session-route.h"
#include "fcgi/validate.h"
#include "lib/api-key.h"
#include "lib/b64.h"
#include "lib/image-name.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/utf8.h"
#include "nspawn/broker/broker-proto.h"
#include "nspawn/runner-request.h"

DEFINE_JSON_CLEANUP

/* -Wmissing-prototypes: libFuzzer declares no header for its entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Not assert(): it must hold with NDEBUG too, and say which contract broke before the stack trace. */
#define CHECK(cond)                                                                                         \
        do {                                                                                                \
                if (!(cond)) {                                                                              \
                        (void) fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                                            \
                }                                                                                           \
        } while (0)

/* What every failed validation owes the client: a status the contract knows and words to show. The
 * words go out as a JSON string, so they must be valid UTF-8 even when a long value was cut short. */
static void check_error(const Error *e) {
        CHECK(e->status == 400 || e->status == 502);
        CHECK(memchr(e->message, 0, sizeof(e->message)));
        CHECK(e->message[0] != 0);
        CHECK(utf8_valid((const uint8_t *) e->message, strlen(e->message)));
}

/* Size and decoding agree, and the encoding is canonical: what decodes encodes back to itself. */
static void fuzz_b64(const char *s, size_t n) {
        cleanup_free uint8_t *out = NULL;
        cleanup_free char *again = NULL;
        long long size = b64_decoded_size(s, n);
        size_t len = 0, again_len = 0;
        int r;

        r = b64_decode(s, n, &out, &len);
        CHECK((r < 0) == (size < 0));
        if (r < 0) {
                CHECK(r == -EINVAL);
                return;
        }
        CHECK((long long) len == size);
        CHECK(out[len] == 0);

        again = b64_encode(out, len, &again_len);
        CHECK(again);
        CHECK(again_len == n && (n == 0 || memcmp(again, s, n) == 0));
}

/* The output is always valid, and valid input passes through unchanged. */
static void fuzz_utf8(const uint8_t *s, size_t n) {
        cleanup_free char *out = NULL;
        size_t len = 0;

        out = utf8_sanitize(s, n, &len);
        CHECK(out);
        CHECK(out[len] == 0);
        CHECK(utf8_valid((const uint8_t *) out, len));
        if (utf8_valid(s, n))
                CHECK(len == n && (n == 0 || memcmp(out, s, n) == 0));
}

static void fuzz_path(const char *s, size_t n) {
        static char normal[PATH_MAX_BYTES + 1], again[PATH_MAX_BYTES + 1];
        int r = path_relative_check(s, n, NULL, 0);

        CHECK(r == 0 || r == -EINVAL || r == -EXDEV);
        CHECK(path_relative_check(s, n, normal, sizeof(normal)) == r);
        if (r != 0)
                return;
        CHECK(n > 0 && s[0] != '/' && s[n - 1] != '/' && !memchr(s, 0, n));
        /* The normal form (what the runner opens) names the same file in the same way: it passes,
         * is its own normal form, and has no "." or ".." left to resolve. */
        CHECK(strlen(normal) <= n);
        CHECK(path_relative_check(normal, strlen(normal), again, sizeof(again)) == 0 && strcmp(normal, again) == 0);
        CHECK(strcmp(normal, "..") != 0 && strncmp(normal, "../", 3) != 0 && !strstr(normal, "/../") &&
              !strstr(normal, "/./") && !strstr(normal, "//") && strncmp(normal, "./", 2) != 0);
}

/* A validated request keeps what the sandbox relies on: bounded sizes, a timeout in range, file
 * entries with a safe path and decodable content. */
static void check_execute(const ExecRequest *x) {
        CHECK(x->code && x->code_len <= validate_execute_limits.max_code_bytes);
        CHECK(x->stdin_len <= validate_execute_limits.max_stdin_bytes);
        CHECK(x->timeout_s >= 1 && x->timeout_s <= validate_execute_limits.max_timeout_s);
        CHECK(x->language && (strcmp(x->language, "python") == 0 || strcmp(x->language, "node") == 0 || strcmp(x->language, "bash") == 0));
        /* What becomes one argument of node -e or bash -c fits one and has no NUL. */
        if (strcmp(x->language, "python") != 0)
                CHECK(x->code_len <= EXEC_ARG_CODE_MAX && !memchr(x->code, 0, x->code_len));

        for (size_t i = 0; x->files && i < json_object_array_length(x->files); i++) {
                struct json_object *e = json_object_array_get_idx(x->files, i), *p = NULL, *c = NULL;

                CHECK(json_object_object_get_ex(e, "path", &p) && json_object_object_get_ex(e, "content_b64", &c));
                CHECK(path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), NULL, 0) == 0);
                CHECK(b64_decoded_size(json_object_get_string(c), (size_t) json_object_get_string_len(c)) >= 0);
                fuzz_b64(json_object_get_string(c), (size_t) json_object_get_string_len(c));
        }
        for (size_t i = 0; x->return_files && i < json_object_array_length(x->return_files); i++) {
                struct json_object *p = json_object_array_get_idx(x->return_files, i);

                CHECK(path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), NULL, 0) == 0);
        }
}

/* What the worker accepted, the runner takes: the request made of it parses and checks in full on
 * the runner's side, so no accepted body is a 502 that costs a machine. */
static void check_runner_takes(const ExecRequest *x) {
        cleanup_json struct json_object *in = NULL, *root = NULL;
        RunnerRequest rq = {};
        RunnerJob job;
        Error err = {};
        const char *text;
        size_t len = 0;

        execute_request_job(x, 1 << 20, 8 << 20, &job);
        in = runner_request_new(&job);
        CHECK(in);
        text = json_object_to_json_string_length(in, JSON_C_TO_STRING_PLAIN, &len);
        CHECK(text);
        CHECK(runner_request_parse(text, len, &root, &rq, &err) == 0);
        CHECK(strcmp(rq.language, x->language) == 0);
        CHECK((size_t) json_object_get_string_len(rq.code) == x->code_len);
}

static void fuzz_body(const uint8_t *data, size_t size) {
        cleanup_json struct json_object *body = NULL;
        struct json_object *image = NULL;
        Error verr = {};
        ExecRequest x = {};
        CallRequest c = {};
        char name[80];

        if (validate_parse_body((const char *) data, size, &body) < 0)
                return;
        CHECK(json_object_is_type(body, json_type_object));

        if (validate_execute(body, &validate_execute_limits, &x, &verr) < 0)
                check_error(&verr);
        else {
                check_execute(&x);
                check_runner_takes(&x);
        }

        /* POST /execute: the same guarantees, python under the import policy, 2 attachments at most. */
        verr = (Error){};
        x = (ExecRequest){};
        if (validate_execute_004(body, &validate_execute_limits, &x, &verr) < 0)
                check_error(&verr);
        else {
                check_execute(&x);
                check_runner_takes(&x);
                CHECK(x.reference_004 && x.import_policy && strcmp(x.language, "python") == 0);
                CHECK(!x.files || json_object_array_length(x.files) <= EXEC_004_ATTACHMENTS_MAX);
        }
        execute_request_done(&x);

        verr = (Error){};
        if (validate_call(body, &validate_call_limits, &c, &verr) < 0)
                check_error(&verr);
        else
                CHECK(c.image && c.module && c.function && c.timeout_s >= 1 && c.timeout_s <= validate_call_limits.max_timeout_s);

        /* Sessions: a create's and a run's or exec's body. */
        {
                SessionCreate sc = {};
                SessionRun run = {};

                verr = (Error){};
                if (validate_session_create(body, &validate_execute_limits, &sc, &verr) < 0) {
                        check_error(&verr);
                        CHECK(verr.status == 400);
                } else
                        CHECK(sc.ttl_s >= 1 && sc.ttl_s <= SESSION_TTL_MAX_S);
                for (int exec = 0; exec < 2; exec++) {
                        verr = (Error){};
                        if (validate_session_run(body, exec, validate_execute_limits.max_code_bytes, 300, &run, &verr) < 0)
                                check_error(&verr);
                        else {
                                CHECK(run.code && run.code_len <= validate_execute_limits.max_code_bytes);
                                CHECK(run.timeout_s >= 1 && run.timeout_s <= 300);
                                CHECK(exec ? !run.language : run.language && (strcmp(run.language, "python") == 0 || strcmp(run.language, "node") == 0 || strcmp(run.language, "bash") == 0));
                                if (exec || strcmp(run.language, "bash") == 0)
                                        CHECK(!memchr(run.code, 0, run.code_len));
                        }
                }
        }

        if (json_object_object_get_ex(body, "image", &image) && json_object_is_type(image, json_type_string) &&
            image_name_from_ref(json_object_get_string(image), name, sizeof(name)) == 0)
                CHECK(name[0] != 0 && strlen(name) <= 64);
}

/* The same bytes as a message to the broker (root): whatever it accepts is well formed. The size
 * the broker sees is what came off the socket; the first bytes are taken as the magic when short. */
static void fuzz_broker(const uint8_t *data, size_t size) {
        BrokerRequest req = {};
        size_t n = size < sizeof(req) ? size : sizeof(req);

        memcpy(&req, data, n);
        if (size == sizeof(req) - 1 || size == sizeof(req) + 1)
                CHECK(broker_request_check(&req, size) == -EPROTO);
        req.magic = BROKER_MAGIC;
        if (broker_request_check(&req, sizeof(req)) != 0)
                return;
        CHECK(memchr(req.id, 0, sizeof(req.id)) && memchr(req.image, 0, sizeof(req.image)) &&
              memchr(req.request_id, 0, sizeof(req.request_id)));
        CHECK(req.op >= BROKER_START_WARM && req.op < _BROKER_OP_MAX);
        if (req.op == BROKER_LIST || req.op == BROKER_SESSION_LIST)
                CHECK(req.id[0] == 0);
        else if (req.op == BROKER_SESSION_START || req.op == BROKER_SESSION_STOP || req.op == BROKER_SESSION_DELETE ||
                 req.op == BROKER_SESSION_CREATE)
                /* It names a disk image and a mount point: nothing but "session-" and 12 of [a-z2-7]. */
                CHECK(broker_id_valid(req.id, "session") && strlen(req.id) == strlen("session-") + SANDBOX_ID_RANDOM_CHARS &&
                      strspn(req.id + 8, "abcdefghijklmnopqrstuvwxyz234567") == SANDBOX_ID_RANDOM_CHARS);
        else
                CHECK(broker_id_valid(req.id, NULL) && strlen(req.id) <= strlen("machine-") + SANDBOX_ID_RANDOM_CHARS &&
                      !strchr(req.id, '.') && !strchr(req.id, '/'));
        if (req.op == BROKER_START_WARM)
                CHECK(strncmp(req.id, "machine-", 8) == 0);
        if (req.op == BROKER_RUN_TOOL)
                CHECK(strncmp(req.id, "tool-", 5) == 0 && req.timeout_s >= 1 && req.timeout_s <= 120 && req.image[0] &&
                      !strchr(req.image, '/') && !strchr(req.request_id, '\n') && strcmp(req.image, "..") != 0);
}

/* The same bytes as a request path and a query: a route found names an id of one segment and a
 * decoded file path without NUL. */
static void fuzz_session_route(const uint8_t *data, size_t size) {
        cleanup_free char *s = strndup((const char *) data, size);
        SessionRoute route;
        char v[256];
        int r;

        if (!s)
                return;
        if (session_route_parse(s, &route) == 0) {
                CHECK(route.allow && route.allow[0]);
                if (route.action != SESSION_COLLECTION)
                        CHECK(route.id[0] && !strchr(route.id, '/'));
                CHECK(route.action == SESSION_FILE ? route.path[0] != 0 : route.path[0] == 0);
        }
        r = query_get(s, "dir", v, sizeof(v));
        CHECK(r == 0 || r == 1 || r == -EINVAL);
        if (r == 1)
                CHECK(strlen(v) < sizeof(v));
}

/* The same bytes as an Authorization header: a token taken is one RFC 6750 b64token of bounded
 * size, within the header, and hashing it gives 64 hex digits. */
static void fuzz_bearer(const uint8_t *data, size_t size) {
        cleanup_free char *s = strndup((const char *) data, size);
        char token[API_KEY_BEARER_MAX + 1], hash[API_KEY_HASH_SIZE];
        size_t n;
        int r;

        if (!s)
                return;
        r = api_key_parse_bearer(s, token);
        CHECK(r == 0 || r == -EINVAL || r == -ENOENT);
        CHECK((r == -ENOENT) == (s[0] == 0));
        if (r != 0)
                return;
        n = strlen(token);
        CHECK(n >= 1 && n <= API_KEY_BEARER_MAX && strstr(s, token));
        CHECK(strspn(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=") == n && token[0] != '=');
        CHECK(api_key_hash(token, hash) == 0);
        CHECK(strlen(hash) == API_KEY_HASH_SIZE - 1 && strspn(hash, "0123456789abcdef") == API_KEY_HASH_SIZE - 1);
        CHECK(api_key_hash_equal(hash, hash));
}

/* MCP: any body as a JSON-RPC message, and as every tool's arguments. A tool's REST request stays
 * its route's, and the session id and file path a client names reach the handler whole, each in
 * its own segment: no argument becomes another path or a query. */
static void fuzz_mcp(const uint8_t *data, size_t size) {
        static const char *const tools[] = {"execute", "session_create", "session_run", "session_exec", "session_write_file",
                                            "session_read_file", "session_list_files", "session_delete", "runtimes"};
        cleanup_json struct json_object *body = NULL;
        struct json_object *id = NULL, *sid = NULL, *path = NULL;
        McpMessage m;
        Error err = {};

        (void) mcp_image_type(data, size);
        if (validate_parse_body((const char *) data, size, &body) < 0)
                return;
        if (mcp_message_parse(body, &m, &id, &err) < 0)
                CHECK(err.message[0] != 0);
        else if (m.kind == MCP_REQUEST) {
                /* The stateless revision's headers, here as the body's own name: whatever a
                 * client sends, the check says yes or why not; an empty header is no match. */
                const char *version = mcp_meta_version(m.params);
                struct json_object *name = NULL;
                const char *n = json_object_object_get_ex(m.params, "name", &name) ? json_object_get_string(name) : "";

                err = (Error){};
                if (mcp_headers_check(&m, version, version, m.method, n, &err) < 0)
                        CHECK(err.message[0] != 0 && utf8_valid((const uint8_t *) err.message, strlen(err.message)));
                err = (Error){};
                if (mcp_headers_check(&m, version, "", "", "", &err) == 0)
                        CHECK(version && version[0] == 0 && m.method[0] == 0);
        }
        (void) json_object_object_get_ex(body, "session_id", &sid);
        (void) json_object_object_get_ex(body, "path", &path);
        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                McpRest rest = {};
                SessionRoute route;

                err = (Error){};
                if (mcp_tool_rest(tools[i], body, &rest, &err) < 0) {
                        check_error(&err);
                        continue;
                }
                CHECK(strncmp(rest.raw_path, "/v1/", 4) == 0 && !strchr(rest.raw_path, '?') && !strchr(rest.raw_path, '#'));
                /* An id too long to be a session's is no route: 404, as over REST. */
                if (rest.route == ROUTE_SESSIONS && strcmp(rest.raw_path, "/v1/sessions") != 0 && session_route_parse(rest.raw_path, &route) == 0) {
                        /* The id as it came, or, with anything but RFC 3986's unreserved
                         * characters in it, still escaped: no session's id, and so a 404. */
                        CHECK(strcmp(route.id, json_object_get_string(sid)) == 0 || strchr(route.id, '%'));
                        CHECK(route.action == (i == 2   ? SESSION_RUN
                                               : i == 3 ? SESSION_EXEC
                                               : i == 6 ? SESSION_FILES
                                               : i == 7 ? SESSION_ONE
                                                        : SESSION_FILE));
                        if (route.action == SESSION_FILE)
                                CHECK(strcmp(route.path, json_object_get_string(path)) == 0);
                }
                mcp_rest_done(&rest);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        fuzz_bearer(data, size);
        fuzz_body(data, size);
        fuzz_session_route(data, size);
        fuzz_broker(data, size);
        fuzz_b64((const char *) data, size);
        fuzz_utf8(data, size);
        fuzz_path((const char *) data, size);
        fuzz_mcp(data, size);
        return 0;
}
