/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "fcgi/mcp-args.h"
#include "fcgi/route.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

#define ID "session-abcdefghijkl"

/* Each tool's arguments, and the REST request they become: its route, method, path, query and
 * body (as JSON text, or the bytes of a file). */
static void test_rest(void) {
        static const struct {
                const char *tool;
                const char *args; /* NULL: none */
                int expected;
                int route;
                const char *method;
                const char *path;
                const char *query;
                const char *body; /* NULL: none */
                const char *message;
        } cases[] = {
                {"execute", "{\"code\":\"print(1)\",\"language\":\"python\",\"timeout_s\":5}", 0, ROUTE_EXECUTE, "POST", "/v1/execute", "",
                 "{\"code\":\"print(1)\",\"language\":\"python\",\"timeout_s\":5}", NULL},
                /* The handler checks the fields: what is missing or wrong is passed on as it is. */
                {"execute", NULL, 0, ROUTE_EXECUTE, "POST", "/v1/execute", "", "{}", NULL},
                {"execute", "{\"code\":42}", 0, ROUTE_EXECUTE, "POST", "/v1/execute", "", "{\"code\":42}", NULL},
                {"runtimes", "{}", 0, ROUTE_RUNTIMES, "GET", "/v1/runtimes", "", NULL, NULL},
                {"session_create", "{\"ttl_s\":60}", 0, ROUTE_SESSIONS, "POST", "/v1/sessions", "", "{\"ttl_s\":60}", NULL},
                {"session_create", NULL, 0, ROUTE_SESSIONS, "POST", "/v1/sessions", "", "{}", NULL},
                {"session_run", "{\"session_id\":\"" ID "\",\"language\":\"python\",\"code\":\"x=1\"}", 0, ROUTE_SESSIONS, "POST",
                 "/v1/sessions/" ID "/run", "", "{\"language\":\"python\",\"code\":\"x=1\"}", NULL},
                {"session_exec", "{\"session_id\":\"" ID "\",\"command\":\"ls\",\"timeout\":3}", 0, ROUTE_SESSIONS, "POST",
                 "/v1/sessions/" ID "/exec", "", "{\"command\":\"ls\",\"timeout\":3}", NULL},
                {"session_delete", "{\"session_id\":\"" ID "\"}", 0, ROUTE_SESSIONS, "DELETE", "/v1/sessions/" ID, "", NULL, NULL},
                {"session_list_files", "{\"session_id\":\"" ID "\"}", 0, ROUTE_SESSIONS, "GET", "/v1/sessions/" ID "/files", "", NULL, NULL},
                {"session_list_files", "{\"session_id\":\"" ID "\",\"dir\":\"a b/c&d=e\"}", 0, ROUTE_SESSIONS, "GET", "/v1/sessions/" ID "/files",
                 "dir=a%20b%2Fc%26d%3De", NULL, NULL},
                {"session_read_file", "{\"session_id\":\"" ID "\",\"path\":\"out/plot 1.png\"}", 0, ROUTE_SESSIONS, "GET",
                 "/v1/sessions/" ID "/files/out/plot%201.png", "", NULL, NULL},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a.txt\",\"content\":\"hello\"}", 0, ROUTE_SESSIONS, "PUT",
                 "/v1/sessions/" ID "/files/a.txt", "", "hello", NULL},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a.bin\",\"content_b64\":\"aGk=\"}", 0, ROUTE_SESSIONS, "PUT",
                 "/v1/sessions/" ID "/files/a.bin", "", "hi", NULL},
                /* Hostile ids and paths stay within their segment: the handler sees them whole, and
                 * refuses them as it would over REST (no such session, a path that escapes). */
                {"session_run", "{\"session_id\":\"x/../../execute\",\"language\":\"python\",\"code\":\"1\"}", 0, ROUTE_SESSIONS, "POST",
                 "/v1/sessions/x%2F..%2F..%2Fexecute/run", "", "{\"language\":\"python\",\"code\":\"1\"}", NULL},
                {"session_delete", "{\"session_id\":\"a?b#c\"}", 0, ROUTE_SESSIONS, "DELETE", "/v1/sessions/a%3Fb%23c", "", NULL, NULL},
                {"session_read_file", "{\"session_id\":\"" ID "\",\"path\":\"../../etc/passwd\"}", 0, ROUTE_SESSIONS, "GET",
                 "/v1/sessions/" ID "/files/../../etc/passwd", "", NULL, NULL},
                {"session_read_file", "{\"session_id\":\"" ID "\",\"path\":\"a?x=1\"}", 0, ROUTE_SESSIONS, "GET", "/v1/sessions/" ID "/files/a%3Fx%3D1",
                 "", NULL, NULL},
                /* What has no REST field to be checked by: refused here. */
                {"session_run", "{\"language\":\"python\",\"code\":\"1\"}", -EINVAL, 0, NULL, NULL, NULL, NULL, "session_id is required and must be a string"},
                {"session_delete", "{\"session_id\":7}", -EINVAL, 0, NULL, NULL, NULL, NULL, "session_id is required and must be a string"},
                {"session_delete", NULL, -EINVAL, 0, NULL, NULL, NULL, NULL, "session_id is required and must be a string"},
                {"session_read_file", "{\"session_id\":\"" ID "\"}", -EINVAL, 0, NULL, NULL, NULL, NULL,
                 "the file path must name a file in the working directory"},
                {"session_read_file", "{\"session_id\":\"" ID "\",\"path\":\"\"}", -EINVAL, 0, NULL, NULL, NULL, NULL,
                 "the file path must name a file in the working directory"},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a\"}", -EINVAL, 0, NULL, NULL, NULL, NULL,
                 "exactly one of content (text) and content_b64 (base64) is required"},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a\",\"content\":\"x\",\"content_b64\":\"eA==\"}", -EINVAL, 0, NULL, NULL,
                 NULL, NULL, "exactly one of content (text) and content_b64 (base64) is required"},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a\",\"content_b64\":\"not base64!\"}", -EINVAL, 0, NULL, NULL, NULL,
                 NULL, "content_b64 is not valid base64"},
                {"session_list_files", "{\"session_id\":\"" ID "\",\"dir\":5}", -EINVAL, 0, NULL, NULL, NULL, NULL, "dir must be a string"},
                {"nope", "{}", -ENOENT, 0, NULL, NULL, NULL, NULL, NULL},
                {"", NULL, -ENOENT, 0, NULL, NULL, NULL, NULL, NULL},
                {"Execute", NULL, -ENOENT, 0, NULL, NULL, NULL, NULL, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *args = cases[i].args ? json_tokener_parse(cases[i].args) : NULL;
                const char *name = cases[i].args ? cases[i].args : "(none)";
                McpRest rest = {};
                Error err = {};
                int r = mcp_tool_rest(cases[i].tool, args, &rest, &err);

                tap_is_int(r, cases[i].expected, "%s %s", cases[i].tool, name);
                if (r == 0) {
                        tap_is_int(rest.route, cases[i].route, "%s %s: route", cases[i].tool, name);
                        tap_is_str(rest.method, cases[i].method, "%s %s: method", cases[i].tool, name);
                        tap_is_str(rest.raw_path, cases[i].path, "%s %s: path", cases[i].tool, name);
                        tap_is_str(rest.query, cases[i].query, "%s %s: query", cases[i].tool, name);
                        tap_is_str(rest.body, cases[i].body, "%s %s: body", cases[i].tool, name);
                        tap_is_int((long long) rest.body_len, cases[i].body ? (long long) strlen(cases[i].body) : 0, "%s %s: body length", cases[i].tool,
                                   name);
                } else if (r == -EINVAL) {
                        tap_is_int(err.status, 400, "%s %s: 400", cases[i].tool, name);
                        tap_is_str(err.message, cases[i].message, "%s %s: message", cases[i].tool, name);
                }
                mcp_rest_done(&rest);
                json_object_put(args);
        }
}

static void test_overlong(void) {
        char path[5000];
        struct json_object *args = json_object_new_object();
        McpRest rest = {};
        Error err = {};

        memset(path, 'a', sizeof(path) - 1);
        path[sizeof(path) - 1] = 0;
        json_object_object_add(args, "session_id", json_object_new_string(ID));
        json_object_object_add(args, "path", json_object_new_string(path));
        tap_is_int(mcp_tool_rest("session_read_file", args, &rest, &err), -EINVAL, "a path too long for a URL is refused");
        tap_is_str(err.message, "the request's path or query is too long", "in the REST words for it");
        json_object_put(args);
}

/* The nine tools, each with an input and an output schema that are objects. */
static void test_list(void) {
        static const char *const names[] = {"execute", "session_create", "session_run", "session_exec", "session_write_file",
                                            "session_read_file", "session_list_files", "session_delete", "runtimes"};
        struct json_object *list = mcp_tools_list(), *tools = NULL;

        tap_ok(list && json_object_object_get_ex(list, "tools", &tools), "tools/list has tools");
        tap_is_int(tools ? (long long) json_object_array_length(tools) : -1, ELEMENTSOF(names), "nine tools");
        for (size_t i = 0; tools && i < json_object_array_length(tools) && i < ELEMENTSOF(names); i++) {
                struct json_object *t = json_object_array_get_idx(tools, i), *v = NULL, *type = NULL;

                tap_ok(json_object_object_get_ex(t, "name", &v) && strcmp(json_object_get_string(v), names[i]) == 0, "tool %zu is %s", i, names[i]);
                tap_ok(json_object_object_get_ex(t, "description", &v) && json_object_get_string_len(v) > 0, "%s has a description", names[i]);
                tap_ok(json_object_object_get_ex(t, "inputSchema", &v) && json_object_object_get_ex(v, "type", &type) &&
                               strcmp(json_object_get_string(type), "object") == 0,
                       "%s has an object inputSchema", names[i]);
                tap_ok(json_object_object_get_ex(t, "outputSchema", &v) && json_object_object_get_ex(v, "type", &type) &&
                               strcmp(json_object_get_string(type), "object") == 0,
                       "%s has an object outputSchema", names[i]);
                /* A refusal's {"error", "status"} is checked against it too: nothing it requires. */
                tap_ok(!json_object_object_get_ex(v, "required", NULL) && !json_object_object_get_ex(v, "additionalProperties", NULL),
                       "%s: its outputSchema takes an error result's structuredContent", names[i]);
        }
        json_object_put(list);
}

/* A NUL is a byte of a file's text like any other; in a name (a session, a path, a directory) it
 * would cut the name short, so it is refused there, in the words for a bad name. */
static void test_nul(void) {
        static const struct {
                const char *tool;
                const char *args;
                const char *message;
        } refused[] = {
                {"session_read_file", "{\"session_id\":\"" ID "\",\"path\":\"a.txt\\u0000../../x\"}", "the file path must name a file in the working directory"},
                {"session_write_file", "{\"session_id\":\"" ID "\",\"path\":\"a\\u0000b\",\"content\":\"x\"}",
                 "the file path must name a file in the working directory"},
                {"session_delete", "{\"session_id\":\"" ID "\\u0000x\"}", "session_id is required and must be a string"},
                {"session_list_files", "{\"session_id\":\"" ID "\",\"dir\":\"a\\u0000b\"}", "dir must be a string"},
        };
        struct json_object *args = json_tokener_parse("{\"session_id\":\"" ID "\",\"path\":\"a.txt\",\"content\":\"a\\u0000b\\u0000\"}");
        McpRest rest = {};
        Error err = {};

        tap_is_int(mcp_tool_rest("session_write_file", args, &rest, &err), 0, "text content with NULs is taken");
        tap_is_int((long long) rest.body_len, 4, "all of its bytes are the body");
        tap_ok(rest.body && memcmp(rest.body, "a\0b\0", 5) == 0, "the body is its bytes, NUL-terminated");
        mcp_rest_done(&rest);
        json_object_put(args);

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                McpRest r2 = {};
                Error e2 = {};

                args = json_tokener_parse(refused[i].args);
                tap_is_int(mcp_tool_rest(refused[i].tool, args, &r2, &e2), -EINVAL, "%s: a name with a NUL is refused", refused[i].tool);
                tap_is_int(e2.status, 400, "%s: 400", refused[i].tool);
                tap_is_str(e2.message, refused[i].message, "%s: message", refused[i].tool);
                mcp_rest_done(&r2);
                json_object_put(args);
        }
}

/* Every tool listed is a REST request of its own, and nothing else is one: a session tool that is
 * not named is no tool (it once fell through to DELETE). */
static void test_unlisted(void) {
        static const char *const names[] = {"session_pause", "session_resume", "session_", "session_delete_all", "session_read_file\n"};
        struct json_object *list = mcp_tools_list(), *tools = NULL;
        struct json_object *args = json_tokener_parse("{\"session_id\":\"" ID "\",\"path\":\"a\",\"content\":\"x\"}");

        (void) json_object_object_get_ex(list, "tools", &tools);
        for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
                struct json_object *name = NULL;
                McpRest rest = {};
                Error err = {};

                (void) json_object_object_get_ex(json_object_array_get_idx(tools, i), "name", &name);
                tap_is_int(mcp_tool_rest(json_object_get_string(name), args, &rest, &err), 0, "%s is a REST request", json_object_get_string(name));
                mcp_rest_done(&rest);
        }
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                McpRest rest = {};
                Error err = {};

                tap_is_int(mcp_tool_rest(names[i], args, &rest, &err), -ENOENT, "'%s' is no tool", names[i]);
                mcp_rest_done(&rest);
        }
        json_object_put(args);
        json_object_put(list);
}

int main(void) {
        test_rest();
        test_overlong();
        test_list();
        test_nul();
        test_unlisted();
        return tap_done();
}
