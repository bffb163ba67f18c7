/* SPDX-License-Identifier: MIT */
#pragma once

/* An API key as a cluster keeps it (README, "Several hosts"): in etcd under KEY_PREFIX<name>, one
 * JSON object of db/keys.h's ApiKey (the token's hash, never the token). sandboxctl key add and
 * revoke on any member write it; every member's sandboxd-member mirrors it into its own api_keys
 * within milliseconds, where the workers look keys up as on a single host. A revoked key stays,
 * with its revoked_at, so that no member keeps it in force. */

#include "db/keys.h"

#define KEY_PREFIX "/sandboxd/keys/"

/* The key as JSON (caller frees); NULL on out of memory. Pure. */
char *key_record_format(const ApiKey *k);

/* json into *ret: 0, or -EBADMSG for anything but a whole, valid key (a name of [A-Za-z0-9._-],
 * a hash of 64 lower-case hex digits, quotas not negative). Pure. */
int key_record_parse(const char *json, ApiKey *ret);
