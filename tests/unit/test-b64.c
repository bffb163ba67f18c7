/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/b64.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

/* Explicit lengths, so binary cases may hold NUL bytes. */
typedef struct Vector {
        const char *raw;
        size_t raw_len;
        const char *b64;
} Vector;

#define V(r, b) \
        { r, sizeof(r) - 1, b }

static const Vector vectors[] = {
        /* RFC 4648 section 10 */
        V("", ""),
        V("f", "Zg=="),
        V("fo", "Zm8="),
        V("foo", "Zm9v"),
        V("foob", "Zm9vYg=="),
        V("fooba", "Zm9vYmE="),
        V("foobar", "Zm9vYmFy"),
        /* binary: NUL and 0xff bytes, both ends of the alphabet */
        V("\0", "AA=="),
        V("\0\0", "AAA="),
        V("\0\0\0", "AAAA"),
        V("\xff", "/w=="),
        V("\xff\xff", "//8="),
        V("\xff\xff\xff", "////"),
        V("\0\xff\0", "AP8A"),
        V("a\0b", "YQBi"),
        V("\xfb\xff", "+/8="),
        V("\x14\xfb\x9c\x03\xd9\x7e", "FPucA9l+"),
        V("\x14\xfb\x9c\x03\xd9", "FPucA9k="),
        V("\x14\xfb\x9c\x03", "FPucAw=="),
};

static void test_vectors(void) {
        for (size_t i = 0; i < ELEMENTSOF(vectors); i++) {
                const Vector *v = &vectors[i];
                size_t b64_len = strlen(v->b64), enc_len = 0, dec_len = 0;
                cleanup_free char *enc = b64_encode((const uint8_t *) v->raw, v->raw_len, &enc_len);
                cleanup_free uint8_t *dec = NULL;
                int r;

                tap_is_str(enc, v->b64, "encode vector %zu -> '%s'", i, v->b64);
                tap_is_int(enc_len, b64_len, "encode vector %zu: length %zu", i, b64_len);
                tap_is_int(b64_decoded_size(v->b64, b64_len), v->raw_len, "decoded size of '%s' is %zu", v->b64, v->raw_len);

                r = b64_decode(v->b64, b64_len, &dec, &dec_len);
                tap_is_int(r, 0, "decode '%s'", v->b64);
                tap_ok(r == 0 && dec_len == v->raw_len && memcmp(dec, v->raw, v->raw_len) == 0 && dec[dec_len] == 0,
                       "decode '%s': %zu bytes back, NUL-terminated", v->b64, v->raw_len);
        }
}

static void test_encode_no_len(void) {
        cleanup_free char *enc = b64_encode((const uint8_t *) "foob", 4, NULL);

        tap_is_str(enc, "Zm9vYg==", "encode with ret_len NULL");
}

/* Every prefix of the 256 byte values survives encode and decode, across all three tail shapes. */
static void test_round_trip(void) {
        uint8_t all[256];
        size_t bad = 0;

        for (size_t i = 0; i < sizeof(all); i++)
                all[i] = (uint8_t) (255 - i);

        for (size_t n = 0; n <= sizeof(all); n++) {
                size_t enc_len = 0, dec_len = 0;
                cleanup_free char *enc = b64_encode(all, n, &enc_len);
                cleanup_free uint8_t *dec = NULL;

                if (!enc || enc_len != (n + 2) / 3 * 4 || strlen(enc) != enc_len ||
                    b64_decode(enc, enc_len, &dec, &dec_len) != 0 || dec_len != n || memcmp(dec, all, n) != 0) {
                        tap_diag("round trip failed for %zu bytes", n);
                        bad++;
                }
        }
        tap_is_int(bad, 0, "round trip of 257 binary prefixes (0..256 bytes)");
}

typedef struct Invalid {
        const char *s;
        size_t len;
        const char *why;
} Invalid;

#define I(s, why) \
        { s, sizeof(s) - 1, why }

static const Invalid invalid[] = {
        I("Z", "length 1"),
        I("Zg", "unpadded, length 2"),
        I("Zg=", "length 3"),
        I("Zm9vY", "length 5"),
        I("Zg===", "length 5 with padding"),
        I("Zm9v!mFy", "'!' is not in the alphabet"),
        I("Zm9v-_Fy", "URL-safe alphabet"),
        I("Zm9v\x80mFy", "byte 0x80"),
        I("Zm9v\xffmFy", "byte 0xff"),
        I("Zm9v\0mFy", "embedded NUL"),
        I("Zm9 YmFy", "space"),
        I("Zm9v\nmFy", "newline"),
        I("Zm9vYg==\n\n\n\n", "trailing newlines"),
        I("\tZm9vYmF", "leading tab"),
        I("Zm\r\nYmFy", "CRLF"),
        I("=Zg=", "'=' first"),
        I("Z=g=", "'=' inside a quantum"),
        I("Zm=v", "'=' before data"),
        I("Zg=A", "'=' then data"),
        I("Zg==Zg==", "padding before the last quantum"),
        I("Zm9v====", "a quantum of padding only"),
        I("====", "padding only"),
        I("Z===", "three padding characters"),
        I("Zh==", "non-zero padding bits (one byte)"),
        I("Zm9=", "non-zero padding bits (two bytes)"),
        I("//9=", "non-zero padding bits after 0xff 0xff"),
        I("/x==", "non-zero padding bits after 0xff"),
};

static void test_invalid(void) {
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                const Invalid *v = &invalid[i];
                uint8_t sentinel = 0, *dec = &sentinel;
                size_t dec_len = 12345;
                int r;

                tap_is_int(b64_decoded_size(v->s, v->len), -EINVAL, "decoded size rejects %s", v->why);
                r = b64_decode(v->s, v->len, &dec, &dec_len);
                tap_ok(r == -EINVAL && dec == &sentinel && dec_len == 12345, "decode rejects %s, outputs untouched", v->why);
                if (dec != &sentinel)
                        free(dec);
        }
}

int main(void) {
        test_vectors();
        test_encode_no_len();
        test_round_trip();
        test_invalid();
        return tap_done();
}
