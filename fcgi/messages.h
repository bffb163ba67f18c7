/* SPDX-License-Identifier: MIT */
#pragma once

/* Every error text of the API contract, word for word (reference 000, "Error responses").
 * Handlers never write their own wording for these. */

#define MSG_INVALID_JSON "invalid JSON body"
#define MSG_JSON_TOO_MANY_VALUES "invalid JSON body: it holds more than %d values, or more than %d arrays and objects"
#define MSG_UNSUPPORTED_LANGUAGE "unsupported language \"%s\""
#define MSG_TIMEOUT_RANGE "timeout_s must be between 1 and %u"
#define MSG_METHOD_NOT_ALLOWED "method not allowed"
#define MSG_NOT_FOUND "not found"
#define MSG_BODY_TOO_LARGE "request body too large"
#define MSG_SANDBOX_FAILED "sandbox execution failed: %s"
#define MSG_SANDBOX_HTTP "the sandbox returned HTTP %d: %s"
#define MSG_SANDBOX_UNREADABLE "the sandbox returned a response that could not be read"
#define MSG_NO_SANDBOX "no sandbox is available right now - try again shortly"
/* Past SANDBOXD_MAX_INFLIGHT, for what is not an execution (which says MSG_NO_SANDBOX). */
#define MSG_SERVICE_BUSY "too many requests in flight right now (the limit is %u) - try again shortly"
#define MSG_PATH_ESCAPES "file path escapes working directory: '%s'"
#define MSG_INTERNAL "internal error: %s"

/* POST /v1/call (reference 000, "POST /v1/call — sandboxed tool calls"). */
#define MSG_CALL_REQUIRED "image and function are required"
#define MSG_CALL_START "could not start a sandbox for this tool call: %s"
#define MSG_CALL_NOT_STARTED "the tool sandbox did not start: %s"
#define MSG_CALL_READY_TIMEOUT "timed out waiting for the tool sandbox to become ready"
#define MSG_CALL_FAILED "tool execution failed: %s"
#define MSG_CALL_INVALID "invalid response from the tool sandbox"
/* The texts of an image, module or function that does not exist, which every one a caller may not
 * call answers with too (the broker and the tool runner say the same). */
#define MSG_CALL_NO_IMAGE "image '%s' not found in %s"
#define MSG_CALL_NO_MODULE "cannot import module '%s': ModuleNotFoundError: No module named '%s'"
#define MSG_CALL_NO_FUNCTION "module '%s' has no function '%s'"
#define MSG_CALL_NO_RUNNER "the tool sandbox exited before it was ready (phase Failed); the agent image must contain /usr/bin/python3"
/* Our wording. */
#define MSG_CALL_MODULE "module must be a Python module name"
#define MSG_CALL_FUNCTION "function must be a Python function name"
#define MSG_CALL_ARGS "args must be a JSON object"
#define MSG_DB_UNAVAILABLE "the request database is unavailable: %s - try again shortly"

/* Wording of our own (no reference text exists): field checks. */
#define MSG_CODE_REQUIRED "code is required and must be a string"
#define MSG_LANGUAGE_TYPE "language must be a string"
#define MSG_FILES_TYPE "files must be an array of {\"path\", \"content_b64\"} objects"
#define MSG_FILE_ENTRY "files[%zu] must be an object with string fields \"path\" and \"content_b64\""
#define MSG_FILE_BASE64 "files[%zu].content_b64 is not valid base64"
#define MSG_FILE_NAME "files[%zu].path must name a file"
#define MSG_FILES_TOO_MANY "files has more than %zu entries"
#define MSG_STDIN_TYPE "stdin must be a string"
#define MSG_RETURN_FILES_TYPE "return_files must be an array of strings"
#define MSG_RETURN_FILE_NAME "return_files[%zu] must name a file"
#define MSG_RETURN_FILES_TOO_MANY "return_files has more than %zu entries"
#define MSG_TOO_LARGE "%s is larger than %zu bytes"
#define MSG_NO_RUNTIME "the runtime image is not built yet - run: sandboxd-image runtime"
#define MSG_CODE_NUL "%s code must not contain NUL characters"
/* Egress by name (README, "Network"). */
#define MSG_NETWORK_TYPE "network must be an object whose \"allow\" is an array of 1 to %d host names"
#define MSG_NETWORK_ENTRY "network.allow[%zu] must be a host name or *.suffix, with an optional :port"
#define MSG_EGRESS_HOST "network.allow[%zu]: egress to \"%s\" is not allowed on this host"
#define MSG_EGRESS_KEY "network.allow[%zu]: egress to \"%s\" is not allowed for this API key"
#define MSG_EGRESS_UNAVAILABLE "egress is unavailable: %s"
/* POST /execute (reference 004): its field names. */
#define MSG_CODE_TOO_LONG "code is longer than %zu characters"
#define MSG_STDIN_DATA_TYPE "stdin_data must be a string"
#define MSG_ATTACHMENTS_TYPE "attachments must be an array of {\"filename\", \"content_base_64\"} objects"
#define MSG_ATTACHMENTS_TOO_MANY "attachments has more than %zu entries"
#define MSG_ATTACHMENT_ENTRY "attachments[%zu] must be an object with string fields \"filename\" and \"content_base_64\""
#define MSG_ATTACHMENT_BASE64 "attachments[%zu].content_base_64 is not valid base64"
#define MSG_ATTACHMENT_NAME "attachments[%zu].filename must name a file in the working directory"

/* Sessions (reference 002 and our wording). */
#define MSG_SESSION_NOT_FOUND "session not found"
#define MSG_SESSION_TTL "ttl_s must be between 1 and %d"
#define MSG_SESSION_LANGUAGE "language is required: \"python\", \"node\" or \"bash\""
#define MSG_COMMAND_REQUIRED "command is required and must be a string"
#define MSG_SESSION_TIMEOUT "timeout must be between 1 and %u"
#define MSG_SESSIONS_FULL "too many active sessions (the limit is %u) - delete or pause one and try again"
#define MSG_SESSION_START "could not start the session's machine: %s"
#define MSG_SESSION_FAILED "the session's machine failed: %s"
#define MSG_SESSION_BUSY "the session is busy with other runs - try again shortly"
#define MSG_SESSION_DIR "dir must name a directory in the working directory"
#define MSG_SESSION_PATH "the file path must name a file in the working directory"
#define MSG_URI_TOO_LONG "the request's path or query is too long"
#define MSG_BODY_SHORT "the request body ended before its Content-Length"
#define MSG_SESSION_FILE_TOO_LARGE "the file is larger than %zu bytes, the most sandboxd moves at once (SANDBOXD_SESSION_UPLOAD_BYTES)"
#define MSG_SESSION_UPLOAD_SHORT "the file was not written whole: %lld of %zu bytes"

/* API keys (SANDBOXD_API_KEYS=on): our wording. A 429 names the quota, its limit and when to retry
 * (also its Retry-After header). */
#define MSG_UNAUTHORIZED "missing or invalid API key"
#define MSG_QUOTA_CONCURRENT "API key quota exceeded: max-concurrent=%lld (its requests in flight at once) - retry when one has ended"
#define MSG_QUOTA_PER_MINUTE \
        "API key quota exceeded: executions-per-minute=%lld (its executions, session creates, file uploads and pauses started in the last 60 s) - retry in %u s"
#define MSG_QUOTA_CPU "API key quota exceeded: cpu-seconds-per-day=%lld (its executions' CPU seconds in the last 24 h) - retry in %u s"
/* A key's session caps (429 with Retry-After: when the soonest of its sessions is paused for being
 * idle, or deleted after SANDBOXD_SESSION_RETAIN_S paused). */
#define MSG_QUOTA_SESSIONS "API key quota exceeded: max-sessions=%lld (its active sessions) - retry in %u s, or pause or delete one"
#define MSG_QUOTA_PAUSED \
        "API key quota exceeded: max-paused-sessions=%lld (its sessions kept, active or paused, as each may be paused) - retry in %u s, or delete one"
#define MSG_QUOTA_DISK "API key quota exceeded: session-disk-bytes=%lld (its sessions' disks, %llu bytes each) - retry in %u s, or delete one"
/* SANDBOXD_DISK_RESERVE_BYTES: 507, before anything is written. */
#define MSG_DISK_RESERVE "insufficient storage: the state filesystem has %llu bytes free, SANDBOXD_DISK_RESERVE_BYTES=%llu are kept - nothing was written"

/* MCP (/mcp): the transport's refusals, and the tools' arguments that have no REST field of the
 * same name (those that do are checked by the REST handler, in its words). */
#define MSG_MCP_ORIGIN "Forbidden: Origin '%s' is not allowed (SANDBOXD_MCP_ALLOWED_ORIGINS)"
#define MSG_MCP_NO_SESSION "Bad Request: Mcp-Session-Id header is required"
#define MSG_MCP_SESSION_GONE "Session not found"
#define MSG_MCP_VERSION                                                                                                            \
        "Bad Request: Unsupported protocol version '%s' (supported in a session: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, " \
        "2024-10-07; without one, named in each request's _meta: 2026-07-28)"
/* The words a request of a stateless revision not served is recorded with (its answer is MCP's
 * UnsupportedProtocolVersion error, which lists those served). */
#define MSG_MCP_STATELESS_VERSION "Unsupported protocol version '%s'"
#define MSG_MCP_HEADER_TWICE "Header mismatch: MCP-Protocol-Version, Mcp-Method and Mcp-Name may each be sent once"
#define MSG_MCP_PARSE "Parse error: the body is not JSON"
#define MSG_MCP_BATCH "Invalid Request: JSON-RPC batches are not part of MCP %s (only of 2025-03-26); send one message per POST"
#define MSG_MCP_INIT_SESSION "Invalid Request: initialize starts a session and must come without Mcp-Session-Id"
#define MSG_MCP_ACCEPT "Not Acceptable: the client must accept application/json or text/event-stream"
#define MSG_MCP_METHOD "Method not found: '%s'"
#define MSG_MCP_UNKNOWN_TOOL                                                                                                            \
        "Unknown tool: '%s' (the tools are execute, session_create, session_run, session_exec, session_write_file, session_read_file, " \
        "session_list_files, session_delete and runtimes)"
#define MSG_MCP_METHOD_NOT_ALLOWED "Method Not Allowed: %s (no stream of the server's own is offered; POST messages, DELETE to end a session)"
#define MSG_MCP_ID_TOO_LONG "Invalid Request: a tool call's id must be shorter than 256 characters as JSON"
#define MSG_MCP_CALL_IN_FLIGHT "Invalid Request: a call with this id is in flight already"
#define MSG_MCP_CALL_RECORD "Internal error: the call could not be recorded"
#define MSG_MCP_CALL_FAILED "Internal error: the tool call failed"
#define MSG_MCP_BATCH_INIT "Invalid Request: initialize must not be part of a batch"
#define MSG_MCP_BATCH_EMPTY "Invalid Request: an empty batch"
#define MSG_MCP_BATCH_LONG "Invalid Request: a batch holds at most %u messages; send the others in another POST"
#define MSG_MCP_BODY_VALUES "Invalid Request: a body holds at most %u JSON values, %u of them arrays or objects"
#define MSG_MCP_ANSWER_LARGE "Server error: the batch's answers would pass %zu bytes, the most one POST is answered with; send this request on its own"
#define MSG_MCP_FILE_LARGE "the file is %zu bytes; session_read_file returns at most %u (GET /v1/sessions/{id}/files/{path} returns any)"
#define MSG_MCP_BATCH_CALLS "Invalid Request: one tools/call per batch (each is counted against the key's quotas as one request); send the others on their own"
/* Not sent (a cancelled call is not answered): the request's record and audit entry. */
#define MSG_MCP_CANCELLED "the call was cancelled by the client (notifications/cancelled)"
#define MSG_MCP_TOOL_NAME "params.name must be a string"
#define MSG_MCP_ARGUMENTS "params.arguments must be an object"
#define MSG_MCP_SESSION_ID "session_id is required and must be a string"
#define MSG_MCP_CONTENT "exactly one of content (text) and content_b64 (base64) is required"
#define MSG_MCP_CONTENT_B64 "content_b64 is not valid base64"
#define MSG_MCP_DIR "dir must be a string"
