/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"

/* Lead byte c: the sequence length and the range allowed for the second byte (Unicode table 3-7). */
static size_t utf8_lead(uint8_t c, uint8_t *ret_lo, uint8_t *ret_hi) {
        *ret_lo = 0x80;
        *ret_hi = 0xbf;
        if (c == 0xe0)
                *ret_lo = 0xa0;
        else if (c == 0xed) /* no UTF-16 surrogates */
                *ret_hi = 0x9f;
        else if (c == 0xf0)
                *ret_lo = 0x90;
        else if (c == 0xf4)
                *ret_hi = 0x8f;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                return 2;
        if (c >= 0xe0 && c <= 0xef)
                return 3;
        if (c >= 0xf0 && c <= 0xf4)
                return 4;
        return 0;
}

/* Returns how many bytes at s form one well-formed character (*ret_valid = 1), or the length of the
 * maximal ill-formed subpart that one U+FFFD replaces (*ret_valid = 0, at least one byte). */
static size_t utf8_next(const uint8_t *s, size_t n, int *ret_valid) {
        uint8_t lo, hi;
        size_t len = utf8_lead(s[0], &lo, &hi), i = 1;

        *ret_valid = 0;
        if (len == 0)
                return 1;

        for (; i < len && i < n; i++) {
                uint8_t min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xbf;

                if (s[i] < min || s[i] > max)
                        return i;
        }
        *ret_valid = i == len;
        return i;
}

char *utf8_sanitize(const uint8_t *s, size_t n, size_t *ret_len) {
        /* Worst case: every byte becomes the three bytes of U+FFFD. */
        char *out = malloc(n * 3 + 1);
        size_t o = 0;

        if (!out)
                return NULL;

        for (size_t i = 0; i < n;) {
                int valid;
                size_t len = utf8_next(s + i, n - i, &valid);

                if (valid)
                        memcpy(out + o, s + i, len);
                else
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                o += valid ? len : 3;
                i += len;
        }
        out[o] = 0;

        if (ret_len)
                *ret_len = o;
        return out;
}

bool utf8_valid(const uint8_t *s, size_t n) {
        for (size_t i = 0; i < n;) {
                int valid;

                i += utf8_next(s + i, n - i, &valid);
                if (!valid)
                        return false;
        }
        return true;
}

size_t utf8_whole_prefix(const uint8_t *s, size_t n) {
        /* The last sequence starts at most 3 bytes back, at the first byte that is no continuation. */
        for (size_t back = 1; back <= 3 && back <= n; back++) {
                size_t k = n - back;
                uint8_t lo, hi;
                size_t want;
                int valid;

                if ((s[k] & 0xc0) == 0x80)
                        continue;
                want = utf8_lead(s[k], &lo, &hi);
                /* Cut short: a lead that wants more than there is, and what there is fits it. */
                if (want > back && utf8_next(s + k, back, &valid) == back)
                        return k;
                return n;
        }
        return n;
}
