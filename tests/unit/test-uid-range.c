/* SPDX-License-Identifier: MIT */
/* The UID range reservations, in a fresh directory: distinct ranges, exact ones, release, and what
 * happens when every range is taken. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nspawn/broker/uid-range.h"
#include "tests/unit/tap.h"

static void count_one(const char *owner, uint32_t base, void *userdata) {
        (void) owner;
        (void) base;
        (*(unsigned *) userdata)++;
}

static void remove_all(const char *owner, uint32_t base, void *userdata) {
        char name[16];

        (void) owner;
        (void) snprintf(name, sizeof(name), "%08x", base);
        (void) unlinkat(*(int *) userdata, name, 0);
}

int main(void) {
        char dir[] = P_tmpdir "/test-uid-range.XXXXXX";
        uint32_t a = 0, b = 0, c = 0, found = 0;
        unsigned n = 0;
        int fd, r;

        if (!mkdtemp(dir) || (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                tap_skip("no temporary directory", "uid ranges");
                return tap_done();
        }
        tap_ok(uid_range_base(0) == 0x80000U && uid_range_base(UID_RANGE_COUNT - 1) == 0x6ffe0000U, "the space is nspawn's pick space");
        tap_ok(uid_range_base(UID_RANGE_COUNT) == uid_range_base(0), "range numbers wrap");
        tap_ok(uid_range_reserve(fd, "machine-aaaaaaaaaaaa", 5, false, &a) == 0 && a == uid_range_base(5), "a free hint is taken");
        tap_ok(uid_range_reserve(fd, "machine-bbbbbbbbbbbb", 5, false, &b) == 0 && b == uid_range_base(6), "a taken hint: the next free one");
        tap_ok(uid_range_reserve(fd, "session-cccccccccccc", 5, true, &c) == -EBUSY, "exact and taken: refused");
        tap_ok(uid_range_reserve(fd, "session-cccccccccccc", 7, true, &c) == 0 && c == uid_range_base(7), "exact and free: taken");
        tap_ok(uid_range_reserve(fd, "a/b", 9, false, &c) == -EINVAL && uid_range_reserve(fd, "", 9, false, &c) == -EINVAL,
               "an owner that is no unit id is refused");
        tap_ok(uid_range_find(fd, "machine-bbbbbbbbbbbb", &found) == 0 && found == b, "find: the holder's range");
        tap_ok(uid_range_find(fd, "machine-dddddddddddd", &found) == -ENOENT, "find: none held");
        tap_ok(uid_range_release(fd, "machine-aaaaaaaaaaaa") == 1 && uid_range_find(fd, "machine-aaaaaaaaaaaa", &found) == -ENOENT,
               "release: the range is given up");
        tap_ok(uid_range_release(fd, "machine-aaaaaaaaaaaa") == 0, "release again: nothing to give up");
        r = symlinkat("junk", fd, "not-a-range");
        if (r == 0)
                r = uid_range_foreach(fd, count_one, &n);
        tap_ok(r == 0 && n == 2, "foreach: reservations only (%u)", n);

        /* Every range taken: the next start is refused, and one given up is the one handed out. */
        for (uint32_t i = 0; i < UID_RANGE_COUNT; i++)
                (void) uid_range_reserve(fd, "machine-eeeeeeeeeeee", i, true, &a);
        r = uid_range_reserve(fd, "machine-ffffffffffff", 123, false, &a);
        tap_ok(r == -EUSERS, "all %u ranges taken: -EUSERS (%d)", UID_RANGE_COUNT, r);
        tap_ok(uid_range_release(fd, "machine-bbbbbbbbbbbb") == 1 && uid_range_reserve(fd, "machine-ffffffffffff", 123, false, &a) == 0 &&
                       a == b,
               "one given up: that one is handed out");

        (void) uid_range_foreach(fd, remove_all, &fd);
        (void) unlinkat(fd, "not-a-range", 0);
        (void) close(fd);
        tap_ok(rmdir(dir) == 0, "nothing left behind");
        return tap_done();
}
