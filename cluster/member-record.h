/* SPDX-License-Identifier: MIT */
#pragma once

/* What a cluster's member says of itself in etcd, under MEMBER_PREFIX<name>, for as long as its lease
 * lives: where the front reaches it, whether it takes new work, and its counts. The member writes
 * it (sandboxd-member); the front's watcher, sandboxctl and the workers read it. One JSON object:
 *
 *   {"name": "m1", "address": "10.0.0.1:8080", "agent": "10.0.0.1:8081", "state": "ready",
 *    "pool": {"warm": 2, "in_flight": 1, "starting": 0, "waiting": 0, "max": 128, "target": 3,
 *             "created_total": 40},
 *    "sessions": {"active": 1, "paused": 4}}
 *
 * A reader trusts none of it: the addresses go into HAProxy's commands, so they are checked. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nspawn/unit-name.h"

#define MEMBER_PREFIX "/sandboxd/members/"
#define MEMBER_ADDRESS_MAX 128

typedef struct MemberRecord {
        char name[MEMBER_NAME_MAX];
        char address[MEMBER_ADDRESS_MAX]; /* nginx's, HOST:PORT */
        char agent[MEMBER_ADDRESS_MAX];   /* the agent check's, HOST:PORT */
        bool draining;
        int64_t warm, in_flight, starting, waiting, max, target, created_total;
        int64_t sessions_active, sessions_paused;
} MemberRecord;

/* Whether s is HOST:PORT with a host of [a-z0-9.-] (or [v6] in brackets) and a port 1..65535. Pure. */
bool member_address_valid(const char *s);

/* The record as JSON (caller frees); NULL on out of memory. Pure. */
char *member_record_format(const MemberRecord *m);

/* json into *ret: 0, or -EBADMSG for anything but a whole, valid record. Pure. */
int member_record_parse(const char *json, MemberRecord *ret);

/* The agent port for a member's address: the port after its own (SANDBOXD_MEMBER_ADDRESS's + 1),
 * on the same host, into ret. -EINVAL for an address that is not valid or a port of 65535. Pure. */
int member_agent_address(const char *address, char ret[static MEMBER_ADDRESS_MAX]);

/* The file whose presence drains the member (sandboxctl drain makes it, undrain removes it;
 * sandboxd-member watches its directory): MEMBER_DRAIN_NAME beside the database at db_path, the
 * member's own state, into buf (size bytes); the directory's length into *ret_dir_len.
 * -ENAMETOOLONG. Pure. */
#define MEMBER_DRAIN_NAME "member-drain"
int member_drain_path(const char *db_path, char *buf, size_t size, size_t *ret_dir_len);
