/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SANDBOX_ID_RANDOM_CHARS 12
#define SANDBOX_ID_MAX 64

/* Builds "<prefix>-<12 chars of [a-z2-7]>" from 12 random bytes into ret (SANDBOX_ID_MAX bytes).
 * -EINVAL if the prefix is empty, too long, or not [a-z0-9-]. Pure. */
int unit_name_sandbox_id(const char *prefix, const uint8_t random[static SANDBOX_ID_RANDOM_CHARS], char ret[static SANDBOX_ID_MAX]);

/* "<id>.service" into ret (SANDBOX_ID_MAX + 8 bytes); -EINVAL unless id is [a-z0-9-], 1..63 chars. */
int unit_name_from_id(const char *id, char *ret, size_t size);
