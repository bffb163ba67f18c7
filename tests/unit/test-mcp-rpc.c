/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "fcgi/mcp-rpc.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_versions(void) {
        static const struct {
                const char *requested;
                const char *negotiated;
                bool supported;
                bool batches;
        } cases[] = {
                {"2025-11-25", "2025-11-25", true, false},
                {"2025-06-18", "2025-06-18", true, false},
                {"2025-03-26", "2025-03-26", true, true},
                {"2024-11-05", "2024-11-05", true, false},
                {"2024-10-07", "2024-10-07", true, false},
                /* Newer than served (and without sessions): the newest served is offered. */
                {"2026-07-28", MCP_PROTOCOL_LATEST, false, false},
                {"1999-01-01", MCP_PROTOCOL_LATEST, false, false},
                {"", MCP_PROTOCOL_LATEST, false, false},
                {"2025-11-25 ", MCP_PROTOCOL_LATEST, false, false},
                {NULL, MCP_PROTOCOL_LATEST, false, false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *name = cases[i].requested ? cases[i].requested : "(none)";

                tap_is_str(mcp_version_negotiate(cases[i].requested), cases[i].negotiated, "negotiate '%s'", name);
                tap_ok(mcp_version_supported(cases[i].requested) == cases[i].supported, "supported '%s'", name);
                tap_ok(mcp_version_batches(cases[i].requested) == cases[i].batches, "batches '%s'", name);
        }
}

static void test_origins(void) {
        static const struct {
                const char *origin;
                const char *extra;
                bool allowed;
        } cases[] = {
                {NULL, NULL, true}, /* no browser */
                {"http://localhost", NULL, true},
                {"https://localhost:8443", NULL, true},
                {"http://LOCALHOST:3000", NULL, true},
                {"http://127.0.0.1:8080", NULL, true},
                {"http://[::1]:6274", NULL, true},
                {"https://[::1]", NULL, true},
                {"http://localhost.evil.example", NULL, false},
                {"http://localhost:80.evil.example", NULL, false},
                {"http://localhost:", NULL, false},
                {"http://localhost:123456", NULL, false},
                {"http://127.0.0.1.nip.io", NULL, false},
                {"http://127.0.0.2", NULL, false},
                {"ftp://localhost", NULL, false},
                {"localhost", NULL, false},
                {"null", NULL, false},
                {"", NULL, false},
                {"http://evil.example", NULL, false},
                {"https://agent.example", "https://agent.example", true},
                {"https://agent.example", " https://other.example , https://agent.example ", true},
                {"https://AGENT.example", "https://agent.example", true},
                {"https://agent.example:444", "https://agent.example", false},
                {"https://agent.exampl", "https://agent.example", false},
                {"https://agent.example.evil", "https://agent.example", false},
                {"https://agent.example", "", false},
                {"https://agent.example", ",,", false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(mcp_origin_allowed(cases[i].origin, cases[i].extra) == cases[i].allowed, "origin '%s' with '%s': %s",
                       cases[i].origin ? cases[i].origin : "(none)", cases[i].extra ? cases[i].extra : "(none)",
                       cases[i].allowed ? "allowed" : "refused");
}

static void test_parse(void) {
        static const struct {
                const char *text;
                int expected;
                McpKind kind;
                const char *method;
                const char *id; /* the id read, as JSON; NULL: none */
        } cases[] = {
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 0, MCP_REQUEST, "ping", "1"},
                {"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\",\"params\":{}}", 0, MCP_REQUEST, "tools/list", "\"a\""},
                {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0, MCP_NOTIFICATION, "notifications/initialized", NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", 0, MCP_RESPONSE, NULL, "7"},
                {"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"x\"}}", 0, MCP_RESPONSE, NULL, "7"},
                {"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{},\"error\":{}}", -EINVAL, MCP_RESPONSE, NULL, "7"},
                {"{\"jsonrpc\":\"2.0\",\"result\":{}}", -EINVAL, MCP_RESPONSE, NULL, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":7}", -EINVAL, MCP_RESPONSE, NULL, "7"},
                {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, "1"},
                {"{\"id\":1,\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, "1"},
                {"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, "1"},
                /* MCP: an id is a string or an integer, never null, a fraction or an object. */
                {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", -EINVAL, MCP_REQUEST, NULL, "1"},
                /* A method with a NUL is no method cut at it: never served as "tools/list". */
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\\u0000x\"}", -EINVAL, MCP_REQUEST, NULL, "1"},
                {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\\u0000\"}", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", -EINVAL, MCP_REQUEST, NULL, "1"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", -EINVAL, MCP_REQUEST, NULL, "1"},
                {"[]", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"42", -EINVAL, MCP_REQUEST, NULL, NULL},
                {"{}", -EINVAL, MCP_REQUEST, NULL, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *o = json_tokener_parse(cases[i].text), *id = NULL;
                McpMessage m = {};
                Error err = {};
                int r = mcp_message_parse(o, &m, &id, &err);

                tap_is_int(r, cases[i].expected, "parse %s", cases[i].text);
                tap_is_str(id ? json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN) : NULL, cases[i].id, "%s: the id read", cases[i].text);
                if (r == 0) {
                        tap_is_int(m.kind, cases[i].kind, "%s: kind", cases[i].text);
                        tap_is_str(m.method, cases[i].method, "%s: method", cases[i].text);
                } else
                        tap_ok(err.message[0] != 0, "%s: says why", cases[i].text);
                json_object_put(o);
        }
}

/* As the transport writes them. */
static const char *text(struct json_object *o) {
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void test_answers(void) {
        struct json_object *id = json_object_new_int(3), *o;

        o = mcp_result_new(id, json_object_new_object());
        tap_is_str(text(o), "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", "a result");
        json_object_put(o);
        o = mcp_error_new(id, MCP_INVALID_PARAMS, "code is required and must be a string");
        tap_is_str(text(o),
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"code is required and must be a string\"}}", "an error");
        json_object_put(o);
        o = mcp_error_new(NULL, MCP_PARSE_ERROR, "x");
        tap_is_str(text(o), "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
                   "an error without an id says null");
        json_object_put(o);
        o = mcp_notification_new("notifications/progress", json_object_new_object());
        tap_is_str(text(o), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}",
                   "a notification");
        json_object_put(o);
        tap_ok(mcp_result_new(id, NULL) == NULL, "a result that could not be made is none");
        json_object_put(id);
}

static void test_images(void) {
        static const struct {
                const char *name;
                const char *data;
                size_t len;
                const char *type;
        } cases[] = {
                {"png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, "image/png"},
                {"jpeg", "\xff\xd8\xff\xe0\0\x10JFIF", 10, "image/jpeg"},
                {"gif87", "GIF87a\x01\0", 8, "image/gif"},
                {"gif89", "GIF89a\x01\0", 8, "image/gif"},
                {"webp", "RIFF\x24\0\0\0WEBPVP8 ", 16, "image/webp"},
                {"wav (RIFF, not WEBP)", "RIFF\x24\0\0\0WAVEfmt ", 16, NULL},
                {"WEBP without RIFF", "RIFX\x24\0\0\0WEBPVP8 ", 16, NULL},
                {"png cut short", "\x89PNG\r\n\x1a", 7, NULL},
                {"empty", "", 0, NULL},
                {"text", "hello, world\n", 13, NULL},
                {"svg (text: not sent as an image)", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>", 41, NULL},
                {"riff cut short", "RIFF\x24\0\0\0WEB", 11, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_str(mcp_image_type(cases[i].data, cases[i].len), cases[i].type, "image type of %s", cases[i].name);
}

static void test_stateless(void) {
        static const struct {
                const char *version;
                bool stateless;
        } versions[] = {
                {"2026-07-28", true},
                {"2027-03-30", true},
                {"2025-11-25", false},
                {"2026-07-27", false},
                {"2026-07-28x", false},
                {"", false},
                {NULL, false},
        };
        static const struct {
                const char *body;
                const char *header_version, *header_method, *header_name;
                bool ok;
                const char *why;
        } cases[] = {
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 "execute", true, "headers as the body"},
                /* "execute" in the Base64 sentinel form, as a client may send any name. */
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 "=?base64?ZXhlY3V0ZQ==?=", true, "Mcp-Name encoded"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 "=?base64?ZXhlY3V0Zg==?=", false, "Mcp-Name encoded, of another name"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 "=?base64?not base64?=", false, "Mcp-Name not base64"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 "runtimes", false, "Mcp-Name of another tool"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/call",
                 NULL, false, "no Mcp-Name"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", "tools/list",
                 "execute", false, "Mcp-Method of another method"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2026-07-28", NULL,
                 "execute", false, "no Mcp-Method"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", "2025-11-25", "tools/call",
                 "execute", false, "MCP-Protocol-Version of another revision"},
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}", NULL, "tools/call",
                 "execute", false, "no MCP-Protocol-Version"},
                {"{\"name\": \"execute\"}", "2026-07-28", "tools/call", "execute", false, "the header's revision, none in _meta"},
                /* A revision not served passes the header check: its own error says which are. */
                {"{\"name\": \"execute\", \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2099-01-01\"}}", "2099-01-01", "tools/call",
                 "execute", true, "a later revision, consistent"},
        };

        for (size_t i = 0; i < ELEMENTSOF(versions); i++)
                tap_ok(mcp_version_stateless(versions[i].version) == versions[i].stateless, "stateless '%s'",
                       versions[i].version ? versions[i].version : "(none)");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *params = json_tokener_parse(cases[i].body);
                McpMessage m = {.kind = MCP_REQUEST, .method = "tools/call", .params = params};
                Error err = {};
                int r = mcp_headers_check(&m, mcp_meta_version(params), cases[i].header_version, cases[i].header_method,
                                          cases[i].header_name, &err);

                tap_ok((r == 0) == cases[i].ok, "headers: %s (%s)", cases[i].why, err.message);
                if (!cases[i].ok)
                        tap_ok(strncmp(err.message, "Header mismatch: ", 17) == 0, "headers: %s, said as a mismatch", cases[i].why);
                json_object_put(params);
        }
        /* tools/list has no Mcp-Name to check. */
        {
                struct json_object *params = json_tokener_parse("{\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\"}}");
                McpMessage m = {.kind = MCP_REQUEST, .method = "tools/list", .params = params};
                Error err = {};

                tap_is_int(mcp_headers_check(&m, mcp_meta_version(params), "2026-07-28", "tools/list", NULL, &err), 0, "tools/list: no Mcp-Name");
                json_object_put(params);
        }
        {
                struct json_object *id = json_object_new_int(7), *e = mcp_unsupported_version_new(id, "1999-01-01"), *data = NULL, *v = NULL;
                struct json_object *none = mcp_unsupported_version_new(NULL, NULL);

                tap_is_str(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN),
                           "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32022,\"message\":\"Unsupported protocol version\",\"data\":"
                           "{\"supported\":[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\",\"2025-03-26\",\"2024-11-05\",\"2024-10-07\"],"
                           "\"requested\":\"1999-01-01\"}}}",
                           "UnsupportedProtocolVersion lists every revision served, newest first");
                (void) json_object_object_get_ex(json_object_object_get(e, "error"), "data", &data);
                tap_ok(data && json_object_object_get_ex(json_object_object_get(none, "error"), "data", &v) &&
                               !json_object_object_get_ex(v, "requested", NULL),
                       "no requested when none was");
                json_object_put(none);
                json_object_put(e);
                json_object_put(id);
        }
        {
                struct json_object *r = json_tokener_parse("{\"tools\": []}"), *same = json_tokener_parse("{\"resultType\": \"input_required\"}");

                tap_is_int(mcp_result_stateless(r), 0, "stamp a result");
                tap_is_str(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                           "{\"tools\":[],\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"sandboxd\","
                           "\"version\":\"" MCP_SERVER_VERSION "\"}}}",
                           "a result of the stateless revision: complete, and the server's");
                tap_is_int(mcp_result_stateless(same), 0, "stamp a result that has its type");
                tap_is_str(json_object_get_string(json_object_object_get(same, "resultType")), "input_required", "its type is kept");
                tap_is_int(mcp_result_stateless(NULL), -EINVAL, "no result");
                json_object_put(r);
                json_object_put(same);
        }
}

/* An answer with id n (its reference dropped: the answer holds its own). */
static struct json_object *answer_new(int n, struct json_object *result) {
        struct json_object *id = json_object_new_int(n), *a = mcp_result_new(id, result);

        json_object_put(id);
        return a;
}

/* A batch's answers are text made one at a time: past the cap, an answer is an error naming it, and
 * the text stays within the cap and what its errors add. */
static void test_batch_out(void) {
        McpBatchOut b = {.max = 300};
        struct json_object *all = NULL, *big = json_object_new_object();
        char filler[400];

        memset(filler, 'x', sizeof(filler) - 1);
        filler[sizeof(filler) - 1] = 0;
        json_object_object_add(big, "text", json_object_new_string(filler));
        tap_is_int(mcp_batch_out_add(&b, answer_new(1, json_object_new_object())), 0, "a small answer is added");
        tap_is_int(mcp_batch_out_add(&b, answer_new(2, big)), 0, "an answer past the cap: added as an error");
        tap_is_int(mcp_batch_out_add(&b, answer_new(3, json_object_new_object())), 0, "a small one after it still fits");
        tap_is_int(mcp_batch_out_add(&b, NULL), -ENOMEM, "no answer: -ENOMEM");
        tap_ok(b.len < b.max, "the text stayed within the cap (%zu bytes)", b.len);
        {
                char text[1024];

                (void) snprintf(text, sizeof(text), "%.*s]", (int) b.len, b.text);
                all = json_tokener_parse(text);
        }
        tap_ok(json_object_is_type(all, json_type_array) && json_object_array_length(all) == 3, "the text is a JSON array of three answers");
        tap_is_str(json_object_to_json_string_ext(json_object_array_get_idx(all, 1), JSON_C_TO_STRING_PLAIN),
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32000,\"message\":\"Server error: the batch's answers would pass 300 bytes, "
                   "the most one POST is answered with; send this request on its own\"}}",
                   "the one past the cap is an error with its id that names the cap");
        tap_is_str(json_object_to_json_string_ext(json_object_array_get_idx(all, 2), JSON_C_TO_STRING_PLAIN), "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
                   "the next is its own answer");
        json_object_put(all);
        mcp_batch_out_done(&b);
        tap_ok(!b.text && b.len == 0, "done: nothing held");
}

int main(void) {
        test_versions();
        test_stateless();
        test_origins();
        test_parse();
        test_answers();
        test_images();
        test_batch_out();
        return tap_done();
}
