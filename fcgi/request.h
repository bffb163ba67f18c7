/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/output-listener.h"

typedef struct FCGX_Request FCGX_Request;
struct json_object;

/* Where a handler's answer goes when the request is not the client's own HTTP request but one made
 * within the worker (an MCP tool call runs a route's handler): the status and body are kept here
 * instead of being sent. body is owned; bytes (a file's content) too. */
typedef struct ReplyCapture {
        int status;
        struct json_object *body;
        void *bytes;
        size_t bytes_len;
        size_t bytes_room; /* what bytes holds at most (reply_body_begin()), less its NUL */
        size_t bytes_max;  /* the capturer's own cap on a body (0: none): a larger one is refused unread */
        char content_type[128];
} ReplyCapture;

#define REQUEST_ID_MAX 64

/* One HTTP request as the worker sees it, and what it answered. */
typedef struct Request {
        FCGX_Request *fcgx;
        char id[REQUEST_ID_MAX]; /* nginx's $request_id, or a worker-made one if nginx sent none */
        char method[16];
        char path[256];
        char route[288]; /* "METHOD /path", for logs and records */
        char raw_path[4096]; /* REQUEST_URI up to its query: as the client sent it, not decoded */
        char query[4096];    /* QUERY_STRING */
        char *body;      /* NUL-terminated; NULL if none */
        size_t body_len;
        bool body_too_large;
        bool body_short;   /* fewer bytes came than CONTENT_LENGTH said */
        bool uri_too_long; /* the path or the query did not fit: not acted on (414) */
        const char *allow; /* the Allow header of a 405 */
        char key_name[65]; /* the API key it came with, once found; "": none (never the token) */
        unsigned retry_after_s; /* the Retry-After header of a 429 or a 503 */
        uint64_t start_usec;

        /* Filled by the handler, read when the request is recorded. */
        int status;
        char *error;
        char sandbox_id[64];
        char machine_id[64]; /* the machine the sandbox was made in, if it was made in one */
        bool has_exit_code;
        int exit_code;
        int64_t duration_ms;
        /* Where its time went, for the journal (0: not reached): waiting for a machine until it
         * greeted, and the exchange with it (the sandbox's making, the code, the reply). */
        uint64_t claim_usec;
        uint64_t exchange_usec;
        /* What it used, from its sandbox's cgroup (or its machine's, when that was killed first);
         * -1: not counted. */
        int64_t cpu_ms;
        int64_t memory_peak_bytes;
        /* What its code exchanged through the egress relay: to the sandbox, from it. -1: it asked
         * for no network. */
        int64_t network_rx_bytes;
        int64_t network_tx_bytes;
        /* And what the relay said of it: connections made and refused (by the relay's limit or the
         * proxy), and the names reached and refused, comma-separated (owned; NULL: none). */
        int64_t network_connections;
        int64_t network_refusals;
        char *network_hosts;
        char *network_refused;
        char session_id[64]; /* the session the request acted on, if any */
        const char *language; /* an execution's, once handed to a sandbox (static) */
        int termination;      /* a Termination (db/requests.h) */

        /* An MCP request's (/mcp): its JSON-RPC method and, for tools/call, the tool. "": none. */
        char mcp_method[48];
        char mcp_tool[32];

        ReplyCapture *capture;    /* NULL: answers go to fcgx */
        OutputListener *listener; /* NULL: output is answered at the end only */
        /* The event stream the client asked for (fcgi/event-stream.h), owned; once begun, the
         * answer's body is its "result" event. */
        struct EventStream *event_stream;
} Request;

/* Reads the parameters and, up to max_body bytes (max_put_body for a PUT: an uploaded file), the
 * body. -ENOMEM; a body over the cap sets body_too_large and is not read. */
int request_read(Request *req, FCGX_Request *fcgx, size_t max_body, size_t max_put_body);

void request_done(Request *req);
