/* SPDX-License-Identifier: MIT */
#pragma once

#include "lib/error.h"

typedef struct Request Request;
typedef struct Context Context;
struct json_object;

/* Runs MCP tool name with args (an object, or NULL) as its REST request, served by that route's
 * handler within req: the same key, quotas, checks and records; req->listener, when set, hears
 * the code's output. 0 and *ret_result, the tools/call result (a failed run, a refusal other than
 * a bad argument: isError); -ENOENT for a tool that does not exist; -EINVAL and *reterr's words
 * (its route's 400) for a bad argument; -ECANCELED when the client went away; -errno otherwise. */
int mcp_tool_call(Request *req, Context *ctx, const char *name, struct json_object *args, struct json_object **ret_result, Error *reterr);
