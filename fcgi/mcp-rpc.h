/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

struct json_object;

/* JSON-RPC 2.0's error codes, and MCP's (transports' server errors: -32000 and below). */
#define MCP_PARSE_ERROR (-32700)
#define MCP_INVALID_REQUEST (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS (-32602)
#define MCP_INTERNAL_ERROR (-32603)
#define MCP_SERVER_ERROR (-32000)
#define MCP_SESSION_NOT_FOUND (-32001)
/* A request the client cancelled, answered only to a client that takes no event stream: JSON-RPC's
 * server range, the code LSP gives a cancelled request. */
#define MCP_REQUEST_CANCELLED (-32800)

/* The newest revision of MCP served: an initialize asking for one not served gets this one. */
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* Whether version is a revision of MCP served here: one with sessions over Streamable HTTP (or
 * older, which clients still send). Pure. */
bool mcp_version_supported(const char *version);

/* The version an initialize that asked for requested (NULL: none) is answered with: requested when
 * served, else the newest served, as MCP's lifecycle says. Static. Pure. */
const char *mcp_version_negotiate(const char *requested);

/* Whether a revision lets a client send JSON-RPC batches (2025-03-26 only). Pure. */
bool mcp_version_batches(const char *version);

/* Whether a request with this Origin header may be served, against DNS rebinding: loopback by name
 * or address (http or https, any port), or one of extra (a comma-separated list of origins,
 * compared whole and case-insensitively; NULL: none). Pure. */
bool mcp_origin_allowed(const char *origin, const char *extra);

typedef enum McpKind {
        MCP_REQUEST,      /* method and id: answered */
        MCP_NOTIFICATION, /* method, no id */
        MCP_RESPONSE,     /* result or error, and id: an answer to the server's own request */
} McpKind;

/* One JSON-RPC message. Everything is borrowed from the parsed object. */
typedef struct McpMessage {
        McpKind kind;
        const char *method;         /* NULL for a response */
        struct json_object *id;     /* a string or an integer; NULL for a notification */
        struct json_object *params; /* an object, or NULL when absent */
} McpMessage;

/* Checks one message (JSON-RPC 2.0 as MCP narrows it: an id is a string or an integer, params an
 * object): 0 and *ret, or -EINVAL and *reterr's words (an Invalid Request); *ret_id is then the id
 * when one could be read, for the error's answer. Pure. */
int mcp_message_parse(struct json_object *msg, McpMessage *ret, struct json_object **ret_id, Error *reterr);

/* {"jsonrpc": "2.0", "id", "result"}: takes result (even on failure), copies id's reference. NULL
 * on ENOMEM. */
struct json_object *mcp_result_new(struct json_object *id, struct json_object *result);

/* {"jsonrpc": "2.0", "id", "error": {"code", "message"}}; id NULL answers null. NULL on ENOMEM. */
struct json_object *mcp_error_new(struct json_object *id, int code, const char *message);

/* {"jsonrpc": "2.0", "method", "params"}: takes params. NULL on ENOMEM. */
struct json_object *mcp_notification_new(const char *method, struct json_object *params);

/* An image's media type by its first bytes (PNG, JPEG, GIF, WebP), or NULL. Pure. */
const char *mcp_image_type(const void *data, size_t len);
