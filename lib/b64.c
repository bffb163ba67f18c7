/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "lib/b64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

long long b64_decoded_size(const char *s, size_t n) {
        size_t pad = 0;

        if (n % 4 != 0)
                return -EINVAL;
        if (n > 0 && s[n - 1] == '=')
                pad++;
        if (n > 1 && s[n - 2] == '=')
                pad++;

        for (size_t i = 0; i < n - pad; i++)
                if (b64_value(s[i]) < 0)
                        return -EINVAL;

        /* The bits that padding leaves over must be zero, so every input has one encoding. */
        if (pad == 1 && (b64_value(s[n - 2]) & 0x3) != 0)
                return -EINVAL;
        if (pad == 2 && (b64_value(s[n - 3]) & 0xf) != 0)
                return -EINVAL;

        return (long long) (n / 4 * 3 - pad);
}

int b64_decode(const char *s, size_t n, uint8_t **ret, size_t *ret_len) {
        long long size = b64_decoded_size(s, n);
        uint8_t *out;
        size_t o = 0;

        if (size < 0)
                return (int) size;

        out = malloc((size_t) size + 1);
        if (!out)
                return -ENOMEM;

        for (size_t i = 0; i < n; i += 4) {
                uint32_t v = 0;
                int k;

                for (k = 0; k < 4 && s[i + k] != '='; k++)
                        v |= (uint32_t) b64_value(s[i + k]) << (18 - 6 * k);

                out[o++] = (uint8_t) (v >> 16);
                if (k > 2)
                        out[o++] = (uint8_t) (v >> 8);
                if (k > 3)
                        out[o++] = (uint8_t) v;
        }
        out[o] = 0;

        *ret = out;
        *ret_len = o;
        return 0;
}

char *b64_encode(const uint8_t *p, size_t n, size_t *ret_len) {
        size_t len = (n + 2) / 3 * 4, o = 0;
        char *out = malloc(len + 1);

        if (!out)
                return NULL;

        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16;

                if (i + 1 < n)
                        v |= (uint32_t) p[i + 1] << 8;
                if (i + 2 < n)
                        v |= p[i + 2];

                out[o++] = alphabet[(v >> 18) & 0x3f];
                out[o++] = alphabet[(v >> 12) & 0x3f];
                out[o++] = (char) (i + 1 < n ? alphabet[(v >> 6) & 0x3f] : '=');
                out[o++] = (char) (i + 2 < n ? alphabet[v & 0x3f] : '=');
        }
        out[o] = 0;

        if (ret_len)
                *ret_len = o;
        return out;
}
