/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* The local image name of an image reference: its last path component without tag or digest
 * ("registry.example/agent-x:abc123" -> "agent-x"), into ret. -EINVAL if that is no valid machine
 * image name ([A-Za-z0-9][A-Za-z0-9._-]*, at most 64 bytes) or does not fit in size bytes. Pure. */
int image_name_from_ref(const char *ref, char *ret, size_t size);
