/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nspawn/unit-name.h"

/* Unit and machine names allow these without escaping; machine names (host names) must stay under 64. */
static int id_valid(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return 0;
        return s[0] != '-' && s[n - 1] != '-';
}

int unit_name_sandbox_id(const char *prefix, const uint8_t random[static SANDBOX_ID_RANDOM_CHARS], char ret[static SANDBOX_ID_MAX]) {
        static const char base32[] = "abcdefghijklmnopqrstuvwxyz234567";
        char id[SANDBOX_ID_MAX];
        int n;

        if (!id_valid(prefix, SANDBOX_ID_MAX - SANDBOX_ID_RANDOM_CHARS - 2))
                return -EINVAL;

        n = snprintf(id, sizeof(id), "%s-", prefix);
        for (size_t i = 0; i < SANDBOX_ID_RANDOM_CHARS; i++)
                id[n + i] = base32[random[i] & 31];
        id[n + SANDBOX_ID_RANDOM_CHARS] = 0;

        memcpy(ret, id, SANDBOX_ID_MAX);
        return 0;
}

int unit_name_from_id(const char *id, char *ret, size_t size) {
        if (!id_valid(id, SANDBOX_ID_MAX - 1))
                return -EINVAL;
        if ((size_t) snprintf(ret, size, "%s.service", id) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int member_name_valid(const char *name) {
        size_t n = strlen(name);

        return n > 0 && n < MEMBER_NAME_MAX && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

int session_id_member(const char *id, char ret[static MEMBER_NAME_MAX]) {
        size_t n = strlen(id), member;

        if (strncmp(id, "session-", 8) != 0 || n < 8 + SANDBOX_ID_RANDOM_CHARS ||
            strspn(id + n - SANDBOX_ID_RANDOM_CHARS, "abcdefghijklmnopqrstuvwxyz234567") != SANDBOX_ID_RANDOM_CHARS)
                return -EINVAL;
        if (n == 8 + SANDBOX_ID_RANDOM_CHARS) {
                ret[0] = 0;
                return 0;
        }
        /* "session-" NAME "-" RANDOM */
        member = n - 8 - SANDBOX_ID_RANDOM_CHARS - 1;
        if (id[n - SANDBOX_ID_RANDOM_CHARS - 1] != '-' || member == 0 || member >= MEMBER_NAME_MAX)
                return -EINVAL;
        memcpy(ret, id + 8, member);
        ret[member] = 0;
        return member_name_valid(ret) ? 0 : -EINVAL;
}

int session_id_valid(const char *id) {
        char member[MEMBER_NAME_MAX];

        return session_id_member(id, member) >= 0;
}
