/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/stream-frame.h"

size_t stream_frame_header(char type, size_t len, char buf[static STREAM_FRAME_HEADER_MAX]) {
        int n = snprintf(buf, STREAM_FRAME_HEADER_MAX, "%c%zu\n", type, len);

        return n > 0 ? (size_t) n : 0;
}

int stream_frame_next(const char *buf, size_t len, size_t max_data, char *ret_type, size_t *ret_data_off, size_t *ret_data_len,
                      size_t *ret_total) {
        size_t n = 0, i;

        if (len == 0)
                return 0;
        if (buf[0] != STREAM_FRAME_STDOUT && buf[0] != STREAM_FRAME_STDERR && buf[0] != STREAM_FRAME_REPLY)
                return -EBADMSG;
        /* The digits, then the newline: no sign, no space, no leading zero but for 0 itself. */
        for (i = 1; i < len && buf[i] != '\n'; i++) {
                if (buf[i] < '0' || buf[i] > '9' || i >= STREAM_FRAME_HEADER_MAX - 2 || (i == 2 && buf[1] == '0'))
                        return -EBADMSG;
                if (n > (SIZE_MAX - 9) / 10)
                        return -EBADMSG;
                n = n * 10 + (size_t) (buf[i] - '0');
                if (n > max_data)
                        return -EBADMSG;
        }
        if (i >= len)
                return 0; /* the header is not all here */
        if (i == 1)
                return -EBADMSG; /* no digits */
        i++;
        if (len - i < n)
                return 0;
        *ret_type = buf[0];
        *ret_data_off = i;
        *ret_data_len = n;
        *ret_total = i + n;
        return 1;
}
