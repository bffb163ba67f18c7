/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

typedef struct Request Request;
typedef struct Config Config;
typedef struct sqlite3 sqlite3;

typedef struct ClaimedMachine {
        char id[64];
        char socket[256];
        int retire;           /* a PoolRetire (nspawn/pool/pool-retire.h); 0: none */
        const char *prepared; /* what its runner made the next sandbox ready for: "node", or NULL */
        int poold_fd;         /* the claim: the connection to the pool manager, while id is set */
} ClaimedMachine;

/* What a request's thread holds while it serves it. */
typedef struct Inflight Inflight;

typedef struct Context {
        const Config *config;
        Inflight *inflight; /* the requests in flight across the workers (fcgi/inflight.h) */
        /* The request's own connection to the broker (broker-client.h), -1 until first used: a
         * worker serves many requests at once, each on its thread, and none shares it. */
        int broker;
        sqlite3 *db; /* taken from the worker's idle connections for this request alone (fcgi/worker.c) */
        /* The machine this request's execution claimed: back to the pool once the answer is sent,
         * or destroyed when retire says why it may serve no other (machine_claim.h). */
        ClaimedMachine machine;
} Context;

typedef int (*RouteHandler)(Request *req, Context *ctx);

/* Which handler serves a route. The table names it by this id, not by a pointer, so that it stays
 * pure: it links (and is unit-tested) without the handlers and all they need. */
typedef enum RouteId {
        ROUTE_EXECUTE,
        ROUTE_POOL,
        ROUTE_CALL,
        ROUTE_EXECUTE_004,
        ROUTE_RUNTIMES,
        ROUTE_OPENAPI,
        ROUTE_SESSIONS,
        ROUTE_METRICS,
        ROUTE_MCP,
        _ROUTE_MAX,
} RouteId;

typedef struct Route {
        const char *path;
        const char *method; /* "*": any, the handler answers 405 itself */
        RouteId id;
        bool prefix; /* path and everything below it ("/v1/sessions/…") */
} Route;

/* The route for (method, path): 200 and *ret set; 405 when the path exists with another method
 * (then *ret names the one it takes, for Allow:); 404 when no route has that path. Pure. */
int route_find(const char *method, const char *path, const Route **ret);

/* The handler of a route (fcgi/route-handlers.c, the one table of them): NULL for an id that is
 * none. */
RouteHandler route_handler(RouteId id);

/* Handlers, one file each. */
int route_execute(Request *req, Context *ctx);
int route_pool(Request *req, Context *ctx);
int route_call(Request *req, Context *ctx);
int route_execute_004(Request *req, Context *ctx);
int route_runtimes(Request *req, Context *ctx);
int route_openapi(Request *req, Context *ctx);
int route_sessions(Request *req, Context *ctx);
int route_metrics(Request *req, Context *ctx);
int route_mcp(Request *req, Context *ctx);
