/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster/etcd.h"
#include "tests/unit/tap.h"

static void test_prefix_end(void) {
        char end[32];

        tap_is_int(etcd_prefix_end("/sandboxd/members/", end, sizeof(end)), 0, "prefix end of /sandboxd/members/");
        tap_is_str(end, "/sandboxd/members0", "... is /sandboxd/members0");
        tap_is_int(etcd_prefix_end("a\xff\xff", end, sizeof(end)), 0, "prefix ending in 0xff bytes");
        tap_is_str(end, "b", "... drops them and grows the byte before");
        tap_is_int(etcd_prefix_end("\xff", end, sizeof(end)), -EINVAL, "all 0xff: no end");
        tap_is_int(etcd_prefix_end("", end, sizeof(end)), -EINVAL, "empty prefix refused");
        tap_is_int(etcd_prefix_end("abcd", end, 4), -EINVAL, "too small a buffer refused");
}

typedef struct Seen {
        char log[512];
        int n;
} Seen;

static int record(const char *key, const char *value, int64_t revision, void *userdata) {
        Seen *s = userdata;
        size_t len = strlen(s->log);

        (void) snprintf(s->log + len, sizeof(s->log) - len, "%s=%s@%lld;", key, value ? value : "(deleted)", (long long) revision);
        return ++s->n >= 100 ? -ECANCELED : 0;
}

static int refuse(const char *key, const char *value, int64_t revision, void *userdata) {
        (void) key, (void) value, (void) revision, (void) userdata;
        return -ECANCELED;
}

static int watch(const char *line, EtcdWatchFn fn, Seen *s) {
        Error err = {};

        return etcd_watch_message(line, strlen(line), fn, s, &err);
}

static void test_watch_message(void) {
        /* "/sandboxd/members/m1" and {"a":1} in base64, as etcd 3.4's gateway sends them. */
        static const char put[] =
                "{\"result\":{\"header\":{\"revision\":\"2\"},\"events\":[{\"kv\":{\"key\":\"L3NhbmRib3hkL21lbWJlcnMvbTE=\","
                "\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"eyJhIjoxfQ==\",\"lease\":\"7\"}}]}}";
        static const char del[] = "{\"result\":{\"header\":{\"revision\":\"3\"},\"events\":[{\"type\":\"DELETE\",\"kv\":{\"key\":"
                                  "\"L3NhbmRib3hkL21lbWJlcnMvbTE=\",\"mod_revision\":\"3\"}}]}}";
        Seen s = {};

        tap_is_int(watch("{\"result\":{\"header\":{\"revision\":\"1\"},\"created\":true}}", record, &s), 0, "created: nothing to tell");
        tap_is_int(s.n, 0, "... no call");
        tap_is_int(watch(put, record, &s), 0, "a put");
        tap_is_int(watch(del, record, &s), 0, "a delete");
        tap_is_str(s.log, "/sandboxd/members/m1={\"a\":1}@2;/sandboxd/members/m1=(deleted)@3;", "... told in order, with revisions");
        tap_is_int(watch(put, refuse, &s), -ECANCELED, "the callback's failure ends it");
        tap_is_int(watch("{\"result\":{\"compact_revision\":\"5\",\"canceled\":true}}", record, &s), -ESTALE, "compacted: -ESTALE");
        tap_is_int(watch("{\"result\":{\"canceled\":true}}", record, &s), -EREMOTEIO, "cancelled: -EREMOTEIO");
        tap_is_int(watch("{\"error\":{\"grpc_code\":14,\"message\":\"unavailable\"}}", record, &s), -EREMOTEIO, "etcd's error");
        tap_is_int(watch("{\"result\":{\"events\":[{\"kv\":{\"key\":\"!!\"}}]}}", record, &s), -EBADMSG, "a key not base64");
        tap_is_int(watch("{\"result\":{\"events\":{}}}", record, &s), -EBADMSG, "events not a list");
        tap_is_int(watch("{\"result\":{}} trailing", record, &s), -EBADMSG, "trailing bytes");
        tap_is_int(watch("[]", record, &s), -EBADMSG, "not an object");
        tap_is_int(watch("", record, &s), -EBADMSG, "empty");
}

static void test_endpoints(void) {
        Etcd *e = NULL;

        tap_is_int(etcd_new("http://10.0.0.1:2379,http://10.0.0.2:2379", &e), 0, "two endpoints");
        e = etcd_free(e);
        tap_is_int(etcd_new("", &e), -EINVAL, "none refused");
        tap_is_int(etcd_new("https://x:1", &e), 0, "an https:// one");
        e = etcd_free(e);
        tap_is_int(etcd_new("ftp://x:1", &e), -EINVAL, "no http:// or https:// one refused");
}

int main(void) {
        test_prefix_end();
        test_watch_message();
        test_endpoints();
        return tap_done();
}
