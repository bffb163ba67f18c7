/* SPDX-License-Identifier: MIT */
/* MCP's tools, each the REST request it stands for: the tools' schemas, and each call turned into
 * the method, path and body of that request. The REST handler then checks the fields as it always
 * does, so that a tool refuses exactly what its route refuses, in the same words. Pure. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/mcp-args.h"
#include "fcgi/messages.h"
#include "fcgi/route.h"
#include "lib/b64.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

/* Schemas, as JSON text. Outputs name their fields without requiring them, and allow more: a
 * refusal (isError) carries {"error", "status"} in the same place, and clients check it against
 * the same schema. */
#define S_FILES_IN                                                                                                                \
        "{\"type\":\"array\",\"description\":\"Files written into the working directory first.\",\"items\":{\"type\":\"object\"," \
        "\"required\":[\"path\",\"content_b64\"],\"properties\":{\"path\":{\"type\":\"string\"},\"content_b64\":{\"type\":\"string\"}}}}"
#define S_SESSION_ID "\"session_id\":{\"type\":\"string\",\"description\":\"The session's id, from session_create.\"}"
#define S_RUN_OUT                                                                                                              \
        "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\"},\"session_id\":{\"type\":\"string\"},"          \
        "\"result\":{\"type\":\"object\",\"properties\":{\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"   \
        "\"exit_code\":{\"type\":\"integer\"},\"termination_reason\":{\"type\":\"string\"}}},\"usage\":{\"type\":\"object\"}," \
        "\"session\":{\"type\":\"object\"},\"error\":{}}}"
#define S_SESSION_OUT                                                                                                    \
        "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"},"     \
        "\"created_at\":{\"type\":\"string\"},\"last_used\":{\"type\":\"string\"},\"expires_at\":{\"type\":\"string\"}," \
        "\"ttl_s\":{\"type\":\"integer\"},\"run_count\":{\"type\":\"integer\"}}}"

typedef struct Tool {
        const char *name;
        const char *description;
        const char *input;
        const char *output;
} Tool;

static const Tool tools[] = {
        {"execute",
         "Run code once in a fresh, isolated sandbox (POST /v1/execute). Returns stdout, stderr and the exit code; "
         "files named in return_files come back too (images as images). A non-zero exit is an error result.",
         "{\"type\":\"object\",\"required\":[\"code\"],\"properties\":{"
         "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"node\",\"bash\"],\"default\":\"python\"},"
         "\"code\":{\"type\":\"string\"},\"files\":" S_FILES_IN ",\"stdin\":{\"type\":\"string\"},"
         "\"timeout_s\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Seconds, at most 60.\"},"
         "\"return_files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Paths to send back after the run.\"}}}",
         "{\"type\":\"object\",\"properties\":{\"sandbox_id\":{\"type\":\"string\"},\"stdout\":{\"type\":\"string\"},"
         "\"stderr\":{\"type\":\"string\"},\"exit_code\":{\"type\":\"integer\"},\"duration_ms\":{\"type\":\"integer\"},"
         "\"files\":{\"type\":\"array\"},\"usage\":{\"type\":\"object\"}}}"},
        {"session_create",
         "Create a session (POST /v1/sessions): a sandbox that keeps its interpreters' state and its files between runs, "
         "paused after ttl_s idle seconds.",
         "{\"type\":\"object\",\"properties\":{\"ttl_s\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,\"default\":600},"
         "\"files\":" S_FILES_IN "}}",
         S_SESSION_OUT},
        {"session_run",
         "Run code in a session's long-lived python, node or bash interpreter (POST /v1/sessions/{id}/run): variables and "
         "imports persist between runs.",
         "{\"type\":\"object\",\"required\":[\"session_id\",\"language\",\"code\"],\"properties\":{" S_SESSION_ID ","
         "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"node\",\"bash\"]},\"code\":{\"type\":\"string\"},"
         "\"timeout\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Seconds; 0 or absent: 30.\"}}}",
         S_RUN_OUT},
        {"session_exec",
         "Run a shell command (/bin/sh -c) in a session's working directory (POST /v1/sessions/{id}/exec).",
         "{\"type\":\"object\",\"required\":[\"session_id\",\"command\"],\"properties\":{" S_SESSION_ID ","
         "\"command\":{\"type\":\"string\"},\"timeout\":{\"type\":\"integer\",\"minimum\":0}}}",
         S_RUN_OUT},
        {"session_write_file",
         "Write a file into a session's working directory (PUT /v1/sessions/{id}/files/{path}): text in content, or "
         "bytes in content_b64.",
         "{\"type\":\"object\",\"required\":[\"session_id\",\"path\"],\"properties\":{" S_SESSION_ID ","
         "\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},\"content_b64\":{\"type\":\"string\"}}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}}}"},
        {"session_read_file",
         "Read a file of a session's working directory (GET /v1/sessions/{id}/files/{path}); images come back as images.",
         "{\"type\":\"object\",\"required\":[\"session_id\",\"path\"],\"properties\":{" S_SESSION_ID ",\"path\":{\"type\":\"string\"}}}",
         "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
         "\"mime_type\":{\"type\":\"string\"},\"content_b64\":{\"type\":\"string\"}}}"},
        {"session_list_files",
         "List a directory of a session's working directory (GET /v1/sessions/{id}/files?dir=).",
         "{\"type\":\"object\",\"required\":[\"session_id\"],\"properties\":{" S_SESSION_ID ","
         "\"dir\":{\"type\":\"string\",\"description\":\"Relative to the working directory; absent: the working directory.\"}}}",
         "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
         "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"type\":{\"type\":\"string\"},\"modified\":{\"type\":\"string\"}}}}}}"},
        {"session_delete",
         "Delete a session, its sandbox and its files (DELETE /v1/sessions/{id}).",
         "{\"type\":\"object\",\"required\":[\"session_id\"],\"properties\":{" S_SESSION_ID "}}",
         "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"}}}"},
        {"runtimes",
         "The languages the sandboxes run, their versions and Python's packages (GET /v1/runtimes).",
         "{\"type\":\"object\",\"properties\":{}}",
         "{\"type\":\"object\",\"properties\":{\"runtimes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
         "\"language\":{\"type\":\"string\"},\"version\":{\"type\":\"string\"},\"os\":{\"type\":\"string\"},\"packages\":{\"type\":\"object\"}}}}}}"},
};

static struct json_object *tool_json(const Tool *t) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o || json_object_object_add(o, "name", json_object_new_string(t->name)) < 0 ||
            json_object_object_add(o, "description", json_object_new_string(t->description)) < 0 ||
            json_object_object_add(o, "inputSchema", json_tokener_parse(t->input)) < 0 ||
            json_object_object_add(o, "outputSchema", json_tokener_parse(t->output)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

struct json_object *mcp_tools_list(void) {
        cleanup_json struct json_object *out = json_object_new_object(), *list = json_object_new_array();

        if (!out || !list)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                struct json_object *t = tool_json(&tools[i]);

                if (!t || json_object_array_add(list, t) < 0) {
                        json_object_put(t);
                        return NULL;
                }
        }
        if (json_object_object_add(out, "tools", TAKE_PTR(list)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* s percent-encoded into *p (up to end), as a path segment or, keep_slash, a path: everything but
 * RFC 3986's unreserved characters is escaped, so that nothing a client sends can become another
 * segment ("..", "/run") or a query. -ENAMETOOLONG when it does not fit. */
static int encode(const char *s, bool keep_slash, char **p, const char *end) {
        static const char unreserved[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";

        for (; *s; s++) {
                bool plain = strchr(unreserved, *s) || (keep_slash && *s == '/');

                if (end - *p < (plain ? 2 : 4))
                        return -ENAMETOOLONG;
                if (plain)
                        *(*p)++ = *s;
                else
                        *p += snprintf(*p, 4, "%%%02X", (unsigned char) *s);
        }
        **p = 0;
        return 0;
}

/* "/v1/sessions/<id>" and then suffix, and the file path when there is one. */
static int session_path(McpRest *rest, const char *id, const char *suffix, const char *file) {
        char *p = rest->raw_path, *end = rest->raw_path + sizeof(rest->raw_path);
        int r;

        p += snprintf(p, (size_t) (end - p), "/v1/sessions/");
        r = encode(id, false, &p, end);
        if (r < 0)
                return r;
        if ((size_t) (end - p) <= strlen(suffix))
                return -ENAMETOOLONG;
        p = stpcpy(p, suffix);
        return file ? encode(file, true, &p, end) : 0;
}

/* A string argument, NULL when absent or not a string. One with a NUL in it is refused too: every
 * string below names something (a session, a path, a directory) that C reads up to its first NUL,
 * and a name cut there silently would be another name. */
static const char *arg_string(struct json_object *args, const char *key) {
        struct json_object *v = NULL;
        const char *s;

        if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        s = json_object_get_string(v);
        return strlen(s) == (size_t) json_object_get_string_len(v) ? s : NULL;
}

/* The arguments but the ones the path holds, as the request's JSON body. */
static int json_body(McpRest *rest, struct json_object *args, const char *drop) {
        cleanup_json struct json_object *copy = json_object_new_object();
        const char *text;

        if (!copy)
                return -ENOMEM;
        if (args) {
                json_object_object_foreach (args, k, v) {
                        if (drop && strcmp(k, drop) == 0)
                                continue;
                        if (json_object_object_add(copy, k, json_object_get(v)) < 0)
                                return -ENOMEM;
                }
        }
        text = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
        rest->body = text ? strdup(text) : NULL;
        if (!rest->body)
                return -ENOMEM;
        rest->body_len = strlen(rest->body);
        return 0;
}

/* session_write_file's content: text as it is (every byte of it: a "\u0000" is one of them), or
 * base64 decoded. */
static int file_body(McpRest *rest, struct json_object *args, Error *reterr) {
        struct json_object *text = NULL, *b64 = NULL;
        uint8_t *raw = NULL;
        size_t len = 0;

        if (!json_object_object_get_ex(args, "content", &text) || !json_object_is_type(text, json_type_string))
                text = NULL;
        if (!json_object_object_get_ex(args, "content_b64", &b64) || !json_object_is_type(b64, json_type_string))
                b64 = NULL;
        if (!text == !b64)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_CONTENT);
        if (text) {
                len = (size_t) json_object_get_string_len(text);
                /* NUL-terminated as a request's body is. */
                rest->body = malloc(len + 1);
                if (!rest->body)
                        return -ENOMEM;
                memcpy(rest->body, json_object_get_string(text), len + 1);
                rest->body_len = len;
                return 0;
        }
        if (b64_decode(json_object_get_string(b64), (size_t) json_object_get_string_len(b64), &raw, &len) < 0)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_CONTENT_B64);
        rest->body = realloc(raw, len + 1);
        if (!rest->body) {
                free(raw);
                return -ENOMEM;
        }
        rest->body[len] = 0;
        rest->body_len = len;
        return 0;
}

/* list_files' dir, as its query. */
static int dir_query(McpRest *rest, struct json_object *args, Error *reterr) {
        const char *dir;
        char *q = rest->query;

        if (!json_object_object_get_ex(args, "dir", NULL))
                return 0;
        dir = arg_string(args, "dir");
        if (!dir)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_DIR);
        q = stpcpy(q, "dir=");
        return encode(dir, false, &q, rest->query + sizeof(rest->query));
}

/* What a tool's request carries besides its path. */
typedef enum ToolBody {
        TOOL_BODY_NONE,
        TOOL_BODY_JSON,  /* the arguments as JSON, less session_id */
        TOOL_BODY_FILE,  /* content or content_b64, as the file's bytes */
        TOOL_BODY_QUERY, /* dir, as the query */
} ToolBody;

/* Each tool's REST request: every tool is named here once, and one that is not is no tool. */
typedef struct ToolRest {
        const char *name;
        RouteId route;
        const char *method;
        const char *path;   /* the whole path; NULL: a session's, /v1/sessions/<session_id> then suffix */
        const char *suffix; /* and then the file's path, for a tool that names one ("/files/") */
        bool file;
        ToolBody body;
} ToolRest;

static const ToolRest tool_rests[] = {
        {"execute", ROUTE_EXECUTE, "POST", "/v1/execute", NULL, false, TOOL_BODY_JSON},
        {"session_create", ROUTE_SESSIONS, "POST", "/v1/sessions", NULL, false, TOOL_BODY_JSON},
        {"runtimes", ROUTE_RUNTIMES, "GET", "/v1/runtimes", NULL, false, TOOL_BODY_NONE},
        {"session_run", ROUTE_SESSIONS, "POST", NULL, "/run", false, TOOL_BODY_JSON},
        {"session_exec", ROUTE_SESSIONS, "POST", NULL, "/exec", false, TOOL_BODY_JSON},
        {"session_write_file", ROUTE_SESSIONS, "PUT", NULL, "/files/", true, TOOL_BODY_FILE},
        {"session_read_file", ROUTE_SESSIONS, "GET", NULL, "/files/", true, TOOL_BODY_NONE},
        {"session_list_files", ROUTE_SESSIONS, "GET", NULL, "/files", false, TOOL_BODY_QUERY},
        {"session_delete", ROUTE_SESSIONS, "DELETE", NULL, "", false, TOOL_BODY_NONE},
};

static const ToolRest *tool_rest_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(tool_rests); i++)
                if (strcmp(tool_rests[i].name, name) == 0)
                        return &tool_rests[i];
        return NULL;
}

/* The request's path: fixed, or /v1/sessions/<session_id>... with the file's path. */
static int rest_path(const ToolRest *t, struct json_object *args, McpRest *rest, Error *reterr) {
        const char *id, *path = NULL;

        if (t->path) {
                (void) snprintf(rest->raw_path, sizeof(rest->raw_path), "%s", t->path);
                return 0;
        }
        id = arg_string(args, "session_id");
        if (!id)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_SESSION_ID);
        if (t->file) {
                /* Absent, empty, not a string or cut by a NUL: no file of the working directory. */
                path = arg_string(args, "path");
                if (!path || !path[0])
                        return error_set_status(reterr, 400, -EINVAL, MSG_SESSION_PATH);
        }
        return session_path(rest, id, t->suffix, path);
}

int mcp_tool_rest(const char *name, struct json_object *args, McpRest *ret, Error *reterr) {
        const ToolRest *t = tool_rest_find(name);
        McpRest rest = {};
        int r;

        if (!t)
                return -ENOENT;
        rest.route = t->route;
        rest.method = t->method;
        r = rest_path(t, args, &rest, reterr);
        if (r >= 0) {
                switch (t->body) {
                case TOOL_BODY_JSON:
                        r = json_body(&rest, args, t->path ? NULL : "session_id");
                        break;
                case TOOL_BODY_FILE:
                        r = file_body(&rest, args, reterr);
                        break;
                case TOOL_BODY_QUERY:
                        r = dir_query(&rest, args, reterr);
                        break;
                case TOOL_BODY_NONE:
                        break;
                }
        }
        if (r == -ENAMETOOLONG)
                r = error_set_status(reterr, 400, -EINVAL, MSG_URI_TOO_LONG);
        if (r < 0) {
                mcp_rest_done(&rest);
                return r;
        }
        *ret = rest;
        return 0;
}

void mcp_rest_done(McpRest *rest) {
        rest->body = mfree(rest->body);
        rest->body_len = 0;
}
