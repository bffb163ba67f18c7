/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "fcgi/route.h"

static const Route routes[] = {
        {.path = "/v1/execute", .method = "POST", .id = ROUTE_EXECUTE},
        {.path = "/v1/pool", .method = "GET", .id = ROUTE_POOL},
        {.path = "/v1/call", .method = "POST", .id = ROUTE_CALL},
        {.path = "/v1/runtimes", .method = "GET", .id = ROUTE_RUNTIMES},
        {.path = "/v1/openapi.json", .method = "GET", .id = ROUTE_OPENAPI},
        /* Prometheus' path; nginx lets only loopback (and what the operator adds) reach it. */
        {.path = "/metrics", .method = "GET", .id = ROUTE_METRICS},
        /* Reference 004's own path and shape. */
        {.path = "/execute", .method = "POST", .id = ROUTE_EXECUTE_004},
        {.path = "/v1/sessions", .method = "*", .id = ROUTE_SESSIONS, .prefix = true},
        /* MCP's Streamable HTTP endpoint: POST, and DELETE to end a session; it answers any other
         * method 405 itself, as the transport says for a GET when no stream of the server's own is
         * offered. */
        {.path = "/mcp", .method = "*", .id = ROUTE_MCP},
        /* Reference 002's own paths for run and exec. */
        {.path = "/session", .method = "*", .id = ROUTE_SESSIONS, .prefix = true},
};

static bool path_matches(const Route *r, const char *path) {
        size_t n = strlen(r->path);

        if (!r->prefix)
                return strcmp(r->path, path) == 0;
        return strncmp(r->path, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}

int route_find(const char *method, const char *path, const Route **ret) {
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
                if (!path_matches(&routes[i], path))
                        continue;
                *ret = &routes[i];
                return strcmp(routes[i].method, "*") == 0 || strcmp(routes[i].method, method) == 0 ? 200 : 405;
        }
        return 404;
}
