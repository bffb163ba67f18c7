/* SPDX-License-Identifier: MIT */
/* The image names that the workers take from a request and that the broker looks up, one rule. */
#include <errno.h>
#include <string.h>

#include "lib/image-name.h"

int image_name_from_ref(const char *ref, char *ret, size_t size) {
        const char *name = strrchr(ref, '/');
        size_t n;

        name = name ? name + 1 : ref;
        n = strcspn(name, ":@");
        if (n == 0 || n > 64 || n >= size || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= '0' && name[0] <= '9')))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", name[i]))
                        return -EINVAL;
        memcpy(ret, name, n);
        ret[n] = 0;
        return 0;
}
