/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "lib/api-key.h"

static const char hex[] = "0123456789abcdef";

int api_key_token_new(char ret[API_KEY_TOKEN_LEN + 1]) {
        uint8_t rnd[32];
        size_t n = strlen(API_KEY_TOKEN_PREFIX);

        /* Blocks until the kernel's pool is initialised, never returns fewer bytes for 32. */
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return errno > 0 ? -errno : -EIO;
        memcpy(ret, API_KEY_TOKEN_PREFIX, n);
        for (size_t i = 0; i < sizeof(rnd); i++) {
                ret[n + 2 * i] = hex[rnd[i] >> 4];
                ret[n + 2 * i + 1] = hex[rnd[i] & 0xf];
        }
        ret[API_KEY_TOKEN_LEN] = 0;
        explicit_bzero(rnd, sizeof(rnd));
        return 0;
}

/* RFC 6750, 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
static bool b64token(const char *s, size_t n) {
        static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
        size_t body = 0;

        while (body < n && s[body] && strchr(chars, s[body]))
                body++;
        if (body == 0)
                return false;
        for (size_t i = body; i < n; i++)
                if (s[i] != '=')
                        return false;
        return true;
}

int api_key_parse_bearer(const char *header, char ret[API_KEY_BEARER_MAX + 1]) {
        const char *token;
        size_t n;

        if (!header || !*header)
                return -ENOENT;
        if (strncasecmp(header, "Bearer", 6) != 0 || header[6] != ' ')
                return -EINVAL;
        token = header + 6 + strspn(header + 6, " ");
        n = strlen(token);
        /* Trailing blanks are the header's, not the token's (RFC 9110 5.5: OWS around a value). */
        while (n > 0 && (token[n - 1] == ' ' || token[n - 1] == '\t'))
                n--;
        if (n == 0 || n > API_KEY_BEARER_MAX || !b64token(token, n))
                return -EINVAL;
        memcpy(ret, token, n);
        ret[n] = 0;
        return 0;
}

int api_key_hash(const char *token, char ret[API_KEY_HASH_SIZE]) {
        uint8_t digest[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        /* One-shot EVP: libcrypto picks the implementation (SHA-NI where the CPU has it). It fails
         * only when no provider offers SHA-256 (a broken OpenSSL configuration). */
        if (EVP_Digest(token, strlen(token), digest, &n, EVP_sha256(), NULL) != 1 || n != (API_KEY_HASH_SIZE - 1) / 2)
                return -EIO;
        for (size_t i = 0; i < n; i++) {
                ret[2 * i] = hex[digest[i] >> 4];
                ret[2 * i + 1] = hex[digest[i] & 0xf];
        }
        ret[API_KEY_HASH_SIZE - 1] = 0;
        return 0;
}

bool api_key_hash_equal(const char *a, const char *b) {
        return CRYPTO_memcmp(a, b, API_KEY_HASH_SIZE - 1) == 0;
}

bool api_key_name_valid(const char *name) {
        size_t n = strlen(name);

        return n >= 1 && n <= API_KEY_NAME_MAX && name[0] != '-' &&
               strspn(name, API_KEY_NAME_CHARS) == n;
}
