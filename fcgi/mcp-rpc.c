/* SPDX-License-Identifier: MIT */
/* MCP's JSON-RPC, without the transport: which revisions are served, which origins may call, what a
 * message is, and how answers are made. Pure, so that each rule is tested on its own. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fcgi/mcp-rpc.h"
#include "fcgi/messages.h"
#include "lib/b64.h"
#include "lib/macro.h"

/* Newest first. 2026-07-28 and later have no sessions (Mcp-Session-Id), which this server keeps:
 * a client asking for one is offered the newest with them. 2024-10-07 is still in the TypeScript
 * SDK's list. */
static const char *const versions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"};

bool mcp_version_supported(const char *version) {
        if (!version)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(versions); i++)
                if (strcmp(versions[i], version) == 0)
                        return true;
        return false;
}

const char *mcp_version_negotiate(const char *requested) {
        for (size_t i = 0; requested && i < ELEMENTSOF(versions); i++)
                if (strcmp(versions[i], requested) == 0)
                        return versions[i];
        return versions[0];
}

bool mcp_version_stateless(const char *version) {
        /* Revisions are dates, YYYY-MM-DD: compared as text, they compare as dates. */
        return version && strlen(version) == strlen(MCP_PROTOCOL_STATELESS) && strcmp(version, MCP_PROTOCOL_STATELESS) >= 0;
}

const char *mcp_meta_version(struct json_object *params) {
        struct json_object *meta = NULL, *v = NULL;

        if (!json_object_object_get_ex(params, "_meta", &meta) || !json_object_object_get_ex(meta, MCP_META_VERSION, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

bool mcp_version_batches(const char *version) {
        return version && strcmp(version, "2025-03-26") == 0;
}

/* "http://localhost", "https://127.0.0.1:8080", "http://[::1]:1": loopback, any port. */
static bool origin_loopback(const char *origin) {
        static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
        const char *p;

        if (strncasecmp(origin, "http://", 7) == 0)
                p = origin + 7;
        else if (strncasecmp(origin, "https://", 8) == 0)
                p = origin + 8;
        else
                return false;
        for (size_t i = 0; i < ELEMENTSOF(hosts); i++) {
                size_t n = strlen(hosts[i]), digits;

                if (strncasecmp(p, hosts[i], n) != 0)
                        continue;
                if (p[n] == 0)
                        return true;
                if (p[n] != ':')
                        continue;
                digits = strspn(p + n + 1, "0123456789");
                return digits > 0 && digits <= 5 && p[n + 1 + digits] == 0;
        }
        return false;
}

/* Whether origin is one of list's entries (commas between, blanks around each ignored). */
static bool origin_listed(const char *origin, const char *list) {
        size_t len = strlen(origin);

        for (const char *p = list; p && *p;) {
                const char *end;
                size_t n;

                p += strspn(p, " \t,");
                end = p + strcspn(p, ",");
                n = (size_t) (end - p);
                while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                        n--;
                if (n > 0 && n == len && strncasecmp(p, origin, n) == 0)
                        return true;
                p = end;
        }
        return false;
}

bool mcp_origin_allowed(const char *origin, const char *extra) {
        if (!origin)
                return true; /* not a browser's request: no rebinding to fear */
        return origin_loopback(origin) || origin_listed(origin, extra);
}

static bool id_valid(struct json_object *id) {
        return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

int mcp_message_parse(struct json_object *msg, McpMessage *ret, struct json_object **ret_id, Error *reterr) {
        struct json_object *v = NULL, *id = NULL, *method = NULL, *params = NULL;
        bool has_id;

        if (!json_object_is_type(msg, json_type_object))
                return error_set(reterr, -EINVAL, "a JSON-RPC message must be an object");
        has_id = json_object_object_get_ex(msg, "id", &id);
        if (has_id && id_valid(id))
                *ret_id = id;
        if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
            strcmp(json_object_get_string(v), "2.0") != 0)
                return error_set(reterr, -EINVAL, "jsonrpc must be \"2.0\"");
        if (has_id && !id_valid(id))
                return error_set(reterr, -EINVAL, "id must be a string or an integer");

        if (!json_object_object_get_ex(msg, "method", &method)) {
                bool result = json_object_object_get_ex(msg, "result", NULL), error = json_object_object_get_ex(msg, "error", NULL);

                if (!has_id || result == error)
                        return error_set(reterr, -EINVAL, "a message must have a method, or an id and either a result or an error");
                *ret = (McpMessage){.kind = MCP_RESPONSE, .id = id};
                return 0;
        }
        if (!json_object_is_type(method, json_type_string))
                return error_set(reterr, -EINVAL, "method must be a string");
        /* Read as C reads it, "tools/list\u0000x" would be tools/list: no method has a NUL. */
        if (strlen(json_object_get_string(method)) != (size_t) json_object_get_string_len(method))
                return error_set(reterr, -EINVAL, "method must not contain a NUL");
        if (json_object_object_get_ex(msg, "params", &params) && !json_object_is_type(params, json_type_object))
                return error_set(reterr, -EINVAL, "params must be an object");
        *ret = (McpMessage){
                .kind = has_id ? MCP_REQUEST : MCP_NOTIFICATION,
                .method = json_object_get_string(method),
                .id = has_id ? id : NULL,
                .params = params,
        };
        return 0;
}

static struct json_object *envelope(struct json_object *id) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_object_object_add(o, "jsonrpc", json_object_new_string("2.0")) < 0 ||
            json_object_object_add(o, "id", json_object_get(id)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

struct json_object *mcp_result_new(struct json_object *id, struct json_object *result) {
        struct json_object *o = result ? envelope(id) : NULL;

        if (!o || json_object_object_add(o, "result", result) < 0) {
                json_object_put(o);
                json_object_put(result);
                return NULL;
        }
        return o;
}

struct json_object *mcp_error_new(struct json_object *id, int code, const char *message) {
        struct json_object *o = envelope(id), *e = json_object_new_object();

        if (!o || !e || json_object_object_add(e, "code", json_object_new_int(code)) < 0 ||
            json_object_object_add(e, "message", json_object_new_string(message)) < 0 || json_object_object_add(o, "error", e) < 0) {
                json_object_put(e);
                json_object_put(o);
                return NULL;
        }
        return o;
}

struct json_object *mcp_notification_new(const char *method, struct json_object *params) {
        struct json_object *o = json_object_new_object();

        if (!o || json_object_object_add(o, "jsonrpc", json_object_new_string("2.0")) < 0 ||
            json_object_object_add(o, "method", json_object_new_string(method)) < 0 || json_object_object_add(o, "params", params) < 0) {
                json_object_put(params);
                json_object_put(o);
                return NULL;
        }
        return o;
}

const char *mcp_image_type(const void *data, size_t len) {
        static const struct {
                const char *type;
                size_t offset;
                const char *magic;
                size_t len;
        } magic[] = {
                {"image/png", 0, "\x89PNG\r\n\x1a\n", 8},
                {"image/jpeg", 0, "\xff\xd8\xff", 3},
                {"image/gif", 0, "GIF87a", 6},
                {"image/gif", 0, "GIF89a", 6},
                /* RIFF, a size, then WEBP. */
                {"image/webp", 8, "WEBP", 4},
        };
        const uint8_t *p = data;

        for (size_t i = 0; i < ELEMENTSOF(magic); i++) {
                if (len < magic[i].offset + magic[i].len || memcmp(p + magic[i].offset, magic[i].magic, magic[i].len) != 0)
                        continue;
                if (magic[i].offset == 8 && memcmp(p, "RIFF", 4) != 0)
                        continue;
                return magic[i].type;
        }
        return NULL;
}

/* Whether a header's value is the body's: verbatim, or, in the form =?base64?...?= that a value
 * unfit for a header takes (and any value that looks like one), once decoded. */
static bool header_matches(const char *header, const char *value) {
        static const char prefix[] = "=?base64?", suffix[] = "?=";
        size_t n = strlen(header), plen = sizeof(prefix) - 1, slen = sizeof(suffix) - 1;
        uint8_t *decoded = NULL;
        size_t len = 0;
        bool same;

        if (n < plen + slen || strncmp(header, prefix, plen) != 0 || strcmp(header + n - slen, suffix) != 0)
                return strcmp(header, value) == 0;
        if (b64_decode(header + plen, n - plen - slen, &decoded, &len) < 0)
                return false;
        same = len == strlen(value) && memcmp(decoded, value, len) == 0;
        free(decoded);
        return same;
}

int mcp_headers_check(const McpMessage *m, const char *meta_version, const char *header_version, const char *header_method,
                      const char *header_name, Error *reterr) {
        struct json_object *name = NULL;

        if (!header_version)
                return error_set(reterr, -EINVAL, "Header mismatch: the MCP-Protocol-Version header is required");
        if (!meta_version)
                return error_set(reterr, -EINVAL, "Header mismatch: MCP-Protocol-Version is %s, but params._meta names no %s",
                                 header_version, MCP_META_VERSION);
        if (strcmp(header_version, meta_version) != 0)
                return error_set(reterr, -EINVAL, "Header mismatch: MCP-Protocol-Version header value '%s' does not match body value '%s'",
                                 header_version, meta_version);
        if (!header_method)
                return error_set(reterr, -EINVAL, "Header mismatch: the Mcp-Method header is required");
        if (strcmp(header_method, m->method) != 0)
                return error_set(reterr, -EINVAL, "Header mismatch: Mcp-Method header value '%s' does not match body value '%s'",
                                 header_method, m->method);
        if (strcmp(m->method, "tools/call") != 0)
                return 0;
        if (!json_object_object_get_ex(m->params, "name", &name) || !json_object_is_type(name, json_type_string))
                return 0; /* the call itself says what is wrong with it */
        if (!header_name)
                return error_set(reterr, -EINVAL, "Header mismatch: the Mcp-Name header is required for tools/call");
        if (!header_matches(header_name, json_object_get_string(name)))
                return error_set(reterr, -EINVAL, "Header mismatch: Mcp-Name header value '%s' does not match body value '%s'",
                                 header_name, json_object_get_string(name));
        return 0;
}

struct json_object *mcp_unsupported_version_new(struct json_object *id, const char *requested) {
        struct json_object *o = mcp_error_new(id, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version"), *e = NULL;
        struct json_object *data = json_object_new_object(), *supported = json_object_new_array();

        if (!o || !data || !supported || !json_object_object_get_ex(o, "error", &e) ||
            json_object_array_add(supported, json_object_new_string(MCP_PROTOCOL_STATELESS)) < 0)
                goto fail;
        for (size_t i = 0; i < ELEMENTSOF(versions); i++)
                if (json_object_array_add(supported, json_object_new_string(versions[i])) < 0)
                        goto fail;
        if (json_object_object_add(data, "supported", supported) < 0)
                goto fail;
        supported = NULL;
        if ((requested && json_object_object_add(data, "requested", json_object_new_string(requested)) < 0) ||
            json_object_object_add(e, "data", data) < 0)
                goto fail;
        return o;
fail:
        json_object_put(supported);
        json_object_put(data);
        json_object_put(o);
        return NULL;
}

struct json_object *mcp_server_info_new(void) {
        struct json_object *info = json_object_new_object();

        if (!info || json_object_object_add(info, "name", json_object_new_string(MCP_SERVER_NAME)) < 0 ||
            json_object_object_add(info, "version", json_object_new_string(MCP_SERVER_VERSION)) < 0) {
                json_object_put(info);
                return NULL;
        }
        return info;
}

int mcp_result_stateless(struct json_object *result) {
        struct json_object *meta = NULL, *info = NULL;

        if (!json_object_is_type(result, json_type_object))
                return -EINVAL;
        if (!json_object_object_get_ex(result, "resultType", NULL) &&
            json_object_object_add(result, "resultType", json_object_new_string("complete")) < 0)
                return -ENOMEM;
        if (!json_object_object_get_ex(result, "_meta", &meta) || !json_object_is_type(meta, json_type_object)) {
                meta = json_object_new_object();
                if (!meta || json_object_object_add(result, "_meta", meta) < 0) {
                        json_object_put(meta);
                        return -ENOMEM;
                }
        }
        info = mcp_server_info_new();
        if (!info || json_object_object_add(meta, MCP_META_SERVER_INFO, info) < 0) {
                json_object_put(info);
                return -ENOMEM;
        }
        return 0;
}

static int batch_out_append(McpBatchOut *b, const char *text, size_t len) {
        size_t need = b->len + len + 2;
        char sep = b->len == 0 ? '[' : ',';

        if (need > b->size) {
                size_t size = need < 2 * b->size ? 2 * b->size : need;
                char *t = realloc(b->text, size);

                if (!t)
                        return -ENOMEM;
                b->text = t;
                b->size = size;
        }
        b->text[b->len++] = sep;
        memcpy(b->text + b->len, text, len);
        b->len += len;
        return 0;
}

int mcp_batch_out_add(McpBatchOut *b, struct json_object *msg) {
        struct json_object *id = NULL, *e = NULL;
        const char *text;
        size_t len = 0;
        char message[sizeof(MSG_MCP_ANSWER_LARGE) + 16];
        int r;

        if (!msg)
                return -ENOMEM;
        text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (text && b->len + len + 2 > b->max) {
                (void) json_object_object_get_ex(msg, "id", &id);
                (void) snprintf(message, sizeof(message), MSG_MCP_ANSWER_LARGE, b->max);
                e = mcp_error_new(id, MCP_SERVER_ERROR, message);
                text = e ? json_object_to_json_string_length(e, JSON_C_TO_STRING_PLAIN, &len) : NULL;
        }
        r = text ? batch_out_append(b, text, len) : -ENOMEM;
        json_object_put(e);
        json_object_put(msg);
        return r;
}

void mcp_batch_out_done(McpBatchOut *b) {
        b->text = mfree(b->text);
        b->len = b->size = 0;
}
