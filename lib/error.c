/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/utf8.h"

__attribute__((format(printf, 2, 0))) static void error_vset(Error *e, const char *fmt, va_list ap) {
        size_t n, i;

        (void) vsnprintf(e->message, sizeof(e->message), fmt, ap);

        /* A long path or name cut to fit must not end in half a character: the message may go out
         * as a JSON string. Back up over at most three continuation bytes to the lead byte, and drop
         * the sequence if it is incomplete. */
        n = i = strlen(e->message);
        while (i > 0 && n - i < 3 && ((uint8_t) e->message[i - 1] & 0xc0) == 0x80)
                i--;
        if (i > 0 && !utf8_valid((const uint8_t *) e->message + i - 1, n - i + 1))
                e->message[i - 1] = 0;
}

int error_set(Error *e, int r, const char *fmt, ...) {
        va_list ap;

        if (!e)
                return r;
        va_start(ap, fmt);
        error_vset(e, fmt, ap);
        va_end(ap);
        return r;
}

int error_set_status(Error *e, int status, int r, const char *fmt, ...) {
        va_list ap;

        if (!e)
                return r;
        e->status = status;
        va_start(ap, fmt);
        error_vset(e, fmt, ap);
        va_end(ap);
        return r;
}

const char *error_message(const Error *e, int r) {
        if (e && e->message[0])
                return e->message;
        return strerror(r < 0 ? -r : r);
}
