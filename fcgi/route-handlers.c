/* SPDX-License-Identifier: MIT */
/* Which function serves each route: the one table of it, for the worker's requests and for the REST
 * requests MCP's tools stand for (fcgi/mcp-tools.c). route.c's table names the route by its id, so
 * that it stays pure; this one links the handlers. */
#include "fcgi/route.h"
#include "lib/macro.h"

static const RouteHandler handlers[_ROUTE_MAX] = {
        [ROUTE_EXECUTE] = route_execute,
        [ROUTE_POOL] = route_pool,
        [ROUTE_CALL] = route_call,
        [ROUTE_EXECUTE_004] = route_execute_004,
        [ROUTE_RUNTIMES] = route_runtimes,
        [ROUTE_OPENAPI] = route_openapi,
        [ROUTE_SESSIONS] = route_sessions,
        [ROUTE_METRICS] = route_metrics,
        [ROUTE_MCP] = route_mcp,
};

RouteHandler route_handler(RouteId id) {
        return (unsigned) id < ELEMENTSOF(handlers) ? handlers[id] : NULL;
}
