/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sha256.h"
#include "tests/unit/tap.h"

static const char *hex(const uint8_t d[SHA256_DIGEST_SIZE]) {
        static char buf[2 * SHA256_DIGEST_SIZE + 1];

        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
                (void) snprintf(buf + 2 * i, 3, "%02x", d[i]);
        return buf;
}

static void check(const void *data, size_t len, const char *want, const char *what) {
        uint8_t d[SHA256_DIGEST_SIZE];

        sha256(data, len, d);
        tap_is_str(hex(d), want, "SHA-256 of %s", what);
}

int main(void) {
        /* The examples of FIPS 180-4 (NIST's "SHA256.pdf", "SHA2_Additional.pdf"). */
        check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "\"abc\" (one block)");
        check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "the 448-bit message (two blocks)");
        check("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112,
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "the 896-bit message");
        check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "the empty message");
        {
                size_t n = 1000000;
                char *a = malloc(n);

                if (!a)
                        return 1;
                memset(a, 'a', n);
                check(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "one million 'a'");
                free(a);
        }

        /* Around the padding's edges: 55 bytes is the most that pads within one block, 56 the least
         * that needs a second; 64 and 120 end on a block. Digests from Python's hashlib. */
        {
                static const struct {
                        size_t len;
                        const char *digest;
                } edges[] = {
                        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
                        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
                        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
                        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
                        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
                        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
                        {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
                };
                uint8_t buf[128];

                for (size_t i = 0; i < sizeof(buf); i++)
                        buf[i] = (uint8_t) (i * 7 + 3);
                for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
                        char what[64];

                        (void) snprintf(what, sizeof(what), "%zu bytes (i * 7 + 3)", edges[i].len);
                        check(buf, edges[i].len, edges[i].digest, what);
                }
        }
        return tap_done();
}
