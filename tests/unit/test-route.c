/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "fcgi/route.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

typedef struct RouteCase {
        const char *method, *path;
        int expected;
} RouteCase;

static const RouteCase cases[] = {
        {"POST", "/v1/execute", 200},
        {"GET", "/v1/execute", 405},
        {"PUT", "/v1/execute", 405},
        {"DELETE", "/v1/execute", 405},
        {"HEAD", "/v1/execute", 405},
        {"OPTIONS", "/v1/execute", 405},
        {"post", "/v1/execute", 405}, /* methods are case-sensitive (RFC 9110, section 9.1) */
        {"POST ", "/v1/execute", 405},
        {"", "/v1/execute", 405},
        {"POST", "/v1/nope", 404},
        {"GET", "/v1/nope", 404},
        {"POST", "/", 404},
        {"POST", "", 404},
        {"POST", "/v1", 404},
        {"POST", "/v1/", 404},
        {"POST", "/v1/execute/", 404},
        {"POST", "/v1/executes", 404},
        {"POST", "/v1/exec", 404},
        {"POST", "/V1/execute", 404},
        {"POST", "/v1//execute", 404},
        {"POST", "/v1/execute?x=1", 404},
        {"POST", "/v2/execute", 404},
        {"POST", "v1/execute", 404},
};

static void test_find(void) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const RouteCase *c = &cases[i];
                static const Route sentinel = {.path = "sentinel"};
                const Route *r = &sentinel;
                int status = route_find(c->method, c->path, &r);

                tap_is_int(status, c->expected, "%s '%s' -> %d", c->method, c->path, c->expected);
                if (c->expected == 404)
                        tap_ok(r == &sentinel, "%s '%s': *ret untouched", c->method, c->path);
                else
                        /* 405 names the route that has the path, so Allow: can list its method. */
                        tap_ok(r != &sentinel && strcmp(r->path, "/v1/execute") == 0 && strcmp(r->method, "POST") == 0 &&
                                       r->id == ROUTE_EXECUTE,
                               "%s '%s': *ret is POST /v1/execute -> ROUTE_EXECUTE", c->method, c->path);
        }
}

/* Every route is found by its own method and path, and names its own handler. */
static void test_table(void) {
        static const Route expected[] = {
                {"/v1/execute", "POST", ROUTE_EXECUTE},
                {"/v1/pool", "GET", ROUTE_POOL},
                {"/v1/call", "POST", ROUTE_CALL},
                {"/v1/runtimes", "GET", ROUTE_RUNTIMES},
                {"/v1/openapi.json", "GET", ROUTE_OPENAPI},
                {"/execute", "POST", ROUTE_EXECUTE_004},
                /* The sessions' prefix routes, for any method: the handler answers 405 itself. */
                {"/v1/sessions", "GET", ROUTE_SESSIONS},
                {"/v1/sessions", "POST", ROUTE_SESSIONS},
                {"/v1/sessions/x/files/a", "DELETE", ROUTE_SESSIONS},
                {"/session/x/run", "POST", ROUTE_SESSIONS},
                {"/metrics", "GET", ROUTE_METRICS},
                /* MCP's endpoint, for any method: POST and DELETE are served, the rest is 405. */
                {"/mcp", "POST", ROUTE_MCP},
                {"/mcp", "DELETE", ROUTE_MCP},
                {"/mcp", "GET", ROUTE_MCP},
        };

        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                const Route *r = NULL;

                tap_is_int(route_find(expected[i].method, expected[i].path, &r), 200, "%s %s -> 200", expected[i].method,
                           expected[i].path);
                tap_ok(r && r->id == expected[i].id, "%s %s: its handler", expected[i].method, expected[i].path);
        }
        tap_is_int(route_find("POST", "/v1/openapi.json", &(const Route *){NULL}), 405, "POST /v1/openapi.json -> 405");
        /* A prefix covers what lies below it, not what merely starts with its letters. */
        tap_is_int(route_find("POST", "/v1/sessionsx", &(const Route *){NULL}), 404, "POST /v1/sessionsx -> 404");
        tap_is_int(route_find("POST", "/mcp/x", &(const Route *){NULL}), 404, "POST /mcp/x -> 404");
        tap_is_int(route_find("POST", "/sessions/x", &(const Route *){NULL}), 404, "POST /sessions/x -> 404");
        tap_is_int(route_find("POST", "/sessionx/run", &(const Route *){NULL}), 404, "POST /sessionx/run -> 404");
}

int main(void) {
        test_find();
        test_table();
        return tap_done();
}
