/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/macro.h"
#include "lib/path-util.h"
#include "tests/unit/tap.h"

typedef struct PathCase {
        const char *path;
        size_t len; /* 0: strlen(path) */
        int expected;
} PathCase;

static const PathCase path_cases[] = {
        /* climbing out or absolute */
        {"..", 0, -EXDEV},
        {"../x", 0, -EXDEV},
        {"../../x", 0, -EXDEV},
        {"/etc/passwd", 0, -EXDEV},
        {"/", 0, -EXDEV},
        {"//x", 0, -EXDEV},
        {"a/../../x", 0, -EXDEV},
        {"a/b/../../../x", 0, -EXDEV},
        {"./../x", 0, -EXDEV},
        {"a/./../.././x", 0, -EXDEV},
        {"a//..//..//x", 0, -EXDEV},
        /* names of files inside */
        {"a", 0, 0},
        {"a/b/c.txt", 0, 0},
        {"a/../b", 0, 0},
        {"a/b/../c", 0, 0},
        {"a//b", 0, 0},
        {"./a", 0, 0},
        {"././a", 0, 0},
        {"...", 0, 0},
        {"..a", 0, 0},
        {"a..", 0, 0},
        {".hidden", 0, 0},
        {"a b\\c:d", 0, 0},
        {"caf\xc3\xa9.txt", 0, 0},
        /* names of no file */
        {"", 0, -EINVAL},
        {".", 0, -EINVAL},
        {"./", 0, -EINVAL},
        {"a/", 0, -EINVAL},
        {"a/b/", 0, -EINVAL},
        {"a/..", 0, -EINVAL},
        {"a/b/../..", 0, -EINVAL},
        {"./.", 0, -EINVAL},
        {"a\0b", 3, -EINVAL},
        {"\0", 1, -EINVAL},
        {"a\0", 2, -EINVAL},
        {"../\0", 4, -EINVAL}, /* the NUL check comes first: a C string view would be "../" */
};

/* A path of len bytes made of components of comp bytes ("aaa/aaa/...", never ending in '/'). */
static char *make_path(size_t len, size_t comp) {
        char *p = malloc(len + 1);

        if (!p)
                abort();
        for (size_t i = 0; i < len; i++)
                p[i] = (i + 1) % (comp + 1) == 0 ? '/' : 'a';
        if (len > 0 && p[len - 1] == '/')
                p[len - 1] = 'b';
        p[len] = 0;
        return p;
}

static void test_path(void) {
        for (size_t i = 0; i < ELEMENTSOF(path_cases); i++) {
                const PathCase *c = &path_cases[i];
                size_t len = c->len ? c->len : strlen(c->path);

                tap_is_int(path_relative_check(c->path, len, NULL, 0), c->expected, "path_relative_check('%s', %zu)", c->path, len);
        }
}

static void test_path_limits(void) {
        static const struct {
                size_t len, comp;
                int expected;
                const char *name;
        } cases[] = {
                {PATH_MAX_BYTES, 100, 0, "4096 bytes"},
                {PATH_MAX_BYTES + 1, 100, -EINVAL, "4097 bytes"},
                {1 << 20, 100, -EINVAL, "1 MiB"},
                {255, 255, 0, "one 255-byte component"},
                {256, 256, -EINVAL, "one 256-byte component"},
                {255 * 3 + 2, 255, 0, "three 255-byte components"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_free char *p = make_path(cases[i].len, cases[i].comp);

                tap_is_int(path_relative_check(p, strlen(p), NULL, 0), cases[i].expected, "path_relative_check: %s", cases[i].name);
        }

        /* The component limit holds anywhere, not only for the first one. */
        char deep[2 + 256 + 1];
        memcpy(deep, "a/", 2);
        memset(deep + 2, 'b', 256);
        deep[sizeof(deep) - 1] = 0;
        tap_is_int(path_relative_check(deep, strlen(deep), NULL, 0), -EINVAL, "path_relative_check: a 256-byte component after 'a/'");
        deep[sizeof(deep) - 2] = 0;
        tap_is_int(path_relative_check(deep, strlen(deep), NULL, 0), 0, "path_relative_check: a 255-byte component after 'a/'");
}


/* The normal form the runner opens: the same file, nothing left to resolve. */
static void test_path_normal(void) {
        static const struct {
                const char *path, *normal;
        } cases[] = {
                {"a", "a"},
                {"a/b/c.txt", "a/b/c.txt"},
                {"a/../b", "b"},
                {"a/b/../c", "a/c"},
                {"a//b", "a/b"},
                {"./a", "a"},
                {"././a/./b", "a/b"},
                {"a/b/../../c", "c"},
                {"a/bb/../../cc/dd/../ee", "cc/ee"},
                {"...", "..."},
                {"..a/a..", "..a/a.."},
                {"x/./y//z/..//w", "x/y/w"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char normal[64] = "";

                tap_is_int(path_relative_check(cases[i].path, strlen(cases[i].path), normal, sizeof(normal)), 0, "'%s' passes", cases[i].path);
                tap_is_str(normal, cases[i].normal, "'%s' is '%s'", cases[i].path, cases[i].normal);
        }

        for (size_t i = 0; i < ELEMENTSOF(path_cases); i++) {
                const PathCase *c = &path_cases[i];
                size_t len = c->len ? c->len : strlen(c->path);
                char normal[64];

                if (c->expected < 0)
                        tap_is_int(path_relative_check(c->path, len, normal, sizeof(normal)), c->expected, "'%s' is refused the same with a buffer", c->path);
        }

        {
                char small[4];

                tap_is_int(path_relative_check("abcd", 4, small, sizeof(small)), -ENAMETOOLONG, "a buffer too small: -ENAMETOOLONG");
                tap_is_int(path_relative_check("abc", 3, small, sizeof(small)), 0, "one that fits");
                tap_is_str(small, "abc", "holds the path");
        }
}

int main(void) {
        test_path();
        test_path_limits();
        test_path_normal();
        return tap_done();
}
