/* SPDX-License-Identifier: MIT */
/* The one check of the paths a client names files by: the validator's and the runner's. */
#include <errno.h>
#include <string.h>

#include "lib/path-util.h"

int path_relative_check(const char *path, size_t len, char *ret, size_t size) {
        /* The normal form is built as the components come: it is never longer than path, and ".."
         * takes back the last one written. Without ret it is only counted. */
        size_t depth = 0, out = 0, i = 0;

        if (len == 0 || len > PATH_MAX_BYTES || memchr(path, 0, len))
                return -EINVAL;
        if (path[0] == '/')
                return -EXDEV;
        if (path[len - 1] == '/')
                return -EINVAL;
        if (ret && size <= len)
                return -ENAMETOOLONG;

        while (i < len) {
                size_t start = i, clen;

                while (i < len && path[i] != '/')
                        i++;
                clen = i - start;
                i++; /* skip the '/' */

                if (clen > PATH_COMPONENT_MAX_BYTES)
                        return -EINVAL;
                if (clen == 0 || (clen == 1 && path[start] == '.'))
                        continue;
                if (clen == 2 && path[start] == '.' && path[start + 1] == '.') {
                        if (depth == 0)
                                return -EXDEV;
                        depth--;
                        if (ret)
                                while (out > 0 && ret[--out] != '/')
                                        ;
                        continue;
                }
                if (ret) {
                        if (depth > 0)
                                ret[out++] = '/';
                        memcpy(ret + out, path + start, clen);
                        out += clen;
                }
                depth++;
        }

        /* "a/.." or "." resolve to the directory itself, which is no file. */
        if (depth == 0)
                return -EINVAL;
        if (ret)
                ret[out] = 0;
        return 0;
}
