/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
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

int main(void) {
        test_versions();
        test_origins();
        test_parse();
        test_answers();
        test_images();
        return tap_done();
}
