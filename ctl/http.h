/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxctl's HTTP client: one request to the service's URL through libcurl, plain HTTP, no
 * redirect or proxy followed. */

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

/* METHOD url->prefix + path, with body (content_type given when body is not NULL) and, when token
 * is not NULL, "Authorization: Bearer TOKEN". Fills *ret (free with http_response_done()) with any
 * status the server answers; -errno with words in *reterr when no answer could be had (-EFBIG: more
 * than 256 MiB, -ETIMEDOUT: none within 15 minutes, -EPROTO: none that is HTTP). */
int http_request(const HttpUrl *url, const char *method, const char *path, const char *token, const char *content_type,
                 const char *body, size_t body_len, HttpResponse *ret, Error *reterr);

void http_response_done(HttpResponse *r);
