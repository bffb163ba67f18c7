/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/unit-name.h"
#include "tests/unit/tap.h"

static const uint8_t zeros[SANDBOX_ID_RANDOM_CHARS];
static const uint8_t counting[SANDBOX_ID_RANDOM_CHARS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const uint8_t high[SANDBOX_ID_RANDOM_CHARS] = {26, 27, 28, 29, 30, 31, 32, 63, 64, 128, 224, 255};

#define P50 "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"

typedef struct IdCase {
        const char *prefix;
        const uint8_t *random;
        const char *expected; /* NULL: -EINVAL */
} IdCase;

static const IdCase id_cases[] = {
        {"sandbox", zeros, "sandbox-aaaaaaaaaaaa"},
        {"sandbox", counting, "sandbox-abcdefghijkl"},
        {"s", high, "s-234567a7aaa7"}, /* only the low 5 bits count */
        {"a-b", zeros, "a-b-aaaaaaaaaaaa"},
        {"0", zeros, "0-aaaaaaaaaaaa"},
        {P50, zeros, P50 "-aaaaaaaaaaaa"}, /* 63 characters: a host name's limit */
        {P50 "k", zeros, NULL},
        {"", zeros, NULL},
        {"-a", zeros, NULL},
        {"a-", zeros, NULL},
        {"-", zeros, NULL},
        {"Sandbox", zeros, NULL},
        {"sand_box", zeros, NULL},
        {"sand.box", zeros, NULL},
        {"sand/box", zeros, NULL},
        {"../x", zeros, NULL},
        {"sand box", zeros, NULL},
        {"sand\\x2dbox", zeros, NULL},
        {"caf\xc3\xa9", zeros, NULL},
};

static void test_sandbox_id(void) {
        for (size_t i = 0; i < ELEMENTSOF(id_cases); i++) {
                const IdCase *c = &id_cases[i];
                char id[SANDBOX_ID_MAX];
                int r;

                memset(id, 'X', sizeof(id));
                r = unit_name_sandbox_id(c->prefix, c->random, id);
                if (c->expected) {
                        tap_is_int(r, 0, "sandbox id from prefix '%s'", c->prefix);
                        tap_is_str(r == 0 ? id : NULL, c->expected, "sandbox id '%s'", c->expected);
                } else {
                        tap_is_int(r, -EINVAL, "sandbox id rejects prefix '%s'", c->prefix);
                        tap_ok(id[0] == 'X' && id[SANDBOX_ID_MAX - 1] == 'X', "prefix '%s': ret untouched", c->prefix);
                }
        }
}

/* Any random bytes give [a-z2-7] characters, so the id is a valid unit name without escaping. */
static void test_sandbox_id_alphabet(void) {
        size_t bad = 0;

        for (unsigned b = 0; b < 256; b++) {
                uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
                char id[SANDBOX_ID_MAX], unit[SANDBOX_ID_MAX + 8];

                memset(rnd, (int) b, sizeof(rnd));
                if (unit_name_sandbox_id("sandbox", rnd, id) < 0 || strlen(id) != strlen("sandbox-") + SANDBOX_ID_RANDOM_CHARS ||
                    strspn(id + strlen("sandbox-"), "abcdefghijklmnopqrstuvwxyz234567") != SANDBOX_ID_RANDOM_CHARS ||
                    unit_name_from_id(id, unit, sizeof(unit)) < 0) {
                        tap_diag("byte %u gives '%s'", b, id);
                        bad++;
                }
        }
        tap_is_int(bad, 0, "all 256 byte values give [a-z2-7] ids that unit_name_from_id() accepts");
}

#define ID63 P50 "-abcdefghijkl"

typedef struct UnitCase {
        const char *id;
        int expected;
        const char *unit;
} UnitCase;

static const UnitCase unit_cases[] = {
        {"sandbox-abcdefghijkl", 0, "sandbox-abcdefghijkl.service"},
        {"a", 0, "a.service"},
        {"a--b", 0, "a--b.service"},
        {ID63, 0, ID63 ".service"},
        {ID63 "m", -EINVAL, NULL},
        {"", -EINVAL, NULL},
        {"-a", -EINVAL, NULL},
        {"a-", -EINVAL, NULL},
        {"A", -EINVAL, NULL},
        {"a.service", -EINVAL, NULL},
        {"a@b", -EINVAL, NULL},
        {"a\\x2db", -EINVAL, NULL},
        {"../a", -EINVAL, NULL},
        {"a/b", -EINVAL, NULL},
        {"a b", -EINVAL, NULL},
        {"a\tb", -EINVAL, NULL},
};

static void test_from_id(void) {
        for (size_t i = 0; i < ELEMENTSOF(unit_cases); i++) {
                const UnitCase *c = &unit_cases[i];
                char unit[SANDBOX_ID_MAX + 8] = "untouched";
                int r = unit_name_from_id(c->id, unit, sizeof(unit));

                tap_is_int(r, c->expected, "unit name from '%s' -> %d", c->id, c->expected);
                tap_is_str(unit, c->expected == 0 ? c->unit : "untouched", "unit name from '%s' is '%s'", c->id,
                           c->expected == 0 ? c->unit : "untouched");
        }
}

static void test_from_id_size(void) {
        char unit[64];

        tap_is_int(unit_name_from_id("abc", unit, strlen("abc.service") + 1), 0, "buffer of exactly the right size");
        tap_is_str(unit, "abc.service", "... holds the whole name");
        tap_is_int(unit_name_from_id("abc", unit, strlen("abc.service")), -ENAMETOOLONG, "one byte short: -ENAMETOOLONG");
}

typedef struct SessionCase {
        const char *id;
        const char *member; /* NULL: -EINVAL */
} SessionCase;

static const SessionCase session_cases[] = {
        {"session-abcdefghijkl", ""},
        {"session-m1-abcdefghijkl", "m1"},
        {"session-host0123456789ab-abcdefghijkl", "host0123456789ab"}, /* 16 characters: the most */
        {"session-host0123456789abc-abcdefghijkl", NULL},
        {"session--abcdefghijkl", NULL},
        {"session-m-1-abcdefghijkl", NULL}, /* a member name has no '-' */
        {"session-M1-abcdefghijkl", NULL},
        {"session-m1_abcdefghijkl", NULL},
        {"session-m1abcdefghijkl", NULL}, /* no '-' before the random part */
        {"session-abcdefghijk1", NULL},   /* 1 is not of base32's alphabet */
        {"session-abcdefghijk", NULL},
        {"session-m1-abcdefghijklm", NULL}, /* "m1-a" is no member name */
        {"sandbox-abcdefghijkl", NULL},
        {"session-", NULL},
        {"", NULL},
};

static void test_session_id(void) {
        for (size_t i = 0; i < ELEMENTSOF(session_cases); i++) {
                const SessionCase *c = &session_cases[i];
                char member[MEMBER_NAME_MAX] = "untouched";
                int r = session_id_member(c->id, member);

                tap_is_int(r, c->member ? 0 : -EINVAL, "session id '%s'", c->id);
                if (c->member)
                        tap_is_str(member, c->member, "... names member '%s'", c->member);
                tap_is_int(session_id_valid(c->id), !!c->member, "... valid: %d", !!c->member);
        }
        tap_is_int(member_name_valid("m1"), 1, "member name m1");
        tap_is_int(member_name_valid(""), 0, "empty member name");
        tap_is_int(member_name_valid("a.b"), 0, "member name with a dot");
}

int main(void) {
        test_session_id();
        test_sandbox_id();
        test_sandbox_id_alphabet();
        test_from_id();
        test_from_id_size();
        return tap_done();
}
