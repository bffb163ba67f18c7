/* SPDX-License-Identifier: MIT */
#pragma once

/* etcd's v3 API through its JSON gateway (POST /v3/..., keys and values in base64), with libcurl:
 * what the cluster's members, the front's watcher and sandboxctl ask of it. Each call blocks for at
 * most its timeout; a client that fails to reach one endpoint tries the next (SANDBOXD_ETCD lists
 * them all), so that etcd losing one of three members costs a connect's time at most. */

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

struct json_object;
typedef struct Etcd Etcd;

/* For https:// endpoints: etcd's CA, and this host's client certificate and key (readable by the
 * services' user: sandboxd-member runs as it). */
#define ETCD_TLS_CA "/etc/sandboxd/etcd/ca.pem"
#define ETCD_TLS_CERT "/etc/sandboxd/etcd/client.pem"
#define ETCD_TLS_KEY "/etc/sandboxd/etcd/client-key.pem"

/* A client of endpoints ("http://HOST:PORT,..." or https://): 0, or -EINVAL (none usable), -ENOMEM. */
int etcd_new(const char *endpoints, Etcd **ret);
Etcd *etcd_free(Etcd *e);

/* One unary call: POST /v3/<method> with body, its JSON answer into *ret. An answer that is an
 * error of etcd's ({"error": ...}, HTTP 4xx/5xx) is -EREMOTEIO with its message. */
int etcd_call(Etcd *e, const char *method, struct json_object *body, struct json_object **ret, Error *err);

int etcd_lease_grant(Etcd *e, unsigned ttl_s, int64_t *ret_id, Error *err);
/* The lease's time left into *ret_ttl: 0 when etcd no longer has it (expired or revoked). */
int etcd_lease_keepalive(Etcd *e, int64_t id, int64_t *ret_ttl, Error *err);
int etcd_lease_revoke(Etcd *e, int64_t id, Error *err);
/* lease 0: none. */
int etcd_put(Etcd *e, const char *key, const char *value, int64_t lease, Error *err);
int etcd_delete(Etcd *e, const char *key, Error *err);
/* lease 0: none. The store's revision after it into *ret_revision (NULL: not wanted). */
int etcd_put_rev(Etcd *e, const char *key, const char *value, int64_t lease, int64_t *ret_revision, Error *err);
/* A put only if key does not exist (one transaction): -EEXIST when it does. */
int etcd_put_new(Etcd *e, const char *key, const char *value, Error *err);
/* key's value into *ret (caller frees): -ENOENT when there is none. */
int etcd_get(Etcd *e, const char *key, char **ret, Error *err);

typedef struct EtcdKv {
        char *key;
        char *value;
} EtcdKv;

/* Every key under prefix, with its value, and the store's revision they were read at. */
int etcd_range_prefix(Etcd *e, const char *prefix, EtcdKv **ret, size_t *ret_n, int64_t *ret_revision, Error *err);
void etcd_kvs_free(EtcdKv *kvs, size_t n);

/* One change: value NULL for a deletion (a lease's end, too). A callback's negative return ends
 * the watch with it. */
typedef int (*EtcdWatchFn)(const char *key, const char *value, int64_t revision, void *userdata);

/* Calls fn for each change under prefix from revision from on, as etcd sends them; blocks until fn
 * fails, the stream ends (-ECONNRESET), etcd no longer has that revision (-ESTALE: read the range
 * again) or timeout_ms passes (-ETIMEDOUT; 0: no end). TCP keepalives find a peer that went away
 * silently. */
int etcd_watch_prefix(Etcd *e, const char *prefix, int64_t from, long timeout_ms, EtcdWatchFn fn, void *userdata, Error *err);

/* One message of a watch's stream (a line of JSON) given to fn: 0, what fn returned, -ESTALE
 * (compacted), -EREMOTEIO (etcd's error, or a cancelled watch), -EBADMSG. Pure. */
int etcd_watch_message(const char *line, size_t len, EtcdWatchFn fn, void *userdata, Error *err);

/* The end of the range of keys that start with prefix (etcd's range_end): prefix with its last
 * byte incremented, into ret (strlen(prefix) + 1 bytes). -EINVAL for "" or a prefix of 0xff
 * bytes. Pure. */
int etcd_prefix_end(const char *prefix, char *ret, size_t size);
