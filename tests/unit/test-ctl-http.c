/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "ctl/http.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_url(void) {
        static const struct {
                const char *url;
                const char *host, *port, *prefix; /* host NULL: -EINVAL */
        } cases[] = {
                {"http://127.0.0.1:8080", "127.0.0.1", "8080", ""},
                {"http://127.0.0.1:8080/", "127.0.0.1", "8080", ""},
                {"HTTP://localhost", "localhost", "80", ""},
                {"http://sandbox.example:9000/api/", "sandbox.example", "9000", "/api"},
                {"http://[::1]:8080", "::1", "8080", ""},
                {"http://[fe80::1]/x//", "fe80::1", "80", "/x"},
                {"http://[::1]", "::1", "80", ""},
                {"https://127.0.0.1", NULL, NULL, NULL},
                {"127.0.0.1:8080", NULL, NULL, NULL},
                {"http://", NULL, NULL, NULL},
                {"http://:8080", NULL, NULL, NULL},
                {"http://host:0", NULL, NULL, NULL},
                {"http://host:65536", NULL, NULL, NULL},
                {"http://host:80x", NULL, NULL, NULL},
                {"http://host:", NULL, NULL, NULL},
                {"http://::1:8080", NULL, NULL, NULL},
                {"http://[::1", NULL, NULL, NULL},
                {"http://[::1]x", NULL, NULL, NULL},
                {"http://[1.2.3.4]", NULL, NULL, NULL},
                {"http://user@host", NULL, NULL, NULL},
                {"http://host/a?b", NULL, NULL, NULL},
                {"http://host#x", NULL, NULL, NULL},
                {"http://host/a b", NULL, NULL, NULL},
                {"http://ho\tst", NULL, NULL, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                HttpUrl u = {};
                int r = http_url_parse(cases[i].url, &u);

                if (!cases[i].host) {
                        tap_is_int(r, -EINVAL, "url '%s' is refused", cases[i].url);
                        continue;
                }
                tap_ok(r == 0 && strcmp(u.host, cases[i].host) == 0 && strcmp(u.port, cases[i].port) == 0 &&
                               strcmp(u.prefix, cases[i].prefix) == 0,
                       "url '%s' -> host '%s' port '%s' prefix '%s' (got %i '%s' '%s' '%s')", cases[i].url, cases[i].host, cases[i].port,
                       cases[i].prefix, r, u.host, u.port, u.prefix);
        }
}

static void test_response(void) {
        static const struct {
                const char *name;
                const char *raw;
                int status; /* 0: -EPROTO */
                const char *body;
                const char *request_id;
        } cases[] = {
                {"nginx's answer", "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nContent-Length: 10\r\n"
                                   "Connection: close\r\nX-Request-Id: 0123456789abcdef0123456789abcdef\r\n\r\n{\"warm\":3}",
                 200, "{\"warm\":3}", "0123456789abcdef0123456789abcdef"},
                {"no Content-Length: to EOF", "HTTP/1.0 404 Not Found\r\n\r\n{\"error\":\"not found\"}", 404, "{\"error\":\"not found\"}", ""},
                {"bare LF line ends", "HTTP/1.1 503 Service Unavailable\nx-request-id: ab\n\nbody", 503, "body", "ab"},
                {"header names in any case, blanks around values", "HTTP/1.1 200 OK\r\ncontent-length:  2 \r\n\r\nok", 200, "ok", ""},
                {"bytes past Content-Length are not the body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", 200, "ok", ""},
                {"empty body", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 204, "", ""},
                {"status without a reason", "HTTP/1.1 200\r\n\r\nx", 200, "x", ""},
                {"identity transfer encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nx", 200, "x", ""},
                {"cut short of Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 0, NULL, NULL},
                {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 0, NULL, NULL},
                {"headers never end", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", 0, NULL, NULL},
                {"nothing", "", 0, NULL, NULL},
                {"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, NULL, NULL},
                {"HTTP/2 status line", "HTTP/2 200\r\n\r\n", 0, NULL, NULL},
                {"status not three digits", "HTTP/1.1 20 OK\r\n\r\n", 0, NULL, NULL},
                {"status below 100", "HTTP/1.1 099 X\r\n\r\n", 0, NULL, NULL},
                {"status glued to its reason", "HTTP/1.1 200OK\r\n\r\n", 0, NULL, NULL},
                {"bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, NULL, NULL},
                {"huge Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", 0, NULL, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                HttpResponse resp = {};
                size_t off = 0, len = 0;
                int r = http_response_parse(cases[i].raw, strlen(cases[i].raw), &resp, &off, &len);

                if (!cases[i].status) {
                        tap_is_int(r, -EPROTO, "%s: refused", cases[i].name);
                        continue;
                }
                tap_ok(r == 0 && resp.status == cases[i].status && len == strlen(cases[i].body) &&
                               memcmp(cases[i].raw + off, cases[i].body, len) == 0 && strcmp(resp.request_id, cases[i].request_id) == 0,
                       "%s: status %i, body '%s', request id '%s' (got %i, %i, '%.*s', '%s')", cases[i].name, cases[i].status,
                       cases[i].body, cases[i].request_id, r, resp.status, (int) len, r == 0 ? cases[i].raw + off : "", resp.request_id);
        }
}

/* The body may hold NULs (a JSON "\u0000" is escaped, but a server's error page need not be). */
static void test_response_binary(void) {
        static const char raw[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\0b";
        HttpResponse resp = {};
        size_t off = 0, len = 0;
        int r = http_response_parse(raw, sizeof(raw) - 1, &resp, &off, &len);

        tap_ok(r == 0 && len == 3 && memcmp(raw + off, "a\0b", 3) == 0, "a body with a NUL is kept whole");
}

int main(void) {
        test_url();
        test_response();
        test_response_binary();
        return tap_done();
}
