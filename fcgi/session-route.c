/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "fcgi/messages.h"
#include "fcgi/session-route.h"
#include "lib/json-util.h"
#include "nspawn/broker/broker-proto.h"

static int hex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int percent_decode(const char *s, size_t n, bool plus_is_space, char *ret, size_t size) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (c == '%') {
                        if (i + 2 >= n)
                                return -EINVAL;
                        if (hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
                                return -EINVAL;
                        c = (char) (hex(s[i + 1]) * 16 + hex(s[i + 2]));
                        i += 2;
                } else if (c == '+' && plus_is_space)
                        c = ' ';
                if (c == 0)
                        return -EINVAL;
                if (k + 1 >= size)
                        return -ENAMETOOLONG;
                ret[k++] = c;
        }
        if (size == 0)
                return -ENAMETOOLONG;
        ret[k] = 0;
        return 0;
}

int query_get(const char *query, const char *key, char *ret, size_t size) {
        size_t kl = strlen(key);

        for (const char *p = query; p && *p;) {
                const char *end = strchr(p, '&');
                size_t n = end ? (size_t) (end - p) : strlen(p);

                if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
                        return percent_decode(p + kl + 1, n - kl - 1, true, ret, size) < 0 ? -EINVAL : 1;
                if (n == kl && strncmp(p, key, kl) == 0) {
                        if (size == 0)
                                return -EINVAL;
                        ret[0] = 0;
                        return 1;
                }
                p = end ? end + 1 : NULL;
        }
        return 0;
}

/* One path segment of at most size - 1 bytes into ret: its length, or -ENOENT. */
static int segment(const char **p, char *ret, size_t size) {
        const char *s = *p, *end;
        size_t n;

        if (*s != '/')
                return -ENOENT;
        s++;
        end = strchr(s, '/');
        n = end ? (size_t) (end - s) : strlen(s);
        if (n == 0 || n >= size)
                return -ENOENT;
        memcpy(ret, s, n);
        ret[n] = 0;
        *p = s + n;
        return (int) n;
}

int session_route_parse(const char *raw_path, SessionRoute *ret) {
        static const struct {
                const char *word;
                SessionAction action;
                bool seed; /* also under reference 002's /session */
        } actions[] = {
                {"run", SESSION_RUN, true},
                {"exec", SESSION_EXEC, true},
                {"pause", SESSION_PAUSE, false},
                {"resume", SESSION_RESUME, false},
                {"files", SESSION_FILES, false},
        };
        const char *p;
        char word[16];
        bool seed;

        *ret = (SessionRoute){};
        if (strcmp(raw_path, "/v1/sessions") == 0) {
                ret->action = SESSION_COLLECTION;
                ret->allow = "GET, POST";
                return 0;
        }
        if (strncmp(raw_path, "/v1/sessions/", 13) == 0)
                p = raw_path + 12, seed = false;
        else if (strncmp(raw_path, "/session/", 9) == 0)
                p = raw_path + 8, seed = true;
        else
                return -ENOENT;
        if (segment(&p, ret->id, sizeof(ret->id)) < 0)
                return -ENOENT;
        if (*p == 0) {
                if (seed)
                        return -ENOENT;
                ret->action = SESSION_ONE;
                ret->allow = "GET, DELETE";
                return 0;
        }
        if (segment(&p, word, sizeof(word)) < 0)
                return -ENOENT;
        for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
                if (strcmp(word, actions[i].word) != 0 || (seed && !actions[i].seed))
                        continue;
                ret->action = actions[i].action;
                ret->allow = "POST";
                if (ret->action == SESSION_FILES && *p == '/' && p[1]) {
                        ret->action = SESSION_FILE;
                        ret->allow = "GET, PUT, DELETE";
                        return percent_decode(p + 1, strlen(p + 1), false, ret->path, sizeof(ret->path)) < 0 ? -ENOENT : 0;
                }
                if (ret->action == SESSION_FILES)
                        ret->allow = "GET";
                /* ".../files/" lists the working directory, as ".../files" does. */
                return *p == 0 || (ret->action == SESSION_FILES && strcmp(p, "/") == 0) ? 0 : -ENOENT;
        }
        return -ENOENT;
}

bool session_route_allows(const SessionRoute *route, const char *method) {
        size_t n = strlen(method);

        for (const char *a = route->allow; a && *a;) {
                const char *end = strchr(a, ',');
                size_t k = end ? (size_t) (end - a) : strlen(a);

                if (k == n && strncmp(a, method, n) == 0)
                        return true;
                a = end ? end + 2 : NULL;
        }
        return false;
}

int validate_session_create(struct json_object *body, const ValidateLimits *limits, SessionCreate *ret, Error *reterr) {
        struct json_object *ttl = json_field(body, "ttl_s");
        SessionCreate c = {.ttl_s = SESSION_TTL_DEFAULT_S};
        int r;

        if (ttl) {
                errno = 0;
                c.ttl_s = json_object_get_int64(ttl);
                if (!json_object_is_type(ttl, json_type_int) || errno != 0 || c.ttl_s < 1 || c.ttl_s > SESSION_TTL_MAX_S)
                        return error_set_status(reterr, 400, -EINVAL, MSG_SESSION_TTL, SESSION_TTL_MAX_S);
        }
        if (body) {
                r = validate_files_field(body, limits, &c.files, reterr);
                if (r < 0)
                        return r;
                r = validate_network_field(body, &c.network_allow, reterr);
                if (r < 0)
                        return r;
        }
        *ret = c;
        return 0;
}

int validate_session_run(struct json_object *body, bool exec, size_t max_code_bytes, unsigned max_timeout_s, SessionRun *ret, Error *reterr) {
        struct json_object *code = json_field(body, exec ? "command" : "code"), *lang = json_field(body, "language"), *t = json_field(body, "timeout");
        SessionRun run = {.timeout_s = SESSION_RUN_TIMEOUT_DEFAULT_S};

        if (!exec) {
                if (!lang || !json_object_is_type(lang, json_type_string))
                        return error_set_status(reterr, 400, -EINVAL, MSG_SESSION_LANGUAGE);
                run.language = json_object_get_string(lang);
                if (strcmp(run.language, "python") != 0 && strcmp(run.language, "node") != 0 && strcmp(run.language, "bash") != 0)
                        return error_set_status(reterr, 400, -EINVAL, MSG_UNSUPPORTED_LANGUAGE, run.language);
        }
        if (!code || !json_object_is_type(code, json_type_string))
                return error_set_status(reterr, 400, -EINVAL, exec ? MSG_COMMAND_REQUIRED : MSG_CODE_REQUIRED);
        run.code = json_object_get_string(code);
        run.code_len = (size_t) json_object_get_string_len(code);
        if (run.code_len > max_code_bytes)
                return error_set_status(reterr, 400, -EINVAL, MSG_TOO_LARGE, exec ? "command" : "code", max_code_bytes);
        /* bash reads each code up to a NUL, and a command is one argument of sh. */
        if ((exec || strcmp(run.language, "bash") == 0) && memchr(run.code, 0, run.code_len))
                return error_set_status(reterr, 400, -EINVAL, MSG_CODE_NUL, exec ? "an exec's" : "bash");
        if (t) {
                int64_t v;

                errno = 0;
                v = json_object_get_int64(t);
                if (!json_object_is_type(t, json_type_int) || errno != 0 || v < 0 || v > (int64_t) max_timeout_s)
                        return error_set_status(reterr, 400, -EINVAL, MSG_SESSION_TIMEOUT, max_timeout_s);
                if (v > 0)
                        run.timeout_s = (unsigned) v;
        }
        if (run.timeout_s > max_timeout_s)
                run.timeout_s = max_timeout_s;
        *ret = run;
        return 0;
}
