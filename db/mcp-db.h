/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

typedef struct sqlite3 sqlite3;

/* An MCP session's row (schema.sql, step 12). */
typedef struct McpSession {
        char id[64];
        char key_name[65]; /* "": made while API keys were off */
        char version[16];
} McpSession;

/* A new MCP session id of key_name (NULL: none) and the version agreed on. -EEXIST should the id be
 * taken. */
int db_mcp_session_create(sqlite3 *db, const char *id, const char *key_name, const char *version);

/* The session, if it exists and has not ended, into *ret, and its last use now: -ENOENT otherwise. */
int db_mcp_session_use(sqlite3 *db, const char *id, McpSession *ret);

/* Ends it (DELETE /mcp): -ENOENT when it does not exist or has ended. */
int db_mcp_session_end(sqlite3 *db, const char *id);

/* A tool call in flight: rpc_id is the JSON-RPC id as JSON text. -EEXIST when the session has one
 * of that id in flight already. */
int db_mcp_call_begin(sqlite3 *db, const char *mcp_session_id, const char *rpc_id, const char *request_id, const char *tool,
                      const char *session_id);

/* The call is over: its row goes. 1 when it was cancelled meanwhile, else 0, or -errno. */
int db_mcp_call_end(sqlite3 *db, const char *mcp_session_id, const char *rpc_id);

/* Whether the call in flight was cancelled: 1, 0, or -ENOENT when no such call is in flight. */
int db_mcp_call_cancelled(sqlite3 *db, const char *mcp_session_id, const char *rpc_id);

/* What a cancellation has to stop. */
typedef struct McpCall {
        char tool[32];
        char machine_id[64]; /* an execution's machine, once it has one; "" else */
        char session_id[64]; /* the sandbox session it acts on; "" else */
} McpCall;

/* Marks the call cancelled and reads what it runs on: -ENOENT when no such call is in flight. */
int db_mcp_call_cancel(sqlite3 *db, const char *mcp_session_id, const char *rpc_id, McpCall *ret);

/* MCP sessions not used for days (ended or not: a client whose session is gone initializes
 * again), and calls begun that long ago (a worker that died in one): deleted. The number of
 * sessions deleted, or -errno. */
int db_mcp_prune(sqlite3 *db, unsigned days);
