/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/macro.h"
#include "lib/utf8.h"
#include "tests/unit/tap.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

typedef struct Case {
        const char *name;
        const char *in;
        size_t in_len;
        const char *out;
        size_t out_len;
} Case;

#define C(name, in, out) \
        { name, in, sizeof(in) - 1, out, sizeof(out) - 1 }
#define SAME(name, in) C(name, in, in)

static const Case cases[] = {
        SAME("empty", ""),
        SAME("ASCII", "print('hello, world')\n"),
        SAME("control characters", "\x01\x1f\x7f\t\r\n"),
        SAME("embedded NUL preserved", "a\0b\0"),
        SAME("2-byte U+00E9", "caf\xc3\xa9"),
        SAME("2-byte U+0080 (smallest)", "\xc2\x80"),
        SAME("2-byte U+07FF (largest)", "\xdf\xbf"),
        SAME("3-byte U+20AC", "\xe2\x82\xac"),
        SAME("3-byte U+0800 (smallest)", "\xe0\xa0\x80"),
        SAME("3-byte U+D7FF (below surrogates)", "\xed\x9f\xbf"),
        SAME("3-byte U+E000 (above surrogates)", "\xee\x80\x80"),
        SAME("3-byte U+FFFD itself", R),
        SAME("3-byte U+FEFF (BOM kept)", "\xef\xbb\xbf"),
        SAME("4-byte U+1F600", "\xf0\x9f\x98\x80"),
        SAME("4-byte U+10000 (smallest)", "\xf0\x90\x80\x80"),
        SAME("4-byte U+10FFFF (largest)", "\xf4\x8f\xbf\xbf"),
        SAME("mixed widths", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"),

        C("lone continuation 0x80", "\x80", R),
        C("lone continuation inside ASCII", "a\x80z", "a" R "z"),
        C("two continuations: two replacements", "\xbf\xbf", R R),
        C("2-byte lead truncated at end", "\xc3", R),
        C("3-byte sequence truncated at end: one replacement", "\xe2\x82", R),
        C("4-byte sequence truncated at end: one replacement", "\xf0\x9f\x98", R),
        C("truncated sequence followed by ASCII", "\xe2\x82z", R "z"),
        C("lead byte followed by a lead byte", "\xc3\xc3\xa9", R "\xc3\xa9"),
        C("overlong C0 AF ('/')", "\xc0\xaf", R R),
        C("overlong C1 BF", "\xc1\xbf", R R),
        C("overlong C0 80 (NUL)", "\xc0\x80", R R),
        C("overlong E0 80 80", "\xe0\x80\x80", R R R),
        C("overlong E0 9F BF", "\xe0\x9f\xbf", R R R),
        C("overlong F0 80 80 80", "\xf0\x80\x80\x80", R R R R),
        C("overlong F0 8F BF BF", "\xf0\x8f\xbf\xbf", R R R R),
        C("surrogate ED A0 80 (U+D800)", "\xed\xa0\x80", R R R),
        C("surrogate ED BF BF (U+DFFF)", "\xed\xbf\xbf", R R R),
        C("surrogate pair in CESU-8", "\xed\xa0\xbd\xed\xb8\x80", R R R R R R),
        C("F4 90 80 80 (above U+10FFFF)", "\xf4\x90\x80\x80", R R R R),
        C("F5 80 80 80", "\xf5\x80\x80\x80", R R R R),
        C("F8 five-byte form", "\xf8\x88\x80\x80\x80", R R R R R),
        C("byte FE", "\xfe", R),
        C("byte FF", "\xff", R),
        /* The example of Unicode 15, section 3.9, table 3-8 (maximal subparts). */
        C("Unicode table 3-8", "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
          "a" R R R "b" R "c" R R "d"),
        C("invalid bytes around an embedded NUL", "\xff\0\xff", R "\0" R),
};

/* The length a lead byte announces by its bit pattern alone; 0 for a continuation or 0xf8..0xff. */
static size_t seq_len(uint8_t c) {
        if (c < 0x80)
                return 1;
        if ((c & 0xe0) == 0xc0)
                return 2;
        if ((c & 0xf0) == 0xe0)
                return 3;
        if ((c & 0xf8) == 0xf0)
                return 4;
        return 0;
}

/* An independent well-formedness check: decode the code point, then reject overlongs, surrogates
 * and values above U+10FFFF (rather than the module's per-lead second-byte ranges). */
static bool utf8_well_formed(const uint8_t *s, size_t n) {
        static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};

        for (size_t i = 0; i < n;) {
                size_t len = seq_len(s[i]);
                uint32_t cp;

                if (len == 0 || i + len > n)
                        return false;
                cp = len == 1 ? s[i] : s[i] & (0x7f >> len);
                for (size_t k = 1; k < len; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (s[i + k] & 0x3f);
                }
                if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += len;
        }
        return true;
}

static void test_cases(void) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const Case *c = &cases[i];
                size_t len = 0;
                bool same = c->in_len == c->out_len && memcmp(c->in, c->out, c->in_len) == 0;
                cleanup_free char *out = utf8_sanitize((const uint8_t *) c->in, c->in_len, &len);

                tap_ok(out && len == c->out_len && memcmp(out, c->out, len) == 0 && out[len] == 0, "%s", c->name);
                /* Keeps the checker that test_random() relies on honest. */
                tap_ok(utf8_well_formed((const uint8_t *) c->in, c->in_len) == same, "%s: reference checker says %s", c->name,
                       same ? "valid" : "invalid");
        }
}

static void test_no_len(void) {
        cleanup_free char *out = utf8_sanitize((const uint8_t *) "a\xff", 2, NULL);

        tap_is_str(out, "a" R, "ret_len may be NULL");
}

/* Random bytes, biased towards the interesting ranges: the output is always well-formed, valid
 * input comes back unchanged, and no input byte yields more than one replacement. */
static void test_random(void) {
        static const uint8_t interesting[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
                                              0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
        uint32_t seed = 0x5eed;
        size_t ill_formed_out = 0, changed_valid = 0, too_long = 0, n_valid = 0;

        for (size_t round = 0; round < 20000; round++) {
                uint8_t in[24];
                size_t n = round % (sizeof(in) + 1), len = 0;
                cleanup_free char *out = NULL;

                for (size_t i = 0; i < n; i++) {
                        seed = seed * 1103515245U + 12345U;
                        in[i] = interesting[(seed >> 16) % ELEMENTSOF(interesting)];
                }
                out = utf8_sanitize(in, n, &len);
                if (!out || !utf8_well_formed((const uint8_t *) out, len) || out[len] != 0)
                        ill_formed_out++;
                if (utf8_well_formed(in, n)) {
                        n_valid++;
                        if (!out || len != n || memcmp(out, in, n) != 0)
                                changed_valid++;
                }
                if (len > 3 * n)
                        too_long++;
        }
        tap_is_int(ill_formed_out, 0, "20000 random inputs: output always well-formed and NUL-terminated");
        tap_ok(n_valid > 100 && changed_valid == 0, "random inputs that are valid (%zu) come back unchanged", n_valid);
        tap_is_int(too_long, 0, "output never exceeds three bytes per input byte");
}

/* A chunk of output cut anywhere: what is passed on now is whole, and what waits completes it. */
static void test_whole_prefix(void) {
        static const struct {
                const char *s;
                size_t want;
                const char *name;
        } prefixes[] = {
                {"", 0, "nothing"},
                {"abc", 3, "ASCII: all"},
                {"caf\xc3", 3, "a 2-byte sequence's lead alone waits"},
                {"caf\xc3\xa9", 5, "the whole 2-byte sequence: all"},
                {"x\xe2\x82", 1, "2 of a 3-byte sequence wait"},
                {"x\xf0\x9f\x98", 1, "3 of a 4-byte sequence wait"},
                {"x\xf0\x9f\x98\x80", 5, "the whole 4-byte sequence: all"},
                {"x\xff", 2, "a byte that starts nothing: passed on (it is replaced, not completed)"},
                {"x\xe0\x80", 3, "a lead and a byte it can never take: passed on"},
                {"x\x80\x80\x80\x80", 5, "continuations with no lead: passed on"},
                {"\xf0\x9f", 0, "only the start of a sequence: it all waits"},
        };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                tap_is_int((long long) utf8_whole_prefix((const uint8_t *) prefixes[i].s, strlen(prefixes[i].s)), (long long) prefixes[i].want, "%s",
                           prefixes[i].name);
}

int main(void) {
        test_whole_prefix();
        test_cases();
        test_no_len();
        test_random();
        return tap_done();
}
