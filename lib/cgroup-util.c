/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/cgroup-util.h"

int cgroup_read_number(const char *path, const char *key, uint64_t *ret) {
        char line[256];
        size_t n = key ? strlen(key) : 0;
        int r = -ENOENT;
        FILE *f = fopen(path, "re");

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (!key || (strncmp(line, key, n) == 0 && line[n] == ' ')) {
                        r = sscanf(line + n, "%" SCNu64, ret) == 1 ? 0 : -EBADMSG;
                        break;
                }
        if (r == -ENOENT && ferror(f))
                r = -EIO;
        (void) fclose(f);
        return r;
}
