/* SPDX-License-Identifier: MIT */
/* The workers' side of egress by name: a request's "network" checked against the two lists above
 * it, before any machine is claimed. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/keys.h"
#include "fcgi/egress-check.h"
#include "fcgi/egress-link.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "lib/config.h"
#include "lib/egress.h"
#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"

/* The operator's list: no file is an empty one (egress off: nothing may be reached). */
static int operator_list(const char *path, EgressList *ret, unsigned *ret_line) {
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        cleanup_free char *text = NULL;
        size_t len = 0;
        int r;

        *ret_line = 0;
        if (fd < 0) {
                if (errno != ENOENT)
                        return -errno;
                *ret = (EgressList){};
                return 0;
        }
        r = fd_read_all(fd, 1U << 20, -1, &text, &len);
        if (r < 0)
                return r;
        return egress_list_parse_text(text, len, ret, ret_line);
}

int egress_request_allowed(Request *req, Context *ctx, struct json_object *allow) {
        char key_list[API_KEY_EGRESS_MAX + 1] = "";
        EgressList host = {}, key = {};
        bool key_narrows = false;
        unsigned line = 0;
        size_t n = json_object_array_length(allow);
        int r;

        r = operator_list(ctx->config->egress_allow_path, &host, &line);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to read %s%s%u: %s", ctx->config->egress_allow_path, line ? ", line " : "", line,
                                       r == -EINVAL ? "not a host name or *.suffix with an optional :port" : strerror(-r));
                return reply_error(req, 503, MSG_EGRESS_UNAVAILABLE, "the host's egress.allow cannot be read; its administrator is told");
        }
        if (req->key_name[0]) {
                r = db_key_egress(ctx->db, req->key_name, key_list, sizeof(key_list));
                /* A key revoked since it was let in reaches nothing. */
                if (r == -ENOENT)
                        (void) snprintf(key_list, sizeof(key_list), "%s", API_KEY_EGRESS_NONE);
                else if (r < 0) {
                        egress_list_done(&host);
                        return reply_error(req, 500, MSG_INTERNAL, "cannot read the key's egress list");
                }
                key_narrows = key_list[0] != 0;
                /* "none", or a list sandboxctl checked: one that no longer parses reaches nothing. */
                if (key_narrows && strcmp(key_list, API_KEY_EGRESS_NONE) != 0 && egress_list_parse_csv(key_list, &key, NULL) < 0)
                        key = (EgressList){};
        }

        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(allow, i);
                bool host_allows, key_allows;
                EgressRule what;

                (void) egress_rule_parse(json_object_get_string(e), (size_t) json_object_get_string_len(e), &what);
                host_allows = egress_list_covers(&host, &what);
                key_allows = !key_narrows || egress_list_covers(&key, &what);
                if (host_allows && key_allows)
                        continue;
                egress_list_done(&host);
                egress_list_done(&key);
                if (!host_allows)
                        return reply_error(req, 400, MSG_EGRESS_HOST, i, json_object_get_string(e));
                return reply_error(req, 400, MSG_EGRESS_KEY, i, json_object_get_string(e));
        }
        egress_list_done(&host);
        egress_list_done(&key);
        return 1;
}

void egress_request_ended(Request *req, EgressLink *l) {
        egress_link_end(l);
        req->network_rx_bytes = (int64_t) l->rx_bytes;
        req->network_tx_bytes = (int64_t) l->tx_bytes;
        req->network_connections = (int64_t) l->connections;
        req->network_refusals = (int64_t) l->refused;
        free(req->network_hosts);
        free(req->network_refused);
        req->network_hosts = TAKE_PTR(l->hosts);
        req->network_refused = TAKE_PTR(l->refused_hosts);
}

int egress_request_admit(Request *req, Context *ctx, struct json_object *allow, EgressLink *ret) {
        int r = egress_request_allowed(req, ctx, allow);

        if (r <= 0)
                return r;
        r = egress_link_open(ctx->config, ret);
        ret->id = req->id;
        ret->allow = allow;
        if (r < 0) {
                (void) log_error_errno(r, "Failed to reach the egress relay at %s: %s", ctx->config->egress_socket, strerror(-r));
                return reply_error(req, 503, MSG_EGRESS_UNAVAILABLE, "the host's egress relay is not running");
        }
        return 1;
}
