/* SPDX-License-Identifier: MIT */
/* The broker's record of which machine holds which host UID range (uid-range.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/macro.h"
#include "nspawn/broker/uid-range.h"

uint32_t uid_range_base(uint32_t n) {
        return (0x8U + n % UID_RANGE_COUNT) << 16;
}

uint32_t uid_range_of_id(const char *id) {
        uint32_t h = 2166136261U;

        for (const char *p = id; *p; p++)
                h = (h ^ (uint8_t) *p) * 16777619U;
        return h % (0x6fffU - 0x8U);
}

static void range_name(uint32_t base, char buf[static 16]) {
        (void) snprintf(buf, 16, "%08" PRIx32, base);
}

/* A reservation's name back into its range: exactly 8 lower-case hex digits of a base in the space. */
static int range_parse(const char *name, uint32_t *ret) {
        char *end = NULL;
        unsigned long v;

        if (strlen(name) != 8 || strspn(name, "0123456789abcdef") != 8)
                return -EINVAL;
        v = strtoul(name, &end, 16);
        if (*end || v % 0x10000U != 0 || v < 0x80000U || v > uid_range_base(UID_RANGE_COUNT - 1))
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

int uid_range_reserve(int dir_fd, const char *owner, uint32_t hint, bool exact, uint32_t *ret_base) {
        char name[16];

        if (!*owner || strchr(owner, '/'))
                return -EINVAL;
        for (uint32_t i = 0; i < (exact ? 1 : UID_RANGE_COUNT); i++) {
                uint32_t base = uid_range_base(hint % UID_RANGE_COUNT + i);

                range_name(base, name);
                if (symlinkat(owner, dir_fd, name) == 0) {
                        *ret_base = base;
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return exact ? -EBUSY : -EUSERS;
}

int uid_range_foreach(int dir_fd, UidRangeFunc f, void *userdata) {
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;
        struct dirent *de;

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                char owner[128];
                uint32_t base;
                ssize_t n;

                if (range_parse(de->d_name, &base) < 0)
                        continue;
                n = readlinkat(dir_fd, de->d_name, owner, sizeof(owner) - 1);
                if (n <= 0)
                        continue;
                owner[n] = 0;
                f(owner, base, userdata);
        }
        (void) closedir(d);
        return 0;
}

typedef struct Find {
        const char *owner;
        uint32_t base;
        int found;
} Find;

static void find_one(const char *owner, uint32_t base, void *userdata) {
        Find *f = userdata;

        if (strcmp(owner, f->owner) == 0 && !f->found) {
                f->base = base;
                f->found = 1;
        }
}

int uid_range_find(int dir_fd, const char *owner, uint32_t *ret_base) {
        Find f = {.owner = owner};
        int r = uid_range_foreach(dir_fd, find_one, &f);

        if (r < 0)
                return r;
        if (!f.found)
                return -ENOENT;
        *ret_base = f.base;
        return 0;
}

typedef struct Release {
        int dir_fd;
        const char *owner;
        int n, error;
} Release;

static void release_one(const char *owner, uint32_t base, void *userdata) {
        Release *rel = userdata;
        char name[16];

        if (strcmp(owner, rel->owner) != 0)
                return;
        range_name(base, name);
        if (unlinkat(rel->dir_fd, name, 0) == 0)
                rel->n++;
        else if (errno != ENOENT)
                rel->error = -errno;
}

int uid_range_release(int dir_fd, const char *owner) {
        Release rel = {.dir_fd = dir_fd, .owner = owner};
        int r = uid_range_foreach(dir_fd, release_one, &rel);

        if (r < 0)
                return r;
        return rel.error < 0 ? rel.error : rel.n;
}
