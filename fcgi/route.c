/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "fcgi/route.h"

static const Route routes[] = {
        {.path = "/v1/execute", .method = "POST", .id = ROUTE_EXECUTE},
        {.path = "/v1/pool", .method = "GET", .id = ROUTE_POOL},
        {.path = "/v1/call", .method = "POST", .id = ROUTE_CALL},
        {.path = "/v1/runtimes", .method = "GET", .id = ROUTE_RUNTIMES},
        {.path = "/v1/openapi.json", .method = "GET", .id = ROUTE_OPENAPI},
        /* Reference 004's own path and shape. */
        {.path = "/execute", .method = "POST", .id = ROUTE_EXECUTE_004},
};

int route_find(const char *method, const char *path, const Route **ret) {
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
                if (strcmp(routes[i].path, path) != 0)
                        continue;
                *ret = &routes[i];
                return strcmp(routes[i].method, method) == 0 ? 200 : 405;
        }
        return 404;
}
