/* SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/etcd.h"
#include "lib/b64.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

#define ETCD_ENDPOINTS_MAX 16
/* A unary call: etcd answers in milliseconds; a member that cannot reach it within this tries the
 * next endpoint, and its lease (seconds) outlives a few such tries. */
#define ETCD_CONNECT_TIMEOUT_MS 500L
#define ETCD_CALL_TIMEOUT_MS 2000L
#define ETCD_ANSWER_MAX (16U << 20)

struct Etcd {
        char *urls[ETCD_ENDPOINTS_MAX];
        size_t n;
        size_t current; /* the one that answered last: tried first */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_FAILED_INIT;

/* Once per process, whichever thread comes first: libcurl before 7.84 has no thread-safe init. */
static void curl_init(void) {
        curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int etcd_new(const char *endpoints, Etcd **ret) {
        Etcd *e;
        const char *p = endpoints;

        if (pthread_once(&curl_once, curl_init) != 0 || curl_init_result != CURLE_OK)
                return -EIO;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        while (*p && e->n < ETCD_ENDPOINTS_MAX) {
                size_t len = strcspn(p, ",");

                bool ok = (len > 7 && strncmp(p, "http://", 7) == 0) || (len > 8 && strncmp(p, "https://", 8) == 0);

                if (ok && !(e->urls[e->n++] = strndup(p, len))) {
                        (void) etcd_free(e);
                        return -ENOMEM;
                }
                p += len + (p[len] == ',');
        }
        if (e->n == 0) {
                (void) etcd_free(e);
                return -EINVAL;
        }
        *ret = e;
        return 0;
}

Etcd *etcd_free(Etcd *e) {
        if (e)
                for (size_t i = 0; i < e->n; i++)
                        free(e->urls[i]);
        free(e);
        return NULL;
}

int etcd_prefix_end(const char *prefix, char *ret, size_t size) {
        size_t n = strlen(prefix);

        if (n == 0 || n + 1 > size)
                return -EINVAL;
        memcpy(ret, prefix, n + 1);
        /* The last byte that can grow grows; the 0xff bytes after it go (etcd's own rule). */
        while (n > 0 && (unsigned char) ret[n - 1] == 0xff)
                ret[--n] = 0;
        if (n == 0)
                return -EINVAL;
        ret[n - 1] = (char) ((unsigned char) ret[n - 1] + 1);
        return 0;
}

static char *b64(const char *s) {
        return b64_encode((const uint8_t *) s, strlen(s), NULL);
}

/* A base64 field of o, decoded, NUL-terminated; NULL when absent or not base64. */
static char *b64_field(struct json_object *o, const char *name) {
        struct json_object *v;
        uint8_t *out = NULL;
        size_t len;

        if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string) ||
            b64_decode(json_object_get_string(v), (size_t) json_object_get_string_len(v), &out, &len) < 0)
                return NULL;
        return (char *) out;
}

/* etcd's 64-bit numbers travel as JSON strings; an absent one is 0 (the gateway leaves out zeros). */
static int64_t int_field(struct json_object *o, const char *name) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, name, &v))
                return 0;
        if (json_object_is_type(v, json_type_string))
                return strtoll(json_object_get_string(v), NULL, 10);
        return json_object_get_int64(v);
}

typedef struct Body {
        char *data;
        size_t len;
        bool too_large;
        /* A watch: each whole line goes to fn as it comes. */
        EtcdWatchFn fn;
        void *userdata;
        int watch_r;
        Error *err;
} Body;

static size_t on_data(char *p, size_t size, size_t n, void *userdata) {
        Body *b = userdata;
        size_t len = size * n;
        char *data, *nl;

        if (b->len + len > ETCD_ANSWER_MAX) {
                b->too_large = true;
                return 0;
        }
        data = realloc(b->data, b->len + len + 1);
        if (!data)
                return 0;
        memcpy(data + b->len, p, len);
        b->data = data;
        b->len += len;
        b->data[b->len] = 0;
        if (!b->fn)
                return len;
        while ((nl = memchr(b->data, '\n', b->len))) {
                size_t line = (size_t) (nl - b->data);

                b->watch_r = etcd_watch_message(b->data, line, b->fn, b->userdata, b->err);
                if (b->watch_r < 0)
                        return 0; /* ends the transfer */
                memmove(b->data, nl + 1, b->len - line - 1);
                b->len -= line + 1;
        }
        return len;
}

static void curl_cleanup(CURL **c) {
        if (*c)
                curl_easy_cleanup(*c);
}

static void slist_cleanup(struct curl_slist **l) {
        curl_slist_free_all(*l);
}

/* etcd over TLS (https:// endpoints): the CA that signed etcd's certificates, and this client's
 * certificate and key, whose common name etcd takes for the user (--client-cert-auth), so that each
 * member may be given a role that writes its own keys only (docs/cluster.md). Each file is used when
 * it exists; without the CA, the system's. */
static int tls_options(CURL *c) {
        if (access(ETCD_TLS_CA, R_OK) == 0 && curl_easy_setopt(c, CURLOPT_CAINFO, ETCD_TLS_CA) != CURLE_OK)
                return -EINVAL;
        if (access(ETCD_TLS_CERT, R_OK) == 0 && (curl_easy_setopt(c, CURLOPT_SSLCERT, ETCD_TLS_CERT) != CURLE_OK ||
                                                 curl_easy_setopt(c, CURLOPT_SSLKEY, ETCD_TLS_KEY) != CURLE_OK))
                return -EINVAL;
        return 0;
}

/* c's transfer to its end, waiting in poll() for as long as libcurl's own deadlines allow:
 * curl_easy_perform() wakes every second to look again, which a watch, open for hours with nothing
 * to say, would do for ever. A peer that went away silently is found by the TCP keepalives, which
 * wake the poll() with an error. */
static CURLcode perform_quiet(CURL *c) {
        CURLM *m = curl_multi_init();
        CURLcode rc = CURLE_OUT_OF_MEMORY;
        CURLMsg *msg;
        int running = 1, left;

        if (!m)
                return rc;
        if (curl_multi_add_handle(m, c) != CURLM_OK) {
                (void) curl_multi_cleanup(m);
                return rc;
        }
        rc = CURLE_RECV_ERROR;
        /* curl_multi_poll() waits less than its timeout when libcurl has a deadline sooner (a
         * connect's, a call's CURLOPT_TIMEOUT_MS); without one, until something happens. */
        while (curl_multi_perform(m, &running) == CURLM_OK && running > 0)
                if (curl_multi_poll(m, NULL, 0, INT_MAX, NULL) != CURLM_OK)
                        break;
        while ((msg = curl_multi_info_read(m, &left)))
                if (msg->msg == CURLMSG_DONE && msg->easy_handle == c)
                        rc = msg->data.result;
        (void) curl_multi_remove_handle(m, c);
        (void) curl_multi_cleanup(m);
        return rc;
}

/* POST body to url + path on one endpoint; the answer's HTTP status into *ret_status. */
static int post(const char *url, const char *path, const char *body, long timeout_ms, Body *b, long *ret_status, Error *err) {
        __attribute__((cleanup(curl_cleanup))) CURL *c = NULL;
        __attribute__((cleanup(slist_cleanup))) struct curl_slist *headers = NULL;
        cleanup_free char *target = NULL;
        char errbuf[CURL_ERROR_SIZE] = "";
        CURLcode rc;

        if (!(c = curl_easy_init()) || asprintf(&target, "%s%s", url, path) < 0 ||
            !(headers = curl_slist_append(NULL, "Content-Type: application/json")) || !(headers = curl_slist_append(headers, "Expect:")) ||
            /* A watch served by an etcd member cut off from the others would say nothing, for ever:
             * etcd ends it instead (the gateway passes this on as gRPC metadata). */
            (b->fn && !(headers = curl_slist_append(headers, "Grpc-Metadata-hasleader: true"))))
                return error_set(err, -ENOMEM, "out of memory");
        /* Plain HTTP to the address given: no proxy from the environment, no redirect, no signal. */
        if (strncmp(url, "https://", 8) == 0 && tls_options(c) < 0)
                return error_set(err, -EINVAL, "libcurl refused a TLS option");
        if (curl_easy_setopt(c, CURLOPT_URL, target) != CURLE_OK || curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_NOPROXY, "*") != CURLE_OK || curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers) != CURLE_OK || curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ETCD_CONNECT_TIMEOUT_MS) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK || curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_WRITEDATA, b) != CURLE_OK || curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK || curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 5L) != CURLE_OK ||
            curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 2L) != CURLE_OK)
                return error_set(err, -EINVAL, "libcurl refused an option");
        rc = b->fn ? perform_quiet(c) : curl_easy_perform(c);
        if (b->fn && b->watch_r < 0)
                return b->watch_r;
        if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
                return error_set(err, -ECONNREFUSED, "cannot reach etcd at %s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        if (rc == CURLE_OPERATION_TIMEDOUT)
                return error_set(err, -ETIMEDOUT, "etcd at %s did not answer in time", url);
        if (b->too_large)
                return error_set(err, -EFBIG, "etcd's answer is larger than %u MiB", ETCD_ANSWER_MAX >> 20);
        if (rc != CURLE_OK)
                return error_set(err, -ECONNRESET, "etcd at %s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        (void) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
        return 0;
}

/* The body on the endpoint that answered last, then on each other in turn while one cannot be
 * reached or does not answer. A call that timed out may have been applied: every call here may
 * be sent twice (a put of the same value, a keepalive; a second lease expires unused). */
static int post_any(Etcd *e, const char *path, const char *body, long timeout_ms, Body *b, long *ret_status, Error *err) {
        int r = -ECONNREFUSED;

        for (size_t i = 0; i < e->n; i++) {
                size_t k = (e->current + i) % e->n;

                b->len = 0;
                r = post(e->urls[k], path, body, timeout_ms, b, ret_status, err);
                if (r != -ECONNREFUSED && !(r == -ETIMEDOUT && b->len == 0 && !b->fn)) {
                        e->current = k;
                        return r;
                }
        }
        return r;
}

/* etcd's error answer's words ({"error": "...", "message": "..."} or {"error": {"message": ...}}). */
static int remote_error(struct json_object *o, long status, Error *err) {
        struct json_object *v, *m;
        const char *msg = "no message";

        if (json_object_object_get_ex(o, "message", &v) && json_object_is_type(v, json_type_string))
                msg = json_object_get_string(v);
        else if (json_object_object_get_ex(o, "error", &v)) {
                if (json_object_is_type(v, json_type_string))
                        msg = json_object_get_string(v);
                else if (json_object_object_get_ex(v, "message", &m) && json_object_is_type(m, json_type_string))
                        msg = json_object_get_string(m);
        }
        return error_set(err, -EREMOTEIO, "etcd refused (HTTP %ld): %s", status, msg);
}

int etcd_call(Etcd *e, const char *method, struct json_object *body, struct json_object **ret, Error *err) {
        cleanup_free char *path = NULL;
        Body b = {};
        struct json_object *answer, *v;
        long status = 0;
        int r;

        if (asprintf(&path, "/v3/%s", method) < 0)
                return error_set(err, -ENOMEM, "out of memory");
        r = post_any(e, path, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN), ETCD_CALL_TIMEOUT_MS, &b, &status, err);
        if (r < 0) {
                free(b.data);
                return r;
        }
        answer = b.data ? json_tokener_parse(b.data) : NULL;
        free(b.data);
        if (!answer || !json_object_is_type(answer, json_type_object)) {
                json_object_put(answer);
                return error_set(err, -EBADMSG, "etcd's answer to %s is not JSON (HTTP %ld)", method, status);
        }
        if (status >= 400 || json_object_object_get_ex(answer, "error", &v)) {
                r = remote_error(answer, status, err);
                json_object_put(answer);
                return r;
        }
        *ret = answer;
        return 0;
}

/* A request's object: {name: value, ...} from pairs; NULL on out of memory. */
static struct json_object *object_of(const char *k1, struct json_object *v1, const char *k2, struct json_object *v2, const char *k3,
                                     struct json_object *v3) {
        struct json_object *o = json_object_new_object();
        const char *k[] = {k1, k2, k3};
        struct json_object *v[] = {v1, v2, v3};
        bool ok = o != NULL;

        for (size_t i = 0; i < ELEMENTSOF(k); i++) {
                if (!k[i])
                        continue;
                if (!ok || !v[i] || json_object_object_add(o, k[i], v[i]) < 0) {
                        json_object_put(v[i]);
                        ok = false;
                }
        }
        if (!ok)
                o = (json_object_put(o), NULL);
        return o;
}

static struct json_object *string_of_int(int64_t v) {
        char buf[32];

        (void) snprintf(buf, sizeof(buf), "%" PRId64, v);
        return json_object_new_string(buf);
}

static struct json_object *b64_string(const char *s) {
        cleanup_free char *enc = b64(s);

        return enc ? json_object_new_string(enc) : NULL;
}

int etcd_lease_grant(Etcd *e, unsigned ttl_s, int64_t *ret_id, Error *err) {
        cleanup_json struct json_object *req = object_of("TTL", json_object_new_int64(ttl_s), NULL, NULL, NULL, NULL), *answer = NULL;
        int r;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        r = etcd_call(e, "lease/grant", req, &answer, err);
        if (r < 0)
                return r;
        *ret_id = int_field(answer, "ID");
        return *ret_id != 0 ? 0 : error_set(err, -EBADMSG, "etcd granted a lease without an ID");
}

int etcd_lease_keepalive(Etcd *e, int64_t id, int64_t *ret_ttl, Error *err) {
        cleanup_json struct json_object *req = object_of("ID", string_of_int(id), NULL, NULL, NULL, NULL), *answer = NULL;
        struct json_object *result;
        int r;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        /* A stream in gRPC; through the gateway, one request gives one answer. */
        r = etcd_call(e, "lease/keepalive", req, &answer, err);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(answer, "result", &result))
                return error_set(err, -EBADMSG, "etcd's keepalive answer has no result");
        *ret_ttl = int_field(result, "TTL");
        return 0;
}

int etcd_lease_revoke(Etcd *e, int64_t id, Error *err) {
        cleanup_json struct json_object *req = object_of("ID", string_of_int(id), NULL, NULL, NULL, NULL), *answer = NULL;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        return etcd_call(e, "lease/revoke", req, &answer, err);
}

int etcd_put_rev(Etcd *e, const char *key, const char *value, int64_t lease, int64_t *ret_revision, Error *err) {
        cleanup_json struct json_object *req = object_of("key", b64_string(key), "value", b64_string(value), lease ? "lease" : NULL,
                                                         lease ? string_of_int(lease) : NULL),
                                        *answer = NULL;
        struct json_object *header;
        int r;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        r = etcd_call(e, "kv/put", req, &answer, err);
        if (r >= 0 && ret_revision)
                *ret_revision = json_object_object_get_ex(answer, "header", &header) ? int_field(header, "revision") : 0;
        return r;
}

int etcd_put(Etcd *e, const char *key, const char *value, int64_t lease, Error *err) {
        return etcd_put_rev(e, key, value, lease, NULL, err);
}

int etcd_delete(Etcd *e, const char *key, Error *err) {
        cleanup_json struct json_object *req = object_of("key", b64_string(key), NULL, NULL, NULL, NULL), *answer = NULL;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        return etcd_call(e, "kv/deleterange", req, &answer, err);
}

int etcd_put_new(Etcd *e, const char *key, const char *value, Error *err) {
        cleanup_json struct json_object *compare = object_of("key", b64_string(key), "target", json_object_new_string("CREATE"), "result",
                                                             json_object_new_string("EQUAL")),
                                        *put = object_of("request_put", object_of("key", b64_string(key), "value", b64_string(value), NULL, NULL),
                                                         NULL, NULL, NULL, NULL),
                                        *compares = json_object_new_array(), *successes = json_object_new_array(), *req = NULL,
                                        *answer = NULL;
        struct json_object *v;
        int r;

        /* Only if nobody made it: its creation revision is 0 while it does not exist. */
        if (!compare || !put || !compares || !successes || json_object_object_add(compare, "create_revision", json_object_new_string("0")) < 0 ||
            json_object_array_add(compares, json_object_get(compare)) < 0 || json_object_array_add(successes, json_object_get(put)) < 0 ||
            !(req = object_of("compare", json_object_get(compares), "success", json_object_get(successes), NULL, NULL)))
                return error_set(err, -ENOMEM, "out of memory");
        r = etcd_call(e, "kv/txn", req, &answer, err);
        if (r < 0)
                return r;
        /* The gateway leaves out a false "succeeded". */
        if (!json_object_object_get_ex(answer, "succeeded", &v) || !json_object_get_boolean(v))
                return error_set(err, -EEXIST, "%s exists already", key);
        return 0;
}

int etcd_get(Etcd *e, const char *key, char **ret, Error *err) {
        cleanup_json struct json_object *req = object_of("key", b64_string(key), NULL, NULL, NULL, NULL), *answer = NULL;
        struct json_object *kvs;
        char *value;
        int r;

        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        r = etcd_call(e, "kv/range", req, &answer, err);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(answer, "kvs", &kvs) || !json_object_is_type(kvs, json_type_array) || json_object_array_length(kvs) == 0)
                return error_set(err, -ENOENT, "%s does not exist", key);
        value = json_object_object_get_ex(json_object_array_get_idx(kvs, 0), "value", NULL)
                        ? b64_field(json_object_array_get_idx(kvs, 0), "value")
                        : strdup("");
        if (!value)
                return error_set(err, -EBADMSG, "etcd's value of %s is not base64", key);
        *ret = value;
        return 0;
}

void etcd_kvs_free(EtcdKv *kvs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(kvs[i].key);
                free(kvs[i].value);
        }
        free(kvs);
}

int etcd_range_prefix(Etcd *e, const char *prefix, EtcdKv **ret, size_t *ret_n, int64_t *ret_revision, Error *err) {
        cleanup_json struct json_object *req = NULL, *answer = NULL;
        struct json_object *header, *kvs;
        char end[256];
        EtcdKv *out;
        size_t n;
        int r;

        if (etcd_prefix_end(prefix, end, sizeof(end)) < 0)
                return error_set(err, -EINVAL, "no range ends prefix '%s'", prefix);
        req = object_of("key", b64_string(prefix), "range_end", b64_string(end), NULL, NULL);
        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        r = etcd_call(e, "kv/range", req, &answer, err);
        if (r < 0)
                return r;
        *ret_revision = json_object_object_get_ex(answer, "header", &header) ? int_field(header, "revision") : 0;
        n = json_object_object_get_ex(answer, "kvs", &kvs) && json_object_is_type(kvs, json_type_array) ? json_object_array_length(kvs) : 0;
        out = calloc(n + 1, sizeof(*out));
        if (!out)
                return error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                struct json_object *kv = json_object_array_get_idx(kvs, i);

                out[i].key = b64_field(kv, "key");
                /* The gateway leaves out an empty value. */
                out[i].value = json_object_object_get_ex(kv, "value", NULL) ? b64_field(kv, "value") : strdup("");
                if (!out[i].key || !out[i].value) {
                        etcd_kvs_free(out, i + 1);
                        return error_set(err, -EBADMSG, "etcd's range answer holds a key or value that is not base64");
                }
        }
        *ret = out;
        *ret_n = n;
        return 0;
}

int etcd_watch_message(const char *line, size_t len, EtcdWatchFn fn, void *userdata, Error *err) {
        cleanup_json struct json_object *o = NULL;
        struct json_object *result, *events, *v;
        struct json_tokener *tok = json_tokener_new();
        size_t n;

        if (!tok)
                return error_set(err, -ENOMEM, "out of memory");
        o = json_tokener_parse_ex(tok, line, (int) len);
        n = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!o || n != len || !json_object_is_type(o, json_type_object))
                return error_set(err, -EBADMSG, "a watch message is not a JSON object");
        if (json_object_object_get_ex(o, "error", NULL))
                return remote_error(o, 0, err);
        if (!json_object_object_get_ex(o, "result", &result) || !json_object_is_type(result, json_type_object))
                return error_set(err, -EBADMSG, "a watch message has no result");
        if (int_field(result, "compact_revision") > 0)
                return error_set(err, -ESTALE, "etcd compacted the revisions the watch started from");
        if (json_object_object_get_ex(result, "canceled", &v) && json_object_get_boolean(v))
                return error_set(err, -EREMOTEIO, "etcd cancelled the watch");
        if (!json_object_object_get_ex(result, "events", &events))
                return 0; /* "created", or a progress notice */
        if (!json_object_is_type(events, json_type_array))
                return error_set(err, -EBADMSG, "a watch message's events are not a list");
        for (size_t i = 0; i < json_object_array_length(events); i++) {
                struct json_object *ev = json_object_array_get_idx(events, i), *kv, *type;
                bool deleted = json_object_object_get_ex(ev, "type", &type) && json_object_is_type(type, json_type_string) &&
                               strcmp(json_object_get_string(type), "DELETE") == 0;
                cleanup_free char *key = NULL, *value = NULL;
                int r;

                if (!json_object_object_get_ex(ev, "kv", &kv) || !(key = b64_field(kv, "key")))
                        return error_set(err, -EBADMSG, "a watch event has no key");
                if (!deleted && !(value = json_object_object_get_ex(kv, "value", NULL) ? b64_field(kv, "value") : strdup("")))
                        return error_set(err, -EBADMSG, "a watch event's value is not base64");
                r = fn(key, value, int_field(kv, "mod_revision"), userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

int etcd_watch_prefix(Etcd *e, const char *prefix, int64_t from, long timeout_ms, EtcdWatchFn fn, void *userdata, Error *err) {
        cleanup_json struct json_object *create = NULL, *req = NULL;
        char end[256];
        Body b = {.fn = fn, .userdata = userdata, .err = err};
        long status = 0;
        int r;

        if (etcd_prefix_end(prefix, end, sizeof(end)) < 0)
                return error_set(err, -EINVAL, "no range ends prefix '%s'", prefix);
        create = object_of("key", b64_string(prefix), "range_end", b64_string(end), "start_revision", string_of_int(from));
        req = create ? object_of("create_request", json_object_get(create), NULL, NULL, NULL, NULL) : NULL;
        if (!req)
                return error_set(err, -ENOMEM, "out of memory");
        /* A watch lasts, unless the caller waits for one answer; the keepalives find a dead peer. */
        r = post_any(e, "/v3/watch", json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), timeout_ms, &b, &status, err);
        free(b.data);
        if (r < 0)
                return r;
        if (status >= 400)
                return error_set(err, -EREMOTEIO, "etcd refused the watch (HTTP %ld)", status);
        return error_set(err, -ECONNRESET, "etcd ended the watch");
}
