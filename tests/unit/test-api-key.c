/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/api-key.h"
#include "tests/unit/tap.h"

static void test_token(void) {
        char a[API_KEY_TOKEN_LEN + 1], b[API_KEY_TOKEN_LEN + 1], parsed[API_KEY_BEARER_MAX + 1], header[128];

        tap_is_int(api_key_token_new(a), 0, "a token is made");
        tap_is_int(api_key_token_new(b), 0, "and another");
        tap_is_int((long long) strlen(a), (long long) API_KEY_TOKEN_LEN, "of %zu characters", API_KEY_TOKEN_LEN);
        tap_ok(strncmp(a, API_KEY_TOKEN_PREFIX, strlen(API_KEY_TOKEN_PREFIX)) == 0, "starting %s", API_KEY_TOKEN_PREFIX);
        tap_ok(strspn(a + 4, "0123456789abcdef") == 64, "then 64 hex digits");
        tap_ok(strcmp(a, b) != 0, "two tokens differ");
        (void) snprintf(header, sizeof(header), "Bearer %s", a);
        tap_ok(api_key_parse_bearer(header, parsed) == 0 && strcmp(parsed, a) == 0, "a token made is one the header parser takes");
}

static void test_parse(void) {
        static const struct {
                const char *header;
                int r;
                const char *token;
        } cases[] = {
                {NULL, -ENOENT, NULL},
                {"", -ENOENT, NULL},
                {"Bearer abc", 0, "abc"},
                {"bearer abc", 0, "abc"},   /* the scheme in any case (RFC 7235) */
                {"BEARER   abc", 0, "abc"}, /* several spaces */
                {"Bearer abc  ", 0, "abc"}, /* trailing blanks are the header's */
                {"Bearer a-b.c_d~e+f/g==", 0, "a-b.c_d~e+f/g=="},
                {"Bearer", -EINVAL, NULL}, /* no token */
                {"Bearer ", -EINVAL, NULL},
                {"Bearer    ", -EINVAL, NULL},
                {"Bearerabc", -EINVAL, NULL}, /* no space after the scheme */
                {"Basic dXNlcjpwYXNz", -EINVAL, NULL},
                {"Token abc", -EINVAL, NULL},
                {"abc", -EINVAL, NULL},
                {" Bearer abc", -EINVAL, NULL},
                {"Bearer\tabc", -EINVAL, NULL},
                {"Bearer a b", -EINVAL, NULL}, /* one token only */
                {"Bearer a=b", -EINVAL, NULL}, /* '=' only at the end */
                {"Bearer =", -EINVAL, NULL},   /* not only padding */
                {"Bearer a\"b", -EINVAL, NULL},
                {"Bearer a,b", -EINVAL, NULL},
                {"Bearer \xc3\xa9", -EINVAL, NULL},
        };
        char token[API_KEY_BEARER_MAX + 1], header[API_KEY_BEARER_MAX + 16];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int r;

                strcpy(token, "(untouched)");
                r = api_key_parse_bearer(cases[i].header, token);
                tap_is_int(r, cases[i].r, "Authorization: '%s'", cases[i].header ? cases[i].header : "(none)");
                if (r == 0)
                        tap_is_str(token, cases[i].token, "  gives '%s'", cases[i].token);
        }

        /* The longest token taken, and one longer. */
        memcpy(header, "Bearer ", 7);
        memset(header + 7, 'x', API_KEY_BEARER_MAX);
        header[7 + API_KEY_BEARER_MAX] = 0;
        tap_is_int(api_key_parse_bearer(header, token), 0, "a token of %d characters is taken", API_KEY_BEARER_MAX);
        tap_is_int((long long) strlen(token), API_KEY_BEARER_MAX, "  whole");
        header[7 + API_KEY_BEARER_MAX] = 'x';
        header[8 + API_KEY_BEARER_MAX] = 0;
        tap_is_int(api_key_parse_bearer(header, token), -EINVAL, "one of %d is not", API_KEY_BEARER_MAX + 1);
}

/* libcrypto's SHA-256 through api_key_hash(): the examples of FIPS 180-4 (NIST's "SHA256.pdf",
 * "SHA2_Additional.pdf"), and a message around the padding's edges. */
static void test_digest(void) {
        static const struct {
                size_t len; /* of a run of 'a' when msg is NULL */
                const char *msg, *digest, *what;
        } cases[] = {
                {0, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "\"abc\" (one block)"},
                {0, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "the 448-bit message (two blocks)"},
                {0, "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1", "the 896-bit message"},
                {0, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "the empty message"},
                {1000000, NULL, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "one million 'a'"},
                /* 55 'a' pad within one block, 56 need a second (hashlib). */
                {55, NULL, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318", "55 'a'"},
                {56, NULL, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a", "56 'a'"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char h[API_KEY_HASH_SIZE] = "";
                char *run = NULL;
                const char *msg = cases[i].msg;

                if (!msg) {
                        run = malloc(cases[i].len + 1);
                        if (!run) {
                                tap_ok(false, "no memory for %s", cases[i].what);
                                continue;
                        }
                        memset(run, 'a', cases[i].len);
                        run[cases[i].len] = 0;
                        msg = run;
                }
                tap_is_int(api_key_hash(msg, h), 0, "SHA-256 of %s", cases[i].what);
                tap_is_str(h, cases[i].digest, "  is FIPS 180-4's");
                free(run);
        }
}

static void test_hash(void) {
        char h[API_KEY_HASH_SIZE], g[API_KEY_HASH_SIZE];

        /* hashlib.sha256(b"sbx_0000").hexdigest() */
        tap_is_int(api_key_hash("sbx_0000", h), 0, "a token is hashed");
        tap_is_str(h, "1fa83082c1a74f92929ee4669a81dac784efe5486446f261e848171408501d92", "a token's hash: SHA-256 in hex");
        tap_is_int(api_key_hash("sbx_0001", g), 0, "another token is hashed");
        tap_ok(api_key_hash_equal(h, h), "a hash equals itself");
        tap_ok(!api_key_hash_equal(h, g), "not another's");
        strcpy(g, h);
        g[63] = g[63] == '0' ? '1' : '0';
        tap_ok(!api_key_hash_equal(h, g), "a difference in the last character counts");
        strcpy(g, h);
        g[0] = g[0] == '0' ? '1' : '0';
        tap_ok(!api_key_hash_equal(h, g), "and in the first");
}

static void test_name(void) {
        static const struct {
                const char *name;
                bool valid;
        } cases[] = {
                {"ci", true},
                {"team-a.prod_1", true},
                {"A", true},
                {"", false},
                {"-x", false},
                {"a b", false},
                {"a\"b", false},
                {"a/b", false},
                {"a=b", false},
                {"\xc3\xa9", false},
                {"a\tb", false},
        };
        char longest[API_KEY_NAME_MAX + 2];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int(api_key_name_valid(cases[i].name), cases[i].valid, "name '%s'", cases[i].name);
        memset(longest, 'k', API_KEY_NAME_MAX);
        longest[API_KEY_NAME_MAX] = 0;
        tap_ok(api_key_name_valid(longest), "a name of %d characters", API_KEY_NAME_MAX);
        longest[API_KEY_NAME_MAX] = 'k';
        longest[API_KEY_NAME_MAX + 1] = 0;
        tap_ok(!api_key_name_valid(longest), "not one of %d", API_KEY_NAME_MAX + 1);
}

int main(void) {
        test_token();
        test_parse();
        test_digest();
        test_hash();
        test_name();
        return tap_done();
}
