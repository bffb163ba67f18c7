/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/macro.h"
#include "lib/stream-frame.h"
#include "tests/unit/tap.h"

static int next(const char *s, size_t len, char *type, size_t *off, size_t *dlen, size_t *total) {
        return stream_frame_next(s, len, 1000, type, off, dlen, total);
}

static void test_round_trip(void) {
        char head[STREAM_FRAME_HEADER_MAX], buf[64], type = 0;
        size_t h = stream_frame_header(STREAM_FRAME_STDOUT, 5, head), off = 0, dlen = 0, total = 0;

        tap_is_str(head, "o5\n", "a header: type, length, newline");
        memcpy(buf, head, h);
        memcpy(buf + h, "hello", 5);
        for (size_t cut = 0; cut < h + 5; cut++)
                if (next(buf, cut, &type, &off, &dlen, &total) != 0)
                        tap_ok(false, "a frame cut at %zu byte(s) waits for the rest", cut);
        tap_is_int(next(buf, h + 5, &type, &off, &dlen, &total), 1, "the whole frame is read");
        tap_ok(type == 'o' && off == h && dlen == 5 && total == h + 5 && memcmp(buf + off, "hello", 5) == 0, "its type, data and size");
        tap_is_int(next("r0\n", 3, &type, &off, &dlen, &total), 1, "an empty frame");
        tap_ok(type == 'r' && dlen == 0 && total == 3, "its size is its header's");
        tap_is_int(next("e2\nabo1\nc", 9, &type, &off, &dlen, &total), 1, "two frames: the first is read");
        tap_ok(type == 'e' && total == 5, "and only the first");
        h = stream_frame_header(STREAM_FRAME_REPLY, SIZE_MAX, head);
        tap_ok(h == strlen(head) && h < STREAM_FRAME_HEADER_MAX, "the longest header fits its buffer");
}

static void test_refused(void) {
        static const char *const bad[] = {"x1\na", "{\"status\":200}", "o\na", "o-1\na", "o 1\na", "o01\na", "o1a\na", "o2000\n",
                                          "o99999999999999999999999\n"};
        char type;
        size_t off, dlen, total;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                tap_is_int(next(bad[i], strlen(bad[i]), &type, &off, &dlen, &total), -EBADMSG, "no frame: '%.12s'", bad[i]);
        tap_is_int(next("o1000\n", 6, &type, &off, &dlen, &total), 0, "a frame of the most allowed waits for its data");
        tap_is_int(next("o1001", 5, &type, &off, &dlen, &total), -EBADMSG, "over the most allowed: refused before its newline");
}

int main(void) {
        test_round_trip();
        test_refused();
        return tap_done();
}
