/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/member-record.h"
#include "lib/json-util.h"
#include "lib/macro.h"
#include "lib/socket-util.h"

DEFINE_JSON_CLEANUP

bool member_address_valid(const char *s) {
        SocketAddress a;
        size_t n;

        if (strlen(s) >= MEMBER_ADDRESS_MAX || socket_address_parse(s, &a) < 0)
                return false;
        n = strlen(a.host);
        /* Nothing HAProxy's runtime API would read as a second word or command. */
        if (a.bracketed)
                return strspn(a.host, "0123456789abcdef:") == n;
        return strspn(a.host, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n && a.host[0] != '-' && a.host[0] != '.';
}

int member_agent_address(const char *address, char ret[static MEMBER_ADDRESS_MAX]) {
        SocketAddress a;

        if (!member_address_valid(address) || socket_address_parse(address, &a) < 0 || a.port == UINT16_MAX)
                return -EINVAL;
        /* member_address_valid(): the host fits, and a port one greater takes at most one more digit
         * than its own, which the valid address left room for below MEMBER_ADDRESS_MAX - 1... or
         * not: snprintf() says, and a cut address is refused. */
        if (snprintf(ret, MEMBER_ADDRESS_MAX, "%s%.*s%s:%u", a.bracketed ? "[" : "", MEMBER_ADDRESS_MAX - 8, a.host, a.bracketed ? "]" : "",
                     a.port + 1U) >= MEMBER_ADDRESS_MAX)
                return -EINVAL;
        return 0;
}

char *member_record_format(const MemberRecord *m) {
        cleanup_json struct json_object *o = json_object_new_object();
        struct json_object *pool = json_object_new_object(), *sessions = json_object_new_object();

        if (!o || !pool || !sessions || json_object_object_add(o, "pool", pool) < 0) {
                json_object_put(pool);
                json_object_put(sessions);
                return NULL;
        }
        if (json_object_object_add(o, "sessions", sessions) < 0) {
                json_object_put(sessions);
                return NULL;
        }
        if (json_add_text(o, "name", m->name) < 0 || json_add_text(o, "address", m->address) < 0 || json_add_text(o, "agent", m->agent) < 0 ||
            json_add_text(o, "state", m->draining ? "draining" : "ready") < 0 || json_add_int(pool, "warm", m->warm) < 0 ||
            json_add_int(pool, "in_flight", m->in_flight) < 0 || json_add_int(pool, "starting", m->starting) < 0 ||
            json_add_int(pool, "waiting", m->waiting) < 0 || json_add_int(pool, "max", m->max) < 0 || json_add_int(pool, "target", m->target) < 0 ||
            json_add_int(pool, "created_total", m->created_total) < 0 || json_add_int(sessions, "active", m->sessions_active) < 0 ||
            json_add_int(sessions, "paused", m->sessions_paused) < 0)
                return NULL;
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

int member_record_parse(const char *json, MemberRecord *ret) {
        cleanup_json struct json_object *o = json_tokener_parse(json);
        struct json_object *pool, *sessions;
        char state[16];
        MemberRecord m = {};

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "pool", &pool) ||
            !json_object_object_get_ex(o, "sessions", &sessions) || json_get_text(o, "name", m.name, sizeof(m.name)) < 0 ||
            json_get_text(o, "address", m.address, sizeof(m.address)) < 0 || json_get_text(o, "agent", m.agent, sizeof(m.agent)) < 0 ||
            json_get_text(o, "state", state, sizeof(state)) < 0 || json_get_count(pool, "warm", &m.warm) < 0 ||
            json_get_count(pool, "in_flight", &m.in_flight) < 0 || json_get_count(pool, "starting", &m.starting) < 0 ||
            json_get_count(pool, "waiting", &m.waiting) < 0 || json_get_count(pool, "max", &m.max) < 0 || json_get_count(pool, "target", &m.target) < 0 ||
            json_get_count(pool, "created_total", &m.created_total) < 0 || json_get_count(sessions, "active", &m.sessions_active) < 0 ||
            json_get_count(sessions, "paused", &m.sessions_paused) < 0)
                return -EBADMSG;
        if (!member_name_valid(m.name) || !member_address_valid(m.address) || !member_address_valid(m.agent))
                return -EBADMSG;
        if (strcmp(state, "ready") != 0 && strcmp(state, "draining") != 0)
                return -EBADMSG;
        m.draining = strcmp(state, "draining") == 0;
        *ret = m;
        return 0;
}

int member_drain_path(const char *db_path, char *buf, size_t size, size_t *ret_dir_len) {
        const char *slash = strrchr(db_path, '/');
        int dir = slash ? (int) (slash - db_path) : 1;

        if ((size_t) snprintf(buf, size, "%.*s/" MEMBER_DRAIN_NAME, dir, slash ? db_path : ".") >= size)
                return -ENAMETOOLONG;
        *ret_dir_len = (size_t) dir;
        return 0;
}
