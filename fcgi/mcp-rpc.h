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
/* 2026-07-28's: the HTTP headers that mirror the body say something else, or are missing; the
 * request names a protocol version not served (its data lists those that are). */
#define MCP_HEADER_MISMATCH (-32020)
#define MCP_UNSUPPORTED_VERSION (-32022)
/* A request the client cancelled, answered only to a client that takes no event stream: JSON-RPC's
 * server range, the code LSP gives a cancelled request. */
#define MCP_REQUEST_CANCELLED (-32800)

/* The newest revision of MCP with sessions served: an initialize asking for one not served gets
 * this one. */
#define MCP_PROTOCOL_LATEST "2025-11-25"
/* The stateless revision served: no initialize and no session; each request names it in
 * params._meta, and is served on its own. */
#define MCP_PROTOCOL_STATELESS "2026-07-28"
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
/* A batch's most messages: MCP clients send a handful (a tools/list, a ping, notifications); each
 * request in it counts against the key's executions-per-minute as a request of its own. */
#define MCP_BATCH_MAX 64U
/* The most an answer to one POST may be, as JSON text: a batch's answers are refused one by one
 * past it, before the text is made. An execution's answer is within it at the default caps (two
 * streams of SANDBOXD_OUTPUT_CAP_BYTES, 1 MiB, escaped; SANDBOXD_RETURN_CAP_BYTES, 8 MiB, of
 * returned files in base64), and so is a file session_read_file returns (MCP_FILE_MAX_BYTES). */
#define MCP_ANSWER_MAX_BYTES (32U << 20)
#define MCP_FILE_MAX_BYTES (16U << 20)
#define MCP_SERVER_NAME "sandboxd"
#define MCP_SERVER_VERSION "0.1.0"

/* Whether version is a revision of MCP served here: one with sessions over Streamable HTTP (or
 * older, which clients still send). Pure. */
bool mcp_version_supported(const char *version);

/* The version an initialize that asked for requested (NULL: none) is answered with: requested when
 * served, else the newest served, as MCP's lifecycle says. Static. Pure. */
const char *mcp_version_negotiate(const char *requested);

/* Whether version names a stateless revision (2026-07-28 or later, by its date), served or not:
 * a request of one is never a session's. Pure. */
bool mcp_version_stateless(const char *version);

/* The revision a request names in params._meta["io.modelcontextprotocol/protocolVersion"], as the
 * stateless revisions have every request do; NULL when it names none (a session's request).
 * Borrowed. Pure. */
const char *mcp_meta_version(struct json_object *params);

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

/* Checks a stateless request's headers against its body, as 2026-07-28's Streamable HTTP has a
 * server do: MCP-Protocol-Version (header_version) equal to the version its _meta names
 * (meta_version, NULL: none), Mcp-Method to its method, and for tools/call Mcp-Name (plain, or
 * =?base64?...?= encoded) to params.name. Headers NULL when absent. 0, or -EINVAL and *reterr's
 * words (a HeaderMismatch). Pure. */
int mcp_headers_check(const McpMessage *m, const char *meta_version, const char *header_version, const char *header_method,
                      const char *header_name, Error *reterr);

/* The error of a request in a revision not served: -32022, and in its data every revision served,
 * newest first, and the one requested. NULL on ENOMEM. */
struct json_object *mcp_unsupported_version_new(struct json_object *id, const char *requested);

/* Makes result (an object) one of the stateless revisions: "resultType": "complete" unless it says
 * otherwise, and the server's name and version in its _meta. -ENOMEM. */
int mcp_result_stateless(struct json_object *result);

/* {"name", "version"} of this server. NULL on ENOMEM. */
struct json_object *mcp_server_info_new(void);

/* A batch's answers as JSON text, "[" and each answer so far (without the closing "]"): made one
 * answer at a time, so that its size is known before more of it is made. */
typedef struct McpBatchOut {
        char *text; /* owned; NULL: no answer yet */
        size_t len, size;
        size_t max; /* the most len may reach with answers; those past it are errors, a few bytes each */
} McpBatchOut;

/* Adds an answer (taken, even on failure), or, when its text would take the batch's past b->max,
 * a JSON-RPC error with its id that names b->max. -ENOMEM. */
int mcp_batch_out_add(McpBatchOut *b, struct json_object *msg);

void mcp_batch_out_done(McpBatchOut *b);
