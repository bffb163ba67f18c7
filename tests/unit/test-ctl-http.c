/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl/http.h"
#include "lib/error.h"
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

/* A one-answer HTTP server on 127.0.0.1, in a child: it reads the request (headers, then as many
 * body bytes as Content-Length says) and sends answer, or the request itself as the body of a 200
 * when answer is NULL, then closes. Its port goes into *ret_port. */
static pid_t serve_once(const char *answer, size_t len, char ret_port[8]) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof(sa);
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        pid_t pid;

        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0 ||
            getsockname(lfd, (struct sockaddr *) &sa, &sl) < 0)
                abort();
        (void) snprintf(ret_port, 8, "%u", ntohs(sa.sin_port));
        pid = fork();
        if (pid < 0)
                abort();
        if (pid == 0) {
                char req[8192], echo[8400];
                size_t n = 0;
                int fd = accept(lfd, NULL, NULL);
                char *end = NULL;

                while (fd >= 0 && n < sizeof(req) - 1) {
                        ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);
                        char *cl;

                        if (k <= 0)
                                break;
                        n += (size_t) k;
                        req[n] = 0;
                        end = strstr(req, "\r\n\r\n");
                        cl = strcasestr(req, "content-length:");
                        if (end && (!cl || cl > end || n >= (size_t) (end - req) + 4 + strtoul(cl + 15, NULL, 10)))
                                break;
                }
                if (!answer) {
                        int k = snprintf(echo, sizeof(echo), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", n, req);

                        answer = echo;
                        len = (size_t) k;
                }
                (void) !write(fd, answer, len);
                _exit(0);
        }
        (void) close(lfd);
        return pid;
}

static int ask(const char *answer, size_t len, const char *token, const char *body, HttpResponse *ret, Error *reterr) {
        HttpUrl url = {.host = "127.0.0.1", .prefix = "/api"};
        pid_t pid = serve_once(answer, len, url.port);
        int r = http_request(&url, body ? "POST" : "GET", "/v1/pool", token, "application/json", body, body ? strlen(body) : 0, ret, reterr);

        (void) waitpid(pid, NULL, 0);
        return r;
}

static void test_request(void) {
        static const struct {
                const char *name;
                const char *raw;
                int status; /* 0: no answer */
                const char *body;
                const char *request_id;
        } cases[] = {
                {"nginx's answer", "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nContent-Length: 10\r\n"
                                   "Connection: close\r\nX-Request-Id: 0123456789abcdef0123456789abcdef\r\n\r\n{\"warm\":3}",
                 200, "{\"warm\":3}", "0123456789abcdef0123456789abcdef"},
                {"no Content-Length: to EOF", "HTTP/1.0 404 Not Found\r\n\r\n{\"error\":\"not found\"}", 404, "{\"error\":\"not found\"}", ""},
                {"header names in any case, blanks around values", "HTTP/1.1 503 Busy\r\nx-request-id:  ab \r\n\r\nbusy", 503, "busy", "ab"},
                {"empty body", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", ""},
                {"cut short of Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 0, NULL, NULL},
                {"nothing", "", 0, NULL, NULL},
                {"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, NULL, NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                HttpResponse resp = {};
                Error err = {};
                int r = ask(cases[i].raw, strlen(cases[i].raw), NULL, NULL, &resp, &err);

                if (!cases[i].status) {
                        tap_ok(r < 0 && err.message[0], "%s: no answer, and words for it (%i: %s)", cases[i].name, r, err.message);
                        continue;
                }
                tap_ok(r == 0 && resp.status == cases[i].status && resp.body_len == strlen(cases[i].body) &&
                               memcmp(resp.body, cases[i].body, resp.body_len) == 0 && resp.body[resp.body_len] == 0 &&
                               strcmp(resp.request_id, cases[i].request_id) == 0,
                       "%s: status %i, body '%s', request id '%s' (got %i, %i, '%s', '%s')", cases[i].name, cases[i].status,
                       cases[i].body, cases[i].request_id, r, resp.status, r == 0 ? resp.body : "", resp.request_id);
                http_response_done(&resp);
        }
}

/* The body may hold NULs (a JSON "\u0000" is escaped, but a server's error page need not be). */
static void test_binary(void) {
        static const char raw[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na\0b";
        HttpResponse resp = {};
        Error err = {};
        int r = ask(raw, sizeof(raw) - 1, NULL, NULL, &resp, &err);

        tap_ok(r == 0 && resp.body_len == 3 && memcmp(resp.body, "a\0b", 3) == 0, "a body with a NUL is kept whole");
        http_response_done(&resp);
}

/* What goes out: the method, the prefix and path, the token, the body and its type. */
static void test_sent(void) {
        HttpResponse resp = {};
        Error err = {};
        int r = ask(NULL, 0, "sbx_tok", "{\"code\":\"print(1)\"}", &resp, &err);

        tap_is_int(r, 0, "the echo server answers");
        tap_ok(r == 0 && strncmp(resp.body, "POST /api/v1/pool HTTP/1.1\r\n", 28) == 0, "method, prefix and path on the request line");
        tap_ok(r == 0 && strstr(resp.body, "\r\nAuthorization: Bearer sbx_tok\r\n"), "the token as a Bearer header");
        tap_ok(r == 0 && strstr(resp.body, "\r\nContent-Type: application/json\r\n"), "the body's type");
        tap_ok(r == 0 && strstr(resp.body, "\r\n\r\n{\"code\":\"print(1)\"}"), "the body");
        http_response_done(&resp);

        /* Nothing listens on port 1 of loopback: the kernel's reason, in the words of any client. */
        err = (Error){};
        r = http_request(&(HttpUrl){.host = "127.0.0.1", .port = "1"}, "GET", "/v1/pool", NULL, NULL, NULL, 0, &resp, &err);
        tap_is_int(r, -ECONNREFUSED, "a closed port: -ECONNREFUSED");
        tap_is_str(err.message, "cannot connect to 127.0.0.1 port 1: Connection refused", "and its words");

        /* Refused before any connection: the port is one nothing listens on. */
        r = http_request(&(HttpUrl){.host = "127.0.0.1", .port = "1"}, "GET", "/v1/pool", "a\r\nX-Evil: 1", NULL, NULL, 0, &resp, &err);
        tap_is_int(r, -EINVAL, "a token that would end its header line is refused before anything is sent");
}

int main(void) {
        test_url();
        test_request();
        test_binary();
        test_sent();
        return tap_done();
}
