/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "lib/error.h"

struct json_object;

/* The REST request an MCP tool call is: the route's handler serves it as it would over HTTP, with
 * the same checks and the same words for what it refuses. */
typedef struct McpRest {
        int route;           /* a RouteId (fcgi/route.h) */
        const char *method;  /* static */
        char raw_path[4096]; /* percent-encoded as a client would send it */
        char query[4096];
        char *body; /* owned, NUL-terminated; NULL: none */
        size_t body_len;
} McpRest;

/* {"tools": [...]}: each tool with its inputSchema and outputSchema. NULL on ENOMEM. */
struct json_object *mcp_tools_list(void);

/* The REST request of tool name with arguments args (an object, or NULL). -ENOENT for a tool that
 * does not exist; -EINVAL and *reterr for an argument the REST request has no field for (its
 * route's own fields are the handler's to check); -ENOMEM. Release with mcp_rest_done(). Pure. */
int mcp_tool_rest(const char *name, struct json_object *args, McpRest *ret, Error *reterr);

void mcp_rest_done(McpRest *rest);
