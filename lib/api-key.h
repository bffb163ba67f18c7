/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* API keys (SANDBOXD_API_KEYS=on): a key has a name, which records and metrics show, and a token,
 * which only its holder knows; sqlite keeps the token's SHA-256. */

#define API_KEY_NAME_MAX 64
/* "sbx_" and 32 random bytes in hex: 256 bits, too many to guess, so a plain hash suffices. */
#define API_KEY_TOKEN_PREFIX "sbx_"
#define API_KEY_TOKEN_LEN (sizeof(API_KEY_TOKEN_PREFIX) - 1 + 64)
/* The longest bearer token looked up at all: anything longer is no key of ours. */
#define API_KEY_BEARER_MAX 256
/* SHA-256 in lower-case hex, NUL-terminated. */
#define API_KEY_HASH_SIZE 65

/* A new token from getrandom(): 0 or -errno. */
int api_key_token_new(char ret[API_KEY_TOKEN_LEN + 1]);

/* The token of an Authorization header value, "Bearer TOKEN" (the scheme in any case, RFC 7235;
 * TOKEN as RFC 6750's b64token, at most API_KEY_BEARER_MAX characters) into ret: 0; -ENOENT when
 * there is no header or it is empty; -EINVAL when it is anything else. Pure. */
int api_key_parse_bearer(const char *header, char ret[API_KEY_BEARER_MAX + 1]);

/* The SHA-256 of token (libcrypto's), as lower-case hex: 0, or -EIO when libcrypto has no SHA-256
 * (ret untouched). */
int api_key_hash(const char *token, char ret[API_KEY_HASH_SIZE]);

/* Whether two hashes (API_KEY_HASH_SIZE - 1 characters each) are equal, in a time that does not
 * depend on where they differ (CRYPTO_memcmp). Pure. */
bool api_key_hash_equal(const char *a, const char *b);

/* What a key's name is made of. */
#define API_KEY_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

/* A key's name: 1 to API_KEY_NAME_MAX letters, digits, '.', '_' and '-', not starting with '-'
 * (it goes into metric labels, journal fields and command lines as it is). Pure. */
bool api_key_name_valid(const char *name);
