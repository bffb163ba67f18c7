/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl/http.h"
#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/macro.h"

/* Connecting to a host that does not answer would otherwise take the kernel's two minutes. */
#define HTTP_CONNECT_TIMEOUT_MS (10 * 1000)
/* The longest a request may take: a session run's timeout may be 300 s, an execution waits up to
 * SANDBOXD_POOL_WAIT_S for a machine before its own 60 s. */
#define HTTP_ANSWER_TIMEOUT_MS (15 * 60 * 1000)
/* An execution's answer holds two capped streams and the returned files (8 MiB by default). */
#define HTTP_ANSWER_MAX ((size_t) 256 << 20)

static int url_host(const char *s, size_t len, HttpUrl *ret) {
        if (len == 0 || len >= sizeof(ret->host))
                return -EINVAL;
        for (size_t i = 0; i < len; i++)
                if (!(s[i] == '.' || s[i] == '-' || s[i] == ':' || s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
                      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
                        return -EINVAL;
        memcpy(ret->host, s, len);
        ret->host[len] = 0;
        return 0;
}

static int url_port(const char *s, size_t len, HttpUrl *ret) {
        unsigned long v = 0;

        if (len == 0 || len > 5)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        (void) snprintf(ret->port, sizeof(ret->port), "%lu", v);
        return 0;
}

int http_url_parse(const char *url, HttpUrl *ret) {
        HttpUrl u = {.port = "80"};
        const char *p, *end, *colon = NULL;
        size_t n;
        int r;

        if (strncasecmp(url, "http://", 7) != 0)
                return -EINVAL;
        p = url + 7;
        end = p + strcspn(p, "/?#");
        if (*p == '[') { /* [v6]:port */
                const char *close = memchr(p, ']', (size_t) (end - p));

                if (!close || !memchr(p, ':', (size_t) (close - p)))
                        return -EINVAL;
                r = url_host(p + 1, (size_t) (close - p - 1), &u);
                if (close + 1 < end && close[1] != ':')
                        return -EINVAL;
                colon = close + 1 < end ? close + 1 : NULL;
        } else {
                colon = memchr(p, ':', (size_t) (end - p));
                r = url_host(p, (size_t) ((colon ? colon : end) - p), &u);
                if (r >= 0 && strchr(u.host, ':'))
                        r = -EINVAL;
        }
        if (r < 0)
                return r;
        if (colon && url_port(colon + 1, (size_t) (end - colon - 1), &u) < 0)
                return -EINVAL;

        if (*end == '?' || *end == '#' || strpbrk(end, "?# \t\r\n"))
                return -EINVAL;
        n = strlen(end);
        while (n > 0 && end[n - 1] == '/')
                n--;
        if (n >= sizeof(u.prefix))
                return -EINVAL;
        memcpy(u.prefix, end, n);
        u.prefix[n] = 0;
        *ret = u;
        return 0;
}

/* The line starting at buf + *pos, without its "\r\n" or "\n"; *pos moves past it. -EPROTO when no
 * line end comes before len. */
static int next_line(const char *buf, size_t len, size_t *pos, const char **ret_line, size_t *ret_len) {
        const char *nl = memchr(buf + *pos, '\n', len - *pos);
        size_t n;

        if (!nl)
                return -EPROTO;
        n = (size_t) (nl - (buf + *pos));
        *ret_line = buf + *pos;
        *ret_len = n > 0 && nl[-1] == '\r' ? n - 1 : n;
        *pos += n + 1;
        return 0;
}

/* Whether the header line is NAME: VALUE for name (any case); *ret_value then points at VALUE,
 * without surrounding blanks, of *ret_len bytes. */
static bool header_is(const char *line, size_t len, const char *name, const char **ret_value, size_t *ret_len) {
        size_t n = strlen(name);

        if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0)
                return false;
        line += n + 1;
        len -= n + 1;
        while (len > 0 && (*line == ' ' || *line == '\t'))
                line++, len--;
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        *ret_value = line;
        *ret_len = len;
        return true;
}

static int parse_status_line(const char *line, size_t len, int *ret) {
        if (len < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[7] < '0' || line[7] > '9' || line[8] != ' ')
                return -EPROTO;
        for (size_t i = 9; i < 12; i++)
                if (line[i] < '0' || line[i] > '9')
                        return -EPROTO;
        if (len > 12 && line[12] != ' ')
                return -EPROTO;
        *ret = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
        return *ret >= 100 ? 0 : -EPROTO;
}

static int parse_length(const char *v, size_t n, size_t *ret) {
        size_t x = 0;

        if (n == 0 || n > 15)
                return -EPROTO;
        for (size_t i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9')
                        return -EPROTO;
                x = x * 10 + (size_t) (v[i] - '0');
        }
        *ret = x;
        return 0;
}

int http_response_parse(const char *buf, size_t len, HttpResponse *ret, size_t *ret_body_offset, size_t *ret_body_len) {
        size_t pos = 0, n, vlen, content_length = SIZE_MAX;
        char request_id[sizeof(ret->request_id)] = "";
        const char *line, *v;
        int status, r;

        r = next_line(buf, len, &pos, &line, &n);
        if (r < 0)
                return r;
        r = parse_status_line(line, n, &status);
        if (r < 0)
                return r;
        for (;;) {
                r = next_line(buf, len, &pos, &line, &n);
                if (r < 0)
                        return r; /* the headers never ended */
                if (n == 0)
                        break;
                if (header_is(line, n, "Content-Length", &v, &vlen)) {
                        if (parse_length(v, vlen, &content_length) < 0)
                                return -EPROTO;
                } else if (header_is(line, n, "Transfer-Encoding", &v, &vlen)) {
                        if (!(vlen == 8 && strncasecmp(v, "identity", 8) == 0))
                                return -EPROTO;
                } else if (header_is(line, n, "X-Request-Id", &v, &vlen) && vlen < sizeof(request_id)) {
                        memcpy(request_id, v, vlen);
                        request_id[vlen] = 0;
                }
        }
        if (content_length != SIZE_MAX && content_length > len - pos)
                return -EPROTO;

        ret->status = status;
        memcpy(ret->request_id, request_id, sizeof(request_id));
        *ret_body_offset = pos;
        *ret_body_len = content_length != SIZE_MAX ? content_length : len - pos;
        return 0;
}

/* A connected socket to host:port, trying each address getaddrinfo() gives, each for a bounded
 * time. */
static int http_connect(const HttpUrl *url, Error *reterr) {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG}, *ai = NULL;
        int r, err = ECONNREFUSED;

        r = getaddrinfo(url->host, url->port, &hints, &ai);
        if (r != 0)
                return error_set(reterr, -EADDRNOTAVAIL, "cannot resolve '%s': %s", url->host, gai_strerror(r));
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
                cleanup_close int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                socklen_t sl = sizeof(err);

                if (fd < 0) {
                        err = errno;
                        continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
                        err = errno;
                        continue;
                }
                r = poll(&p, 1, HTTP_CONNECT_TIMEOUT_MS);
                if (r <= 0) {
                        err = r == 0 ? ETIMEDOUT : errno;
                        continue;
                }
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
                        err = errno;
                if (err != 0)
                        continue;
                freeaddrinfo(ai);
                return TAKE_FD(fd);
        }
        freeaddrinfo(ai);
        return error_set(reterr, -err, "cannot connect to %s port %s: %s", url->host, url->port, strerror(err));
}

/* Waits (bounded) until fd is ready for events; -ETIMEDOUT when it never is. */
static int wait_fd(int fd, short events) {
        struct pollfd p = {.fd = fd, .events = events};
        int r;

        do
                r = poll(&p, 1, HTTP_ANSWER_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        return r == 0 ? -ETIMEDOUT : 0;
}

static int send_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

                if (k < 0 && errno == EAGAIN) {
                        int r = wait_fd(fd, POLLOUT);

                        if (r < 0)
                                return r;
                        continue;
                }
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int format_head(const HttpUrl *url, const char *method, const char *path, const char *token, const char *content_type,
                       size_t body_len, bool has_body, char **ret) {
        bool v6 = strchr(url->host, ':');
        char length[48] = "";

        if (has_body)
                (void) snprintf(length, sizeof(length), "Content-Length: %zu\r\n", body_len);
        if (!has_body)
                content_type = NULL;
        if (asprintf(ret,
                     "%s %s%s HTTP/1.0\r\n"
                     "Host: %s%s%s:%s\r\n"
                     "User-Agent: sandboxctl\r\n"
                     "Accept: application/json\r\n"
                     "Connection: close\r\n"
                     "%s%s%s"
                     "%s%s%s"
                     "%s"
                     "\r\n",
                     method, url->prefix, path, v6 ? "[" : "", url->host, v6 ? "]" : "", url->port,
                     token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "",
                     content_type ? "Content-Type: " : "", content_type ? content_type : "", content_type ? "\r\n" : "",
                     length) < 0)
                return -ENOMEM;
        return 0;
}

int http_request(const HttpUrl *url, const char *method, const char *path, const char *token, const char *content_type,
                 const char *body, size_t body_len, HttpResponse *ret, Error *reterr) {
        cleanup_free char *head = NULL, *answer = NULL;
        cleanup_close int fd = -1;
        HttpResponse resp = {};
        size_t len = 0, off = 0, blen = 0;
        int r;

        /* A token or path that could end the line would let the caller write headers of its own. */
        if (strpbrk(path, "\r\n ") || (token && strpbrk(token, "\r\n")))
                return error_set(reterr, -EINVAL, "a path or token holds a line break or blank");
        r = format_head(url, method, path, token, content_type, body_len, body != NULL, &head);
        if (r < 0)
                return error_set(reterr, r, "out of memory");
        fd = http_connect(url, reterr);
        if (fd < 0)
                return fd;
        r = send_all(fd, head, strlen(head));
        if (r >= 0 && body)
                r = send_all(fd, body, body_len);
        if (r >= 0)
                /* Everything the server sends until it closes the connection. */
                r = fd_read_all(fd, HTTP_ANSWER_MAX, HTTP_ANSWER_TIMEOUT_MS, &answer, &len);
        if (r < 0)
                return error_set(reterr, r, "no answer from %s port %s: %s", url->host, url->port, strerror(-r));
        r = http_response_parse(answer, len, &resp, &off, &blen);
        if (r < 0)
                return error_set(reterr, r, "%s port %s sent an answer that is not HTTP", url->host, url->port);

        /* The body moves to the front of the buffer, which keeps the NUL the read put after it. */
        memmove(answer, answer + off, len - off);
        answer[blen] = 0;
        resp.body = TAKE_PTR(answer);
        resp.body_len = blen;
        *ret = resp;
        return 0;
}

void http_response_done(HttpResponse *r) {
        r->body = mfree(r->body);
        r->body_len = 0;
}
