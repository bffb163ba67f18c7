/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SANDBOX_ID_RANDOM_CHARS 12
#define SANDBOX_ID_MAX 64

/* Builds "<prefix>-<12 chars of [a-z2-7]>" from 12 random bytes into ret (SANDBOX_ID_MAX bytes).
 * -EINVAL if the prefix is empty, too long, or not [a-z0-9-]. Pure. */
int unit_name_sandbox_id(const char *prefix, const uint8_t random[static SANDBOX_ID_RANDOM_CHARS], char ret[static SANDBOX_ID_MAX]);

/* A cluster member's name (SANDBOXD_MEMBER): [a-z0-9], 1..MEMBER_NAME_MAX - 1 characters, no '-', so
 * that a session's id says where its name ends. */
#define MEMBER_NAME_MAX 17
int member_name_valid(const char *name);

/* A session's id: "session-<12 chars of [a-z2-7]>" on a single host, "session-<member>-<12 chars>" on a
 * cluster's member, which names the host that holds it (the front routes it there). Pure. */
int session_id_valid(const char *id);

/* The member a session's id names into ret ("" for a single host's id); -EINVAL if id is no
 * session id. Pure. */
int session_id_member(const char *id, char ret[static MEMBER_NAME_MAX]);

/* "<id>.service" into ret (SANDBOX_ID_MAX + 8 bytes); -EINVAL unless id is [a-z0-9-], 1..63 chars. */
int unit_name_from_id(const char *id, char *ret, size_t size);
