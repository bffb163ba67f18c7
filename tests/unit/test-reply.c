/* SPDX-License-Identifier: MIT */
/* A body written in pieces (reply_body_begin(), reply_body_write()) into a request's capture, as an
 * MCP tool's file is: one buffer of the announced length, NUL-terminated, never past it. */
#include <errno.h>
#include <fcgiapp.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_pieces(void) {
        static const struct {
                const char *pieces[4]; /* NULL-terminated */
                size_t len;            /* announced */
                int last;              /* what the last write returns */
                const char *kept;
        } cases[] = {
                {{NULL}, 0, 0, ""},
                {{"", NULL}, 0, 0, ""},
                {{"abc", NULL}, 3, 0, "abc"},
                {{"ab", "c", "", NULL}, 3, 0, "abc"},
                {{"ab", "cd", NULL}, 3, -EFBIG, "ab"},
                {{"abcd", NULL}, 3, -EFBIG, ""},
                {{"a", NULL}, 0, -EFBIG, ""},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ReplyCapture c = {};
                Request req = {.capture = &c};
                int r = reply_body_begin(&req, 200, "application/octet-stream", cases[i].len);

                tap_is_int(r, 0, "case %zu: begun", i);
                for (size_t k = 0; r >= 0 && cases[i].pieces[k]; k++)
                        r = reply_body_write(&req, cases[i].pieces[k], strlen(cases[i].pieces[k]));
                tap_is_int(r, cases[i].last, "case %zu: the last write", i);
                tap_is_int(c.status, 200, "case %zu: the status kept", i);
                tap_is_int(req.status, 200, "case %zu: the status recorded", i);
                tap_is_str(c.content_type, "application/octet-stream", "case %zu: its type", i);
                tap_is_int((long long) c.bytes_len, (long long) strlen(cases[i].kept), "case %zu: its length", i);
                tap_is_str(c.bytes, cases[i].kept, "case %zu: its bytes, NUL-terminated", i);
                reply_capture_done(&c);
        }
}

/* reply_bytes() into a capture: the same as one piece; a second answer replaces the first. */
static void test_bytes(void) {
        ReplyCapture c = {};
        Request req = {.capture = &c};

        tap_is_int(reply_bytes(&req, 200, "text/plain", "x\0y", 3), 0, "bytes: kept");
        tap_ok(c.bytes_len == 3 && memcmp(c.bytes, "x\0y", 4) == 0, "bytes: all of them, a NUL included, and one after");
        tap_is_int(reply_bytes(&req, 201, "text/csv", "zz", 2), 0, "bytes again: kept");
        tap_ok(c.status == 201 && c.bytes_len == 2 && strcmp(c.bytes, "zz") == 0, "bytes again: in place of the first");
        reply_capture_done(&c);
        tap_ok(!c.bytes && c.bytes_len == 0 && c.bytes_room == 0, "released: empty");
}

int main(void) {
        test_pieces();
        test_bytes();
        return tap_done();
}
