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

static const char *arg_string(struct json_object *args, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
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

/* session_write_file's content: text as it is, or base64 decoded. */
static int file_body(McpRest *rest, struct json_object *args, Error *reterr) {
        const char *text = arg_string(args, "content"), *b64 = arg_string(args, "content_b64");
        uint8_t *raw = NULL;
        size_t len = 0;

        if (!text == !b64)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_CONTENT);
        if (text) {
                rest->body = strdup(text);
                rest->body_len = strlen(text);
                return rest->body ? 0 : -ENOMEM;
        }
        if (b64_decode(b64, strlen(b64), &raw, &len) < 0)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_CONTENT_B64);
        /* NUL-terminated as a request's body is. */
        rest->body = realloc(raw, len + 1);
        if (!rest->body) {
                free(raw);
                return -ENOMEM;
        }
        rest->body[len] = 0;
        rest->body_len = len;
        return 0;
}

/* The session tools: /v1/sessions/<session_id>/... */
static int session_rest(const char *name, struct json_object *args, McpRest *rest, Error *reterr) {
        const char *id = arg_string(args, "session_id"), *path = arg_string(args, "path"), *dir;
        char *q = rest->query;
        bool file = strcmp(name, "session_write_file") == 0 || strcmp(name, "session_read_file") == 0;
        int r;

        if (!id)
                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_SESSION_ID);
        if (file && (!path || !path[0]))
                return error_set_status(reterr, 400, -EINVAL, MSG_SESSION_PATH);
        rest->route = ROUTE_SESSIONS;
        if (strcmp(name, "session_run") == 0 || strcmp(name, "session_exec") == 0) {
                rest->method = "POST";
                r = session_path(rest, id, name[8] == 'r' ? "/run" : "/exec", NULL);
                return r < 0 ? r : json_body(rest, args, "session_id");
        }
        if (strcmp(name, "session_write_file") == 0) {
                rest->method = "PUT";
                r = session_path(rest, id, "/files/", path);
                return r < 0 ? r : file_body(rest, args, reterr);
        }
        if (strcmp(name, "session_read_file") == 0) {
                rest->method = "GET";
                return session_path(rest, id, "/files/", path);
        }
        if (strcmp(name, "session_list_files") == 0) {
                rest->method = "GET";
                if (json_object_object_get_ex(args, "dir", NULL)) {
                        dir = arg_string(args, "dir");
                        if (!dir)
                                return error_set_status(reterr, 400, -EINVAL, MSG_MCP_DIR);
                        q = stpcpy(q, "dir=");
                        r = encode(dir, false, &q, rest->query + sizeof(rest->query));
                        if (r < 0)
                                return r;
                }
                return session_path(rest, id, "/files", NULL);
        }
        rest->method = "DELETE";
        return session_path(rest, id, "", NULL);
}

int mcp_tool_rest(const char *name, struct json_object *args, McpRest *ret, Error *reterr) {
        McpRest rest = {};
        bool known = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(tools); i++)
                known = known || strcmp(tools[i].name, name) == 0;
        if (!known)
                return -ENOENT;
        if (strcmp(name, "execute") == 0) {
                rest = (McpRest){.route = ROUTE_EXECUTE, .method = "POST"};
                (void) snprintf(rest.raw_path, sizeof(rest.raw_path), "/v1/execute");
                r = json_body(&rest, args, NULL);
        } else if (strcmp(name, "session_create") == 0) {
                rest = (McpRest){.route = ROUTE_SESSIONS, .method = "POST"};
                (void) snprintf(rest.raw_path, sizeof(rest.raw_path), "/v1/sessions");
                r = json_body(&rest, args, NULL);
        } else if (strcmp(name, "runtimes") == 0) {
                rest = (McpRest){.route = ROUTE_RUNTIMES, .method = "GET"};
                (void) snprintf(rest.raw_path, sizeof(rest.raw_path), "/v1/runtimes");
                r = 0;
        } else
                r = session_rest(name, args, &rest, reterr);
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
