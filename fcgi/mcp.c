/* SPDX-License-Identifier: MIT */
/* /mcp: the Model Context Protocol's Streamable HTTP transport. A client POSTs one JSON-RPC message
 * at a time; a request is answered with JSON, or with an event stream (text/event-stream) when a
 * tool call asks for progress; a notification or a response gets 202. initialize makes a session
 * (Mcp-Session-Id), which every later message names and DELETE ends; it is the API key's, as the
 * sandbox sessions its tools make are. No stream of the server's own is offered: GET is 405. A
 * batch is served in a session of 2025-03-26, the one revision that had them.
 *
 * Both eras of the protocol are served on the one endpoint: a request that names 2026-07-28 (or a
 * later revision) in its _meta has no session and no initialize before it; it is checked against
 * its headers and served on its own, and a client cancels it by closing its stream. Nothing of
 * sandboxd's needs an MCP session: the sandbox sessions are the key's, named by the tools'
 * session_id, which is what the stateless revision asks of a server's state. */
#include <errno.h>
#include <fcgiapp.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "db/db.h"
#include "db/mcp-db.h"
#include "db/sessions.h"
#include "fcgi/auth.h"
#include "fcgi/event-stream.h"
#include "fcgi/http-accept.h"
#include "fcgi/machine-claim.h"
#include "fcgi/mcp-args.h"
#include "fcgi/mcp-rpc.h"
#include "fcgi/mcp-tools.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/session-machine.h"
#include "fcgi/validate.h"
#include "lib/config.h"
#include "lib/json-limits.h"
#include "lib/json-syntax.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "lib/utf8.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

/* A progress notification's message: the output's piece, cut to this many bytes. */
#define PROGRESS_MESSAGE_MAX 4096
#define MCP_ALLOW "POST, DELETE"
/* A tool call's id as JSON, as its record keeps it for a cancellation to find. */
#define MCP_RPC_ID_MAX 256
/* How long a client of the stateless revision may keep the tools' list: they change only with
 * sandboxd's version. */
#define MCP_TOOLS_TTL_MS 300000

/* One request's exchange: where its answer goes, and its progress so far. */
typedef struct Exchange {
        Request *req;
        Context *ctx;
        McpSession session;                 /* id "": a request of the stateless revision */
        bool stream;                        /* answered on an event stream, open already */
        McpBatchOut *batch;                 /* a batch's answers, sent together at its end; NULL: none */
        bool batch_called;                  /* the batch had its one tools/call */
        unsigned batch_requests;            /* requests of the batch counted so far */
        unsigned batch_admitted;            /* how many of them the key's quota let in */
        const char *batch_refusal;          /* what the others are told */
        struct json_object *progress_token; /* borrowed; NULL: no progress asked for */
        int64_t progress;
        uint64_t progress_usec; /* when progress was last sent */
        const char *rpc_id;    /* a tool call's id, as JSON; NULL: none in flight */
        uint64_t checked_usec; /* when it was last looked up for a cancellation */
} Exchange;

static const char *header(const Request *req, const char *name) {
        return FCGX_GetParam(name, req->fcgx->envp);
}

/* How many times the request has the header: nginx passes a header sent twice as two parameters
 * (1.22) or as one, the values joined with commas (1.23 on); libfcgi reads the first. */
static unsigned header_count(const Request *req, const char *name) {
        size_t n = strlen(name);
        unsigned count = 0;

        for (char **e = req->fcgx->envp; e && *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        count++;
        return count;
}

/* A refusal of the transport's: status, and a JSON-RPC error with no id. */
__attribute__((format(printf, 4, 5))) static int refuse(Request *req, int status, int code, const char *fmt, ...) {
        cleanup_json struct json_object *body = NULL;
        char *message = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        free(req->error);
        req->error = message;
        body = mcp_error_new(NULL, code, message);
        if (!body)
                return -ENOMEM;
        if (status == 405)
                req->allow = MCP_ALLOW;
        return reply_json(req, status, body);
}

/* A refusal that is a whole JSON-RPC message (taken): status, and why in the request's record. */
static int refuse_msg(Request *req, int status, struct json_object *msg, const char *why) {
        cleanup_json struct json_object *m = msg;

        free(req->error);
        req->error = strdup(why);
        if (!m)
                return -ENOMEM;
        return reply_json(req, status, m);
}

static int put_json(Request *req, struct json_object *msg) {
        size_t len = 0;
        const char *text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

        if (!text)
                return -ENOMEM;
        if (FCGX_PutStr(text, (int) len, req->fcgx->out) < 0)
                return -EPIPE;
        return 0;
}

static int session_header(const char *id, char *buf, size_t size) {
        return (size_t) snprintf(buf, size, "Mcp-Session-Id: %s\r\n", id) < size ? 0 : -ENAMETOOLONG;
}

/* 200 and one JSON-RPC message (taken). */
static int send_json(Request *req, const char *session_id, struct json_object *msg) {
        cleanup_json struct json_object *m = msg;
        char extra[128] = "";
        int r;

        if (!m)
                return -ENOMEM;
        if (session_id)
                (void) session_header(session_id, extra, sizeof(extra));
        r = reply_head(req, 200, "application/json", extra);
        if (r >= 0)
                r = put_json(req, m);
        return r < 0 ? r : (FCGX_PutS("\n", req->fcgx->out) < 0 ? -EPIPE : 0);
}

/* The stream's head: nginx would buffer it whole without X-Accel-Buffering. */
static int stream_open(Exchange *x) {
        char extra[256] = "";

        if (x->session.id[0])
                (void) session_header(x->session.id, extra, sizeof(extra));
        (void) strncat(extra, "X-Accel-Buffering: no\r\n", sizeof(extra) - strlen(extra) - 1);
        x->stream = true;
        event_stream_bound_writes(x->req->fcgx->ipcFd);
        return reply_head(x->req, 200, "text/event-stream", extra);
}

/* One message (taken) as one event, sent at once: -EPIPE when the client is gone. */
static int stream_event(Request *req, struct json_object *msg) {
        cleanup_json struct json_object *m = msg;

        if (!m)
                return -ENOMEM;
        if (FCGX_PutS("event: message\ndata: ", req->fcgx->out) < 0 || put_json(req, m) < 0 || FCGX_PutS("\n\n", req->fcgx->out) < 0 ||
            FCGX_FFlush(req->fcgx->out) < 0)
                return -EPIPE;
        return 0;
}

/* The answer to the request: on its stream when one is open, else as JSON. Takes msg. A result of
 * the stateless revision says it is whole, and whose it is. */
static int answer(Exchange *x, struct json_object *msg) {
        struct json_object *result = NULL;

        if (!x->session.id[0] && msg && json_object_object_get_ex(msg, "result", &result) && mcp_result_stateless(result) < 0) {
                json_object_put(msg);
                return -ENOMEM;
        }
        if (x->batch)
                return mcp_batch_out_add(x->batch, msg);
        if (x->stream)
                return stream_event(x->req, msg);
        return send_json(x->req, x->session.id[0] ? x->session.id : NULL, msg);
}

static int progress_send(Exchange *x, const char *message) {
        x->progress_usec = now_usec(CLOCK_MONOTONIC);
        struct json_object *params = json_object_new_object();

        if (!params || json_object_object_add(params, "progressToken", json_object_get(x->progress_token)) < 0 ||
            json_object_object_add(params, "progress", json_object_new_int64(++x->progress)) < 0 ||
            json_object_object_add(params, "message", json_object_new_string(message)) < 0) {
                json_object_put(params);
                return -ENOMEM;
        }
        return stream_event(x->req, mcp_notification_new("notifications/progress", params));
}

/* Whether the call was cancelled meanwhile: a notifications/cancelled that another worker took
 * may have come before the call had a machine to kill. Looked up when the run says something
 * anyway, at most once a second. */
static bool call_cancelled(Exchange *x) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!x->rpc_id || now - x->checked_usec < USEC_PER_SEC)
                return false;
        x->checked_usec = now;
        return db_mcp_call_cancelled(x->ctx->db, x->session.id, x->rpc_id) > 0;
}

/* OutputListener: each piece of output is a step of progress, said in its own words; a call
 * cancelled is ended as for a client gone. */
static int on_chunk(void *userdata, int stream, const void *data, size_t len) {
        Exchange *x = userdata;
        cleanup_free char *text = NULL;
        size_t n = 0;

        (void) stream;
        if (call_cancelled(x))
                return -ECANCELED;
        if (!x->stream || !x->progress_token)
                return 0;
        text = utf8_sanitize(data, len > PROGRESS_MESSAGE_MAX ? PROGRESS_MESSAGE_MAX : len, &n);
        if (!text)
                return -ENOMEM;
        return progress_send(userdata, text);
}

/* Called every second (the listener's idle_usec), so that a cancellation is heard soon; progress
 * is said only when nothing was said for OUTPUT_IDLE_USEC. */
static int on_idle(void *userdata) {
        Exchange *x = userdata;

        if (call_cancelled(x))
                return -ECANCELED;
        if (!x->stream || !x->progress_token || now_usec(CLOCK_MONOTONIC) - x->progress_usec < OUTPUT_IDLE_USEC)
                return 0;
        return progress_send(x, "running");
}

static int tool_error(Exchange *x, struct json_object *id, int code, const char *message) {
        return answer(x, mcp_error_new(id, code, message));
}

/* notifications/cancelled: the call of that id in this session, if it is still in flight, is
 * marked so. The worker that serves it stops it, within a second (its listener looks the mark up):
 * only that worker knows which machine or run is the call's now. One that stopped a machine from
 * here, as named by the call's request row, could meet it given back to the pool and claimed by
 * another key's execution. */
static void cancel(Exchange *x, struct json_object *params) {
        struct json_object *id = NULL;
        McpCall c;
        int r;

        if (!json_object_object_get_ex(params, "requestId", &id) ||
            !(json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int)))
                return;
        r = db_mcp_call_cancel(x->ctx->db, x->session.id, json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN), &c);
        /* -ENOENT: answered already, or never asked: nothing to stop. */
        if (r < 0 && r != -ENOENT)
                (void) log_warning_errno(r, "Failed to record a cancellation, ignoring: %s", db_errmsg(x->ctx->db));
}

/* tools/call's params: the tool's name, its arguments, and a progress token if any. */
static int call_params(struct json_object *params, const char **ret_name, struct json_object **ret_args, struct json_object **ret_token) {
        struct json_object *name = NULL, *args = NULL, *meta = NULL, *token = NULL;

        /* A name with a NUL would be read as the tool before it. */
        if (!json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string) ||
            strlen(json_object_get_string(name)) != (size_t) json_object_get_string_len(name))
                return -EINVAL;
        if (json_object_object_get_ex(params, "arguments", &args) && !json_object_is_type(args, json_type_object) &&
            !json_object_is_type(args, json_type_null))
                return -E2BIG;
        if (json_object_object_get_ex(params, "_meta", &meta) && json_object_object_get_ex(meta, "progressToken", &token) &&
            !json_object_is_type(token, json_type_string) && !json_object_is_type(token, json_type_int))
                token = NULL;
        *ret_name = json_object_get_string(name);
        *ret_args = json_object_is_type(args, json_type_object) ? args : NULL;
        *ret_token = token;
        return 0;
}

/* Whether the client takes type (it must take both, the transport says; a client that says
 * nothing is taken to accept JSON). */
static bool accepts(const Request *req, const char *type) {
        return http_accepts(header(req, "HTTP_ACCEPT"), type);
}

static int tools_call(Exchange *x, const McpMessage *m) {
        Request *req = x->req;
        OutputListener listener = {.chunk = on_chunk, .idle = on_idle, .userdata = x, .idle_usec = USEC_PER_SEC};
        cleanup_json struct json_object *result = NULL;
        struct json_object *args = NULL, *sid = NULL;
        const char *name = NULL;
        char rpc_id[MCP_RPC_ID_MAX];
        /* A session's calls are recorded for its notifications/cancelled to find; the stateless
         * revision's client closes the call's stream instead, and the worker hears of that. */
        bool recorded = x->session.id[0] != 0;
        Error err = {};
        int r, cancelled = 0;

        /* A copy: the text json-c makes lives in the id's object only until it is made again. */
        if ((size_t) snprintf(rpc_id, sizeof(rpc_id), "%s", json_object_to_json_string_ext(m->id, JSON_C_TO_STRING_PLAIN)) >= sizeof(rpc_id))
                return tool_error(x, m->id, MCP_INVALID_REQUEST, MSG_MCP_ID_TOO_LONG);
        r = call_params(m->params, &name, &args, &x->progress_token);
        if (r < 0)
                return tool_error(x, m->id, MCP_INVALID_PARAMS, r == -EINVAL ? MSG_MCP_TOOL_NAME : MSG_MCP_ARGUMENTS);
        (void) snprintf(req->mcp_tool, sizeof(req->mcp_tool), "%s", name);
        (void) json_object_object_get_ex(args, "session_id", &sid);
        r = recorded ? db_mcp_call_begin(x->ctx->db, x->session.id, rpc_id, req->id, name,
                                         json_object_is_type(sid, json_type_string) ? json_object_get_string(sid) : NULL)
                     : 0;
        if (r == -EEXIST)
                return tool_error(x, m->id, MCP_INVALID_REQUEST, MSG_MCP_CALL_IN_FLIGHT);
        if (r < 0)
                return tool_error(x, m->id, MCP_INTERNAL_ERROR, MSG_MCP_CALL_RECORD);

        /* The stream's first event says the call is under way, before any output: the client
         * sees it is served, whatever the code does first. A client gone is found when the
         * run's first event cannot be sent. */
        if (x->progress_token && !x->stream && !x->batch && accepts(req, "text/event-stream") && stream_open(x) >= 0)
                (void) progress_send(x, "running");
        /* Always: it also hears of a cancellation. */
        x->rpc_id = recorded ? rpc_id : NULL;
        req->listener = &listener;
        r = mcp_tool_call(req, x->ctx, name, args, &result, &err);
        req->listener = NULL;
        x->rpc_id = NULL;
        if (recorded)
                cancelled = db_mcp_call_end(x->ctx->db, x->session.id, rpc_id);

        if (cancelled > 0) {
                /* The client asked it stopped: no answer, as the cancellation spec says. A session
                 * run was stopped with its machine: its next run is to say the state was lost,
                 * which the run's own answer, never sent, would have said. req->session_id is
                 * set only for a session the request may act on. */
                if (req->session_id[0] && (strcmp(name, "session_run") == 0 || strcmp(name, "session_exec") == 0))
                        (void) db_session_set_reset(x->ctx->db, req->session_id, true);
                free(req->error);
                req->error = strdup(MSG_MCP_CANCELLED);
                if (x->stream || x->batch)
                        return 0;
                /* Yet a POST of a request is answered with JSON or an event stream, the transport
                 * says (202 is a notification's): a stream that ends with no message in it, or, for
                 * a client that takes JSON only, an error that says why. */
                if (accepts(req, "text/event-stream"))
                        return stream_open(x);
                return tool_error(x, m->id, MCP_REQUEST_CANCELLED, MSG_MCP_CANCELLED);
        }
        if (r == -ECANCELED)
                return reply_abandoned(req);
        if (r == -ENOENT) {
                char message[sizeof(MSG_MCP_UNKNOWN_TOOL) + sizeof(req->mcp_tool)];

                (void) snprintf(message, sizeof(message), MSG_MCP_UNKNOWN_TOOL, req->mcp_tool);
                return tool_error(x, m->id, MCP_INVALID_PARAMS, message);
        }
        if (r == -EINVAL)
                return tool_error(x, m->id, MCP_INVALID_PARAMS, err.message);
        if (r < 0)
                return tool_error(x, m->id, MCP_INTERNAL_ERROR, MSG_MCP_CALL_FAILED);
        return answer(x, mcp_result_new(m->id, TAKE_PTR(result)));
}

#define INSTRUCTIONS                                                                                                                    \
        "Run untrusted code in isolated sandboxes: execute for one-off runs; session_create and the session_* tools to keep state and " \
        "files between runs."

/* {"tools": {"listChanged": false}}: tools, a list that does not change while the server runs. */
static struct json_object *capabilities_new(void) {
        cleanup_json struct json_object *caps = json_object_new_object(), *tools = json_object_new_object();

        if (!caps || !tools || json_object_object_add(tools, "listChanged", json_object_new_boolean(0)) < 0 ||
            json_object_object_add(caps, "tools", TAKE_PTR(tools)) < 0)
                return NULL;
        return TAKE_PTR(caps);
}

static struct json_object *initialize_result(const char *version) {
        cleanup_json struct json_object *out = json_object_new_object(), *caps = capabilities_new(), *info = mcp_server_info_new();

        if (!out || !caps || !info || json_object_object_add(out, "protocolVersion", json_object_new_string(version)) < 0 ||
            json_object_object_add(out, "capabilities", TAKE_PTR(caps)) < 0 || json_object_object_add(out, "serverInfo", TAKE_PTR(info)) < 0 ||
            json_object_object_add(out, "instructions", json_object_new_string(INSTRUCTIONS)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* initialize: a new session, of the request's key, at the version agreed on. Its id is 128 random
 * bits in hex: visible ASCII, and not to be guessed; on a cluster's member, after its name and '-',
 * which the front routes the session's later messages by (README, "Several hosts"). */
static int initialize(Request *req, Context *ctx, const McpMessage *m) {
        struct json_object *v = NULL;
        const char *version = mcp_version_negotiate(json_object_object_get_ex(m->params, "protocolVersion", &v) &&
                                                                    json_object_is_type(v, json_type_string)
                                                            ? json_object_get_string(v)
                                                            : NULL);
        uint8_t rnd[16];
        char id[MEMBER_NAME_MAX + 1 + 2 * sizeof(rnd) + 1];
        size_t n;
        int r;

        if (header(req, "HTTP_MCP_SESSION_ID"))
                return refuse(req, 400, MCP_INVALID_REQUEST, MSG_MCP_INIT_SESSION);
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return reply_error(req, 500, MSG_INTERNAL, "no random bytes for a session id");
        n = (size_t) snprintf(id, sizeof(id), "%s%s", ctx->config->member, ctx->config->member[0] ? "-" : "");
        for (size_t i = 0; i < sizeof(rnd); i++)
                (void) snprintf(id + n + 2 * i, 3, "%02x", rnd[i]);
        r = db_mcp_session_create(ctx->db, id, req->key_name[0] ? req->key_name : NULL, version);
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        return send_json(req, id, mcp_result_new(m->id, initialize_result(version)));
}

/* The session the request names, of its own key: 0, or answered (400 without one, 404 for one that
 * does not exist, ended, or is another key's; 400 for a protocol version not served). */
static int session_find(Request *req, Context *ctx, McpSession *ret) {
        const char *id = header(req, "HTTP_MCP_SESSION_ID"), *version = header(req, "HTTP_MCP_PROTOCOL_VERSION");
        int r;

        if (!id || !id[0])
                return refuse(req, 400, MCP_SERVER_ERROR, MSG_MCP_NO_SESSION), -EINVAL;
        r = db_mcp_session_use(ctx->db, id, ret);
        if (r < 0 && r != -ENOENT)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db)), r;
        if (r == -ENOENT || strcmp(ret->key_name, req->key_name) != 0)
                return refuse(req, 404, MCP_SESSION_NOT_FOUND, MSG_MCP_SESSION_GONE), -ENOENT;
        /* Absent: a client of 2025-03-26, which had no such header. */
        if (version && !mcp_version_supported(version))
                return refuse(req, 400, MCP_SERVER_ERROR, MSG_MCP_VERSION, version), -EINVAL;
        return 0;
}

static int request(Exchange *x, const McpMessage *m) {
        if (strcmp(m->method, "ping") == 0)
                return answer(x, mcp_result_new(m->id, json_object_new_object()));
        if (strcmp(m->method, "tools/list") == 0)
                return answer(x, mcp_result_new(m->id, mcp_tools_list()));
        if (strcmp(m->method, "tools/call") == 0)
                return tools_call(x, m);
        {
                char message[160];

                (void) snprintf(message, sizeof(message), MSG_MCP_METHOD, m->method);
                return answer(x, mcp_error_new(m->id, MCP_METHOD_NOT_FOUND, message));
        }
}

/* server/discover's result: every revision served, and what initialize would have said. */
static struct json_object *discover_result(void) {
        cleanup_json struct json_object *out = json_object_new_object(), *caps = capabilities_new(), *err = NULL;
        struct json_object *e = NULL, *data = NULL, *supported = NULL;

        /* The list the error of a revision not served gives is the one list of them. */
        err = mcp_unsupported_version_new(NULL, NULL);
        if (!out || !caps || !err || !json_object_object_get_ex(err, "error", &e) || !json_object_object_get_ex(e, "data", &data) ||
            !json_object_object_get_ex(data, "supported", &supported) ||
            json_object_object_add(out, "supportedVersions", json_object_get(supported)) < 0 ||
            json_object_object_add(out, "capabilities", TAKE_PTR(caps)) < 0 ||
            json_object_object_add(out, "instructions", json_object_new_string(INSTRUCTIONS)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* tools/list's result in the stateless revision: the tools, and how long a client may keep them. */
static struct json_object *tools_list_cacheable(void) {
        cleanup_json struct json_object *out = mcp_tools_list();

        /* The same list for every key: a shared cache may keep it. */
        if (!out || json_object_object_add(out, "ttlMs", json_object_new_int(MCP_TOOLS_TTL_MS)) < 0 ||
            json_object_object_add(out, "cacheScope", json_object_new_string("public")) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* A request of the stateless revision (2026-07-28): no session. Its headers must say what its body
 * does (a proxy may have routed it by them), its revision must be one served; then it is served
 * on its own. What the revision has no more (ping, initialize's session) is a method not found. */
static int stateless(Request *req, Context *ctx, const McpMessage *m, const char *version) {
        Exchange x = {.req = req, .ctx = ctx};
        char message[160];
        Error err = {};
        int r;

        /* The revision has no notification a client sends over HTTP (a closed stream is its
         * cancellation): one is taken, and nothing is done. */
        if (m->kind != MCP_REQUEST)
                return reply_head(req, 202, NULL, NULL);
        /* Sent twice, a header could be read by a proxy as the one and here as the other. */
        if (header_count(req, "HTTP_MCP_PROTOCOL_VERSION") > 1 || header_count(req, "HTTP_MCP_METHOD") > 1 ||
            header_count(req, "HTTP_MCP_NAME") > 1)
                return refuse_msg(req, 400, mcp_error_new(m->id, MCP_HEADER_MISMATCH, MSG_MCP_HEADER_TWICE), MSG_MCP_HEADER_TWICE);
        if (mcp_headers_check(m, version, header(req, "HTTP_MCP_PROTOCOL_VERSION"), header(req, "HTTP_MCP_METHOD"),
                              header(req, "HTTP_MCP_NAME"), &err) < 0)
                return refuse_msg(req, 400, mcp_error_new(m->id, MCP_HEADER_MISMATCH, err.message), err.message);
        /* version is set once the headers matched it; checked again for whoever reads this alone. */
        if (!version || strcmp(version, MCP_PROTOCOL_STATELESS) != 0) {
                (void) snprintf(message, sizeof(message), MSG_MCP_STATELESS_VERSION, version ? version : "");
                return refuse_msg(req, 400, mcp_unsupported_version_new(m->id, version), message);
        }
        if (!accepts(req, "application/json") && !accepts(req, "text/event-stream"))
                return refuse(req, 406, MCP_SERVER_ERROR, MSG_MCP_ACCEPT);
        if (strcmp(m->method, "server/discover") != 0 && strcmp(m->method, "tools/list") != 0 && strcmp(m->method, "tools/call") != 0) {
                (void) snprintf(message, sizeof(message), MSG_MCP_METHOD, m->method);
                return refuse_msg(req, 404, mcp_error_new(m->id, MCP_METHOD_NOT_FOUND, message), message);
        }
        if (!accepts(req, "application/json")) {
                r = stream_open(&x);
                if (r < 0)
                        return r;
        }
        if (strcmp(m->method, "server/discover") == 0)
                r = answer(&x, mcp_result_new(m->id, discover_result()));
        else if (strcmp(m->method, "tools/list") == 0)
                r = answer(&x, mcp_result_new(m->id, tools_list_cacheable()));
        else
                r = tools_call(&x, m);
        if (r < 0 && req->status != 0)
                (void) log_warning_errno(r, "Failed to send the answer to '%s', ignoring", m->method);
        return req->status != 0 ? 0 : r;
}

/* A body that is a JSON array, parsed as strictly as any body: 1 and a batch in *ret; 0: no batch
 * (one message, or no JSON); counted before json-c builds any of it, -E2BIG for more messages
 * than MCP_BATCH_MAX, -ERANGE for more values than JSON_MAX_VALUES or JSON_MAX_CONTAINERS (each
 * costs json-c far more than its text); -ENOMEM. */
static int batch_parse(const Request *req, struct json_object **ret) {
        struct json_tokener *tok;
        struct json_object *o;
        JsonSyntaxCounts c;

        if (req->body[strspn(req->body, " \t\r\n")] != '[' || !json_syntax_scan(req->body, req->body_len, JSON_MAX_DEPTH, &c) ||
            !utf8_valid((const uint8_t *) req->body, req->body_len))
                return 0;
        if (c.top > MCP_BATCH_MAX)
                return -E2BIG;
        if (c.values > JSON_MAX_VALUES || c.containers > JSON_MAX_CONTAINERS)
                return -ERANGE;
        tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, req->body, (int) req->body_len);
        if (!json_object_is_type(o, json_type_array) || json_tokener_get_parse_end(tok) != req->body_len) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        *ret = o;
        return o ? 1 : 0;
}

/* Whether a message of a batch is a request that counts against executions-per-minute on its own:
 * any but a tools/call, which its route counts as its REST request. */
static bool batch_counted(const McpMessage *m) {
        return m->kind == MCP_REQUEST && m->method && strcmp(m->method, "tools/call") != 0;
}

/* The batch's requests, counted against the key's executions-per-minute before any is served:
 * those past the quota are answered with its refusal. 0, or answered. */
static int batch_admit(Exchange *x, struct json_object *messages) {
        unsigned n = 0;
        Error err = {};
        int r;

        for (size_t i = 0; i < json_object_array_length(messages); i++) {
                struct json_object *id = NULL;
                McpMessage m;
                Error e = {};

                n += mcp_message_parse(json_object_array_get_idx(messages, i), &m, &id, &e) >= 0 && batch_counted(&m);
        }
        r = auth_admit_batch(x->req, x->ctx, n, &x->batch_admitted, &err);
        if (r == -EPERM)
                return reply_error(x->req, 401, MSG_UNAUTHORIZED), -EPERM;
        if (r < 0 && r != -EBUSY)
                return reply_error(x->req, 503, MSG_DB_UNAVAILABLE, db_errmsg(x->ctx->db)), r;
        x->batch_refusal = r == -EBUSY ? strdup(err.message) : NULL;
        if (r == -EBUSY && !x->batch_refusal)
                return -ENOMEM;
        return 0;
}

/* One message of a batch: its answer, if it is a request, joins the batch's. */
static int batch_one(Exchange *x, struct json_object *msg) {
        struct json_object *id = NULL;
        McpMessage m;
        Error err = {};

        if (mcp_message_parse(msg, &m, &id, &err) < 0)
                return answer(x, mcp_error_new(id, MCP_INVALID_REQUEST, err.message));
        if (m.method)
                (void) snprintf(x->req->mcp_method, sizeof(x->req->mcp_method), "%s", m.method);
        if (m.kind == MCP_NOTIFICATION && m.method && strcmp(m.method, "notifications/cancelled") == 0)
                cancel(x, m.params);
        if (m.kind != MCP_REQUEST || !m.method)
                return 0;
        if (batch_counted(&m) && x->batch_requests++ >= x->batch_admitted)
                return answer(x, mcp_error_new(m.id, MCP_SERVER_ERROR, x->batch_refusal ? x->batch_refusal : MSG_INTERNAL));
        if (strcmp(m.method, "initialize") == 0)
                return answer(x, mcp_error_new(m.id, MCP_INVALID_REQUEST, MSG_MCP_BATCH_INIT));
        /* One tool call a POST: its request's row is what the key's quotas count (an execution a
         * row, its CPU time the row's), so a second in the batch would run uncounted. */
        if (strcmp(m.method, "tools/call") == 0 && x->batch_called)
                return answer(x, mcp_error_new(m.id, MCP_INVALID_REQUEST, MSG_MCP_BATCH_CALLS));
        if (strcmp(m.method, "tools/call") == 0)
                x->batch_called = true;
        /* A request holds one machine at a time: an earlier execute's goes back to the pool (or
         * retires) before the next claims one. */
        machine_release(&x->ctx->machine);
        return request(x, &m);
}

/* The batch's answers, "[" ... "]": 200, or 202 when none is a request's. */
static int batch_send(Exchange *x) {
        char extra[128] = "";
        int r;

        if (x->batch->len == 0)
                return reply_head(x->req, 202, NULL, NULL);
        (void) session_header(x->session.id, extra, sizeof(extra));
        r = reply_head(x->req, 200, "application/json", extra);
        if (r < 0)
                return r;
        if (FCGX_PutStr(x->batch->text, (int) x->batch->len, x->req->fcgx->out) < 0 || FCGX_PutS("]\n", x->req->fcgx->out) < 0)
                return -EPIPE;
        return 0;
}

/* A JSON-RPC batch, which 2025-03-26 alone allows: its messages in order, their answers in one
 * array (no stream: a progress token in a batch gets none), 202 when none is a request. Each
 * request counts against the key's executions-per-minute as one sent on its own would. */
static int batch(Request *req, Context *ctx, struct json_object *messages) {
        McpBatchOut out = {.max = MCP_ANSWER_MAX_BYTES};
        Exchange x = {.req = req, .ctx = ctx};
        size_t n = json_object_array_length(messages);
        int r = 0;

        if (session_find(req, ctx, &x.session) < 0)
                return 0; /* answered */
        if (!mcp_version_batches(x.session.version))
                return refuse(req, 400, MCP_INVALID_REQUEST, MSG_MCP_BATCH, x.session.version);
        if (n == 0)
                return refuse(req, 400, MCP_INVALID_REQUEST, MSG_MCP_BATCH_EMPTY);
        if (!accepts(req, "application/json"))
                return refuse(req, 406, MCP_SERVER_ERROR, MSG_MCP_ACCEPT);
        r = batch_admit(&x, messages);
        if (r < 0)
                return req->status != 0 ? 0 : r;
        x.batch = &out;
        for (size_t i = 0; i < n && r >= 0 && req->status == 0; i++)
                r = batch_one(&x, json_object_array_get_idx(messages, i));
        if (req->status == 0 && r >= 0)
                r = batch_send(&x);
        mcp_batch_out_done(&out);
        free((char *) x.batch_refusal);
        /* A client gone, or a call cancelled: nothing more to say. */
        return req->status != 0 ? 0 : r;
}

static int post(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL;
        struct json_object *id = NULL;
        Exchange x = {.req = req, .ctx = ctx};
        const char *version;
        McpMessage m;
        Error err = {};
        int r;

        r = req->body ? batch_parse(req, &body) : 0;
        if (r == -E2BIG)
                return refuse(req, 400, MCP_INVALID_REQUEST, MSG_MCP_BATCH_LONG, MCP_BATCH_MAX);
        if (r < 0 && r != -ERANGE)
                return r;
        if (r > 0)
                return batch(req, ctx, body);
        if (r == 0)
                r = req->body ? validate_parse_body(req->body, req->body_len, &body) : -EINVAL;
        else
                r = -E2BIG; /* -ERANGE: too many values */
        if (r == -E2BIG)
                return refuse(req, 400, MCP_INVALID_REQUEST, MSG_MCP_BODY_VALUES, JSON_MAX_VALUES, JSON_MAX_CONTAINERS);
        if (r < 0)
                return refuse(req, 400, MCP_PARSE_ERROR, MSG_MCP_PARSE);
        if (mcp_message_parse(body, &m, &id, &err) < 0) {
                cleanup_json struct json_object *e = mcp_error_new(id, MCP_INVALID_REQUEST, err.message);

                free(req->error);
                req->error = strdup(err.message);
                return e ? reply_json(req, 400, e) : -ENOMEM;
        }
        if (m.method)
                (void) snprintf(req->mcp_method, sizeof(req->mcp_method), "%s", m.method);
        if (m.kind == MCP_REQUEST && m.method && strcmp(m.method, "initialize") == 0)
                return initialize(req, ctx, &m);
        /* A request of the stateless revision names it in its _meta; one whose header names it
         * but whose body does not is refused for that, not for want of a session. */
        version = m.method ? mcp_meta_version(m.params) : NULL;
        if (version || (mcp_version_stateless(header(req, "HTTP_MCP_PROTOCOL_VERSION")) && !header(req, "HTTP_MCP_SESSION_ID")))
                return stateless(req, ctx, &m, version);
        if (session_find(req, ctx, &x.session) < 0)
                return 0; /* answered */

        if (m.kind != MCP_REQUEST || !m.method) {
                if (m.kind == MCP_NOTIFICATION && m.method && strcmp(m.method, "notifications/cancelled") == 0)
                        cancel(&x, m.params);
                return reply_head(req, 202, NULL, NULL);
        }
        if (!accepts(req, "application/json") && !accepts(req, "text/event-stream"))
                return refuse(req, 406, MCP_SERVER_ERROR, MSG_MCP_ACCEPT);
        /* A client that takes an event stream only gets its answer on one. */
        if (!accepts(req, "application/json")) {
                r = stream_open(&x);
                if (r < 0)
                        return r;
        }
        r = request(&x, &m);
        if (r < 0 && req->status != 0)
                (void) log_warning_errno(r, "Failed to send the answer to '%s', ignoring", m.method);
        return req->status != 0 ? 0 : r;
}

/* DELETE: the session ends; what it made (sandbox sessions) is the key's, and stays. */
static int end_session(Request *req, Context *ctx) {
        McpSession s;
        int r;

        if (session_find(req, ctx, &s) < 0)
                return 0; /* answered */
        r = db_mcp_session_end(ctx->db, s.id);
        if (r == -ENOENT)
                return refuse(req, 404, MCP_SESSION_NOT_FOUND, MSG_MCP_SESSION_GONE);
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        return reply_head(req, 204, NULL, NULL);
}

int route_mcp(Request *req, Context *ctx) {
        const char *origin = header(req, "HTTP_ORIGIN");

        /* Before anything else: a page of another site that a browser was made to send here (DNS
         * rebinding) must not reach a session or a sandbox. */
        if (!mcp_origin_allowed(origin, ctx->config->mcp_allowed_origins))
                return refuse(req, 403, MCP_SERVER_ERROR, MSG_MCP_ORIGIN, origin);
        if (strcmp(req->method, "POST") == 0)
                return post(req, ctx);
        if (strcmp(req->method, "DELETE") == 0)
                return end_session(req, ctx);
        return refuse(req, 405, MCP_SERVER_ERROR, MSG_MCP_METHOD_NOT_ALLOWED, req->method);
}
