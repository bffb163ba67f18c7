/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/error.h"
#include "lib/macro.h"
#include "lib/utf8.h"
#include "tests/unit/tap.h"

static void test_set(void) {
        Error e = {.status = 7};

        tap_is_str(error_message(&e, -ENOENT), strerror(ENOENT), "an Error never set: strerror of the failure");
        tap_is_int(error_set(&e, -EINVAL, "image '%s' not found", "x"), -EINVAL, "error_set returns its r");
        tap_is_str(e.message, "image 'x' not found", "error_set formats the message");
        tap_is_int(e.status, 7, "error_set leaves the status alone");
        tap_is_str(error_message(&e, -ENOENT), "image 'x' not found", "a set message wins over strerror");
        tap_is_int(error_set_status(&e, 400, -EINVAL, "%s", "bad"), -EINVAL, "error_set_status returns its r");
        tap_ok(e.status == 400 && strcmp(e.message, "bad") == 0, "error_set_status sets status and message");
        tap_is_int(error_set(NULL, -EIO, "nobody reads this"), -EIO, "a NULL Error: only r comes back");
        tap_is_int(error_set_status(NULL, 500, -EIO, "nobody reads this"), -EIO, "a NULL Error with a status: only r");
}

/* A message cut to fit ends in whole characters: each of the 1-, 2-, 3- and 4-byte characters,
 * at every offset against the end of the buffer. */
static void test_cut(void) {
        static const char *chars[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
        size_t bad = 0, shortest = SIZE_MAX, cases = 0;

        for (size_t c = 0; c < ELEMENTSOF(chars); c++)
                for (size_t pad = 0; pad < 4; pad++) {
                        char text[2048];
                        Error e = {};
                        size_t n = 0, len;

                        memset(text, 'p', pad);
                        n = pad;
                        while (n + strlen(chars[c]) < sizeof(text) - 1) {
                                memcpy(text + n, chars[c], strlen(chars[c]));
                                n += strlen(chars[c]);
                        }
                        text[n] = 0;
                        (void) error_set(&e, -EINVAL, "%s", text);
                        len = strlen(e.message);
                        cases++;
                        if (!utf8_valid((const uint8_t *) e.message, len) || strncmp(e.message, text, len) != 0)
                                bad++;
                        if (len < shortest)
                                shortest = len;
                }
        tap_ok(cases == 16 && bad == 0, "%zu long messages cut to fit: all valid UTF-8 prefixes of the text", cases);
        tap_ok(shortest >= sizeof(((Error *) NULL)->message) - 4 && shortest < sizeof(((Error *) NULL)->message),
               "cut by at most one character (shortest %zu bytes)", shortest);
}

int main(void) {
        test_set();
        test_cut();
        return tap_done();
}
