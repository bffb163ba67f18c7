/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#define PATH_MAX_BYTES 4096
#define PATH_COMPONENT_MAX_BYTES 255

/* Checks a client-supplied relative file path lexically: 0 if it names a file strictly inside the
 * directory it is relative to, -EXDEV if it climbs out or is absolute, -EINVAL if it names no file
 * (empty, ".", a trailing "/", an embedded NUL, too long, a component too long). If ret is not
 * NULL, a path that passes is written there in its normal form, without ".", ".." and empty
 * components ("a/../b//c" -> "b/c"); -ENAMETOOLONG if that does not fit in size bytes. Pure. */
int path_relative_check(const char *path, size_t len, char *ret, size_t size);
