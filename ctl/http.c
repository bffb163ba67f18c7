/* SPDX-License-Identifier: MIT */
/* sandboxctl's requests to the service, through libcurl. */
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl/http.h"
#include "lib/alloc-util.h"
#include "lib/error.h"
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

/* What libcurl hands over, kept up to HTTP_ANSWER_MAX: the body, and the request id among the
 * headers. */
typedef struct Answer {
        char *data;
        size_t len, cap;
        char request_id[64];
        bool too_large;
} Answer;

static size_t on_body(char *p, size_t size, size_t n, void *userdata) {
        Answer *a = userdata;
        size_t k = size * n;

        if (k > HTTP_ANSWER_MAX - a->len) {
                a->too_large = true;
                return 0; /* libcurl ends the transfer */
        }
        while (a->cap - a->len < k + 1)
                if (ARRAY_GROW(a->data, a->cap, a->cap, k + 1 > 65536 ? k + 1 : 65536) < 0)
                        return 0;
        memcpy(a->data + a->len, p, k);
        a->len += k;
        a->data[a->len] = 0;
        return k;
}

/* One header line of the answer, "Name: value\r\n", not NUL-terminated. */
static size_t on_header(char *p, size_t size, size_t n, void *userdata) {
        static const char name[] = "x-request-id:";
        Answer *a = userdata;
        size_t k = size * n, v = sizeof(name) - 1;

        if (k > v && strncasecmp(p, name, v) == 0) {
                while (v < k && (p[v] == ' ' || p[v] == '\t'))
                        v++;
                while (k > v && (p[k - 1] == '\r' || p[k - 1] == '\n' || p[k - 1] == ' ' || p[k - 1] == '\t'))
                        k--;
                (void) snprintf(a->request_id, sizeof(a->request_id), "%.*s", (int) (k - v), p + v);
        }
        return size * n;
}

static void curl_cleanup(CURL **c) {
        if (*c)
                curl_easy_cleanup(*c);
}

static void slist_cleanup(struct curl_slist **l) {
        curl_slist_free_all(*l);
}

int http_request(const HttpUrl *url, const char *method, const char *path, const char *token, const char *content_type,
                 const char *body, size_t body_len, HttpResponse *ret, Error *reterr) {
        __attribute__((cleanup(curl_cleanup))) CURL *c = NULL;
        __attribute__((cleanup(slist_cleanup))) struct curl_slist *headers = NULL;
        cleanup_free char *target = NULL, *auth = NULL, *ctype = NULL;
        char errbuf[CURL_ERROR_SIZE] = "";
        bool v6 = strchr(url->host, ':');
        Answer a = {};
        long status = 0;
        CURLcode rc;

        /* A token or path that could end the line would let the caller write headers of its own. */
        if (strpbrk(path, "\r\n ") || (token && strpbrk(token, "\r\n")))
                return error_set(reterr, -EINVAL, "a path or token holds a line break or blank");
        if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK || !(c = curl_easy_init()))
                return error_set(reterr, -ENOMEM, "out of memory");
        if (asprintf(&target, "http://%s%s%s:%s%s%s", v6 ? "[" : "", url->host, v6 ? "]" : "", url->port, url->prefix, path) < 0 ||
            (token && asprintf(&auth, "Authorization: Bearer %s", token) < 0) ||
            (body && asprintf(&ctype, "Content-Type: %s", content_type ? content_type : "application/octet-stream") < 0))
                return error_set(reterr, -ENOMEM, "out of memory");
        /* No Expect: 100-continue: the service answers a refused request at once anyway. */
        headers = curl_slist_append(headers, "Accept: application/json");
        headers = headers ? curl_slist_append(headers, "Expect:") : NULL;
        if (headers && auth)
                headers = curl_slist_append(headers, auth);
        if (headers && ctype)
                headers = curl_slist_append(headers, ctype);
        if (!headers)
                return error_set(reterr, -ENOMEM, "out of memory");

        /* Plain HTTP to the one address given: no redirect, proxy, other protocol or signal. */
        if (curl_easy_setopt(c, CURLOPT_URL, target) != CURLE_OK || curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http") != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_NOPROXY, "*") != CURLE_OK || curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_NOBODY, (long) (strcmp(method, "HEAD") == 0)) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers) != CURLE_OK || curl_easy_setopt(c, CURLOPT_USERAGENT, "sandboxctl") != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long) HTTP_CONNECT_TIMEOUT_MS) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long) HTTP_ANSWER_TIMEOUT_MS) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK || curl_easy_setopt(c, CURLOPT_WRITEDATA, &a) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK || curl_easy_setopt(c, CURLOPT_HEADERDATA, &a) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
            (body && (curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
                      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len) != CURLE_OK)))
                return error_set(reterr, -EINVAL, "libcurl refused an option");

        rc = curl_easy_perform(c);
        if (rc == CURLE_OK)
                (void) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status < 100) {
                long os_errno = 0;

                free(a.data);
                /* The words an administrator knows from any other client: the host and the kernel's
                 * reason, not libcurl's phrasing of them. */
                if (rc == CURLE_COULDNT_RESOLVE_HOST)
                        return error_set(reterr, -EADDRNOTAVAIL, "cannot resolve '%s'", url->host);
                if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT) {
                        (void) curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
                        if (rc == CURLE_COULDNT_CONNECT || os_errno != 0)
                                return error_set(reterr, os_errno > 0 ? (int) -os_errno : -ECONNREFUSED, "cannot connect to %s port %s: %s",
                                                 url->host, url->port, strerror(os_errno > 0 ? (int) os_errno : ECONNREFUSED));
                }
                if (a.too_large)
                        return error_set(reterr, -EFBIG, "the answer from %s port %s is larger than %zu MiB", url->host, url->port,
                                         HTTP_ANSWER_MAX >> 20);
                return error_set(reterr, rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EPROTO, "no answer from %s port %s: %s",
                                 url->host, url->port, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        }
        if (!a.data && !(a.data = calloc(1, 1)))
                return error_set(reterr, -ENOMEM, "out of memory");
        *ret = (HttpResponse){.status = (int) status, .body = a.data, .body_len = a.len};
        (void) snprintf(ret->request_id, sizeof(ret->request_id), "%s", a.request_id);
        return 0;
}

void http_response_done(HttpResponse *r) {
        r->body = mfree(r->body);
        r->body_len = 0;
}
