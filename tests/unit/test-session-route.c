/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "fcgi/session-route.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

#define ID "session-abcdefghijkl"

static void test_parse(void) {
        static const struct {
                const char *path;
                int expected;
                SessionAction action;
                const char *file;
                const char *allow;
        } cases[] = {
                {"/v1/sessions", 0, SESSION_COLLECTION, "", "GET, POST"},
                {"/v1/sessions/" ID, 0, SESSION_ONE, "", "GET, DELETE"},
                {"/v1/sessions/" ID "/run", 0, SESSION_RUN, "", "POST"},
                {"/v1/sessions/" ID "/exec", 0, SESSION_EXEC, "", "POST"},
                {"/v1/sessions/" ID "/pause", 0, SESSION_PAUSE, "", "POST"},
                {"/v1/sessions/" ID "/resume", 0, SESSION_RESUME, "", "POST"},
                {"/v1/sessions/" ID "/files", 0, SESSION_FILES, "", "GET"},
                {"/v1/sessions/" ID "/files/", 0, SESSION_FILES, "", "GET"},
                {"/v1/sessions/" ID "/files/a/b.csv", 0, SESSION_FILE, "a/b.csv", "GET, PUT, DELETE"},
                /* Decoded, not normalized: the caller sees the climb and refuses it. */
                {"/v1/sessions/" ID "/files/..%2F..%2Fetc%2Fpasswd", 0, SESSION_FILE, "../../etc/passwd", "GET, PUT, DELETE"},
                {"/v1/sessions/" ID "/files/../x", 0, SESSION_FILE, "../x", "GET, PUT, DELETE"},
                {"/v1/sessions/" ID "/files/a%20b", 0, SESSION_FILE, "a b", "GET, PUT, DELETE"},
                {"/v1/sessions/" ID "/files/a%00b", -ENOENT, SESSION_FILE, "", NULL},
                {"/v1/sessions/" ID "/files/a%zz", -ENOENT, SESSION_FILE, "", NULL},
                {"/v1/sessions/" ID "/files/a%2", -ENOENT, SESSION_FILE, "", NULL},
                {"/session/" ID "/run", 0, SESSION_RUN, "", "POST"},
                {"/session/" ID "/exec", 0, SESSION_EXEC, "", "POST"},
                {"/session/" ID "/pause", -ENOENT, SESSION_RUN, "", NULL},
                {"/session/" ID, -ENOENT, SESSION_RUN, "", NULL},
                {"/session", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessions/", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessions//run", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessions/" ID "/run/", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessions/" ID "/nope", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessions/" ID "/run/x", -ENOENT, SESSION_RUN, "", NULL},
                {"/v1/sessionsx", -ENOENT, SESSION_RUN, "", NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                SessionRoute r;
                int got = session_route_parse(cases[i].path, &r);

                tap_is_int(got, cases[i].expected, "%s: %s", cases[i].path, cases[i].expected == 0 ? "a route" : "none");
                if (got != 0 || cases[i].expected != 0)
                        continue;
                tap_is_int(r.action, cases[i].action, "%s: its action", cases[i].path);
                tap_is_str(r.path, cases[i].file, "%s: its file path", cases[i].path);
                tap_is_str(r.allow, cases[i].allow, "%s: its methods", cases[i].path);
                if (cases[i].action != SESSION_COLLECTION)
                        tap_is_str(r.id, ID, "%s: the id", cases[i].path);
        }
}

static void test_allows(void) {
        SessionRoute r;

        (void) session_route_parse("/v1/sessions/" ID "/files/x", &r);
        tap_ok(session_route_allows(&r, "GET") && session_route_allows(&r, "PUT") && session_route_allows(&r, "DELETE"), "a file: GET, PUT, DELETE");
        tap_ok(!session_route_allows(&r, "POST") && !session_route_allows(&r, "PU") && !session_route_allows(&r, "get"), "a file: nothing else");
        (void) session_route_parse("/v1/sessions", &r);
        tap_ok(session_route_allows(&r, "POST") && !session_route_allows(&r, "DELETE"), "the collection: GET and POST only");
}

static void test_query(void) {
        char v[64];

        tap_is_int(query_get("dir=a%2Fb&x=1", "dir", v, sizeof(v)), 1, "dir first: found");
        tap_is_str(v, "a/b", "dir first: decoded");
        tap_is_int(query_get("x=1&dir=a+b", "dir", v, sizeof(v)), 1, "dir last: found");
        tap_is_str(v, "a b", "dir last: '+' is a space");
        tap_is_int(query_get("xdir=1", "dir", v, sizeof(v)), 0, "a longer key is another key");
        tap_is_int(query_get("", "dir", v, sizeof(v)), 0, "an empty query has none");
        tap_is_int(query_get("dir", "dir", v, sizeof(v)), 1, "a key without a value: found");
        tap_is_str(v, "", "a key without a value: empty");
        tap_is_int(query_get("dir=%zz", "dir", v, sizeof(v)), -EINVAL, "a bad escape: refused");
        tap_is_int(query_get("dir=%00", "dir", v, sizeof(v)), -EINVAL, "a NUL: refused");
        tap_is_int(query_get("dir=abcdef", "dir", v, 4), -EINVAL, "too long: refused, not cut");
}

static struct json_object *parse(const char *s) {
        return json_tokener_parse(s);
}

static void test_create(void) {
        static const struct {
                const char *body;
                int expected;
                long long ttl;
                const char *message;
        } cases[] = {
                {NULL, 0, 600, NULL},
                {"{}", 0, 600, NULL},
                {"{\"ttl_s\": 1}", 0, 1, NULL},
                {"{\"ttl_s\": 86400}", 0, 86400, NULL},
                {"{\"ttl_s\": null}", 0, 600, NULL},
                {"{\"ttl_s\": 0}", -EINVAL, 0, "ttl_s must be between 1 and 86400"},
                {"{\"ttl_s\": 86401}", -EINVAL, 0, "ttl_s must be between 1 and 86400"},
                {"{\"ttl_s\": -5}", -EINVAL, 0, "ttl_s must be between 1 and 86400"},
                {"{\"ttl_s\": \"60\"}", -EINVAL, 0, "ttl_s must be between 1 and 86400"},
                {"{\"ttl_s\": 1.5}", -EINVAL, 0, "ttl_s must be between 1 and 86400"},
                {"{\"files\": [{\"path\": \"a.csv\", \"content_b64\": \"eA==\"}]}", 0, 600, NULL},
                {"{\"files\": [{\"path\": \"../a\", \"content_b64\": \"eA==\"}]}", -EINVAL, 0, NULL},
                {"{\"files\": \"x\"}", -EINVAL, 0, NULL},
                {"{\"network\": {\"allow\": [\"pypi.org\", \"files.pythonhosted.org\"]}}", 0, 600, NULL},
                {"{\"network\": {\"allow\": [\"pypi.org\", \"10.0.0.1\"]}}", -EINVAL, 0,
                 "network.allow[1] must be a host name or *.suffix, with an optional :port"},
                {"{\"network\": []}", -EINVAL, 0, "network must be an object whose \"allow\" is an array of 1 to 32 host names"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *body = cases[i].body ? parse(cases[i].body) : NULL;
                SessionCreate c = {};
                Error err = {};
                int r = validate_session_create(body, &validate_execute_limits, &c, &err);

                tap_is_int(r, cases[i].expected, "create %s", cases[i].body ? cases[i].body : "(no body)");
                if (r == 0) {
                        tap_is_int(c.ttl_s, cases[i].ttl, "create %s: ttl_s", cases[i].body ? cases[i].body : "(no body)");
                        tap_ok((c.network_allow != NULL) == (cases[i].body && strstr(cases[i].body, "network")), "create %s: network",
                               cases[i].body ? cases[i].body : "(no body)");
                } else {
                        tap_is_int(err.status, 400, "create %s: 400", cases[i].body);
                        if (cases[i].message)
                                tap_is_str(err.message, cases[i].message, "create %s: the message", cases[i].body);
                }
                json_object_put(body);
        }
}

static void test_run(void) {
        static const struct {
                const char *body;
                bool exec;
                int expected;
                unsigned timeout;
                const char *message;
        } cases[] = {
                {"{\"language\": \"python\", \"code\": \"print(1)\"}", false, 0, 30, NULL},
                {"{\"language\": \"node\", \"code\": \"1\", \"timeout\": 10}", false, 0, 10, NULL},
                {"{\"language\": \"bash\", \"code\": \"true\", \"timeout\": 0}", false, 0, 30, NULL},
                {"{\"language\": \"bash\", \"code\": \"true\", \"timeout\": 300}", false, 0, 300, NULL},
                {"{\"language\": \"bash\", \"code\": \"true\", \"timeout\": 301}", false, -EINVAL, 0, "timeout must be between 1 and 300"},
                {"{\"language\": \"bash\", \"code\": \"true\", \"timeout\": -1}", false, -EINVAL, 0, "timeout must be between 1 and 300"},
                {"{\"language\": \"bash\", \"code\": \"true\", \"timeout\": \"5\"}", false, -EINVAL, 0, "timeout must be between 1 and 300"},
                {"{\"language\": \"ruby\", \"code\": \"1\"}", false, -EINVAL, 0, "unsupported language \"ruby\""},
                {"{\"code\": \"1\"}", false, -EINVAL, 0, "language is required: \"python\", \"node\" or \"bash\""},
                {"{\"language\": 1, \"code\": \"1\"}", false, -EINVAL, 0, "language is required: \"python\", \"node\" or \"bash\""},
                {"{\"language\": \"python\"}", false, -EINVAL, 0, "code is required and must be a string"},
                {"{\"language\": \"python\", \"code\": 5}", false, -EINVAL, 0, "code is required and must be a string"},
                {"{\"language\": \"bash\", \"code\": \"a\\u0000b\"}", false, -EINVAL, 0, "bash code must not contain NUL characters"},
                {"{\"language\": \"python\", \"code\": \"a\\u0000b\"}", false, 0, 30, NULL},
                {"{\"command\": \"ls\"}", true, 0, 30, NULL},
                {"{\"command\": \"ls\", \"language\": \"ruby\"}", true, 0, 30, NULL},
                {"{\"code\": \"ls\"}", true, -EINVAL, 0, "command is required and must be a string"},
                {"{\"command\": \"a\\u0000b\"}", true, -EINVAL, 0, "an exec's code must not contain NUL characters"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct json_object *body = parse(cases[i].body);
                SessionRun run = {};
                Error err = {};
                int r = validate_session_run(body, cases[i].exec, 1 << 20, 300, &run, &err);

                tap_is_int(r, cases[i].expected, "%s %s", cases[i].exec ? "exec" : "run", cases[i].body);
                if (r == 0)
                        tap_is_int(run.timeout_s, cases[i].timeout, "%s: timeout", cases[i].body);
                else {
                        tap_is_int(err.status, 400, "%s: 400", cases[i].body);
                        tap_is_str(err.message, cases[i].message, "%s: the message", cases[i].body);
                }
                json_object_put(body);
        }
}

int main(void) {
        test_parse();
        test_allows();
        test_query();
        test_create();
        test_run();
        return tap_done();
}
