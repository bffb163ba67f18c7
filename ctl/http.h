/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxctl's HTTP client: one HTTP/1.0 request per connection ("Connection: close"), the answer
 * read to EOF. sandboxd listens on plain HTTP on a local address; a client this small, with no
 * keep-alive, TLS, redirects or chunked bodies, is all sandboxctl needs. */

#include <stddef.h>

typedef struct Error Error;

typedef struct HttpUrl {
        char host[256];   /* a name, an IPv4 literal, or an IPv6 literal without its brackets */
        char port[8];     /* "80" when the URL names none */
        char prefix[256]; /* a path the service lives under, without its trailing '/'; "" for none */
} HttpUrl;

typedef struct HttpResponse {
        int status;
        char request_id[64]; /* X-Request-Id; "" when absent */
        char *body;          /* NUL-terminated (the body may hold NULs of its own); owned */
        size_t body_len;
} HttpResponse;

/* Parses "http://HOST[:PORT][/PREFIX]" (HOST: a name, a.b.c.d or [v6]) into *ret. -EINVAL for any
 * other scheme, an empty or overlong host, a bad port, a query or fragment. Pure. */
int http_url_parse(const char *url, HttpUrl *ret);

/* Parses a whole response (what the server sent until it closed): the status line, the headers
 * and where the body lies in buf. Content-Length, when present, must not exceed what arrived (a
 * cut answer is -EPROTO); a chunked body, which a server must not send to HTTP/1.0, is -EPROTO
 * too. Fills status, request_id, and *ret_body_offset and *ret_body_len (ret->body is left alone).
 * Pure. */
int http_response_parse(const char *buf, size_t len, HttpResponse *ret, size_t *ret_body_offset, size_t *ret_body_len);

/* METHOD url->prefix + path, with body (content_type given when body is not NULL) and, when token
 * is not NULL, "Authorization: Bearer TOKEN". Fills *ret (free with http_response_done()) with any
 * status the server answers; -errno with words in *reterr when no answer could be had. */
int http_request(const HttpUrl *url, const char *method, const char *path, const char *token, const char *content_type,
                 const char *body, size_t body_len, HttpResponse *ret, Error *reterr);

void http_response_done(HttpResponse *r);
