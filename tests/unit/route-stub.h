/* SPDX-License-Identifier: MIT */
#pragma once

/* The Makefile links fcgi/route.o into every unit test, and its route table refers to the
 * handlers, which live in fcgi/route-*.c (bus, journal: not pure modules). Each test binary
 * includes this header exactly once so that it links; route_find() only compares the pointers.
 * Weak, so that a test linking a real handler gets the real one. */

#include <stddef.h>

#include "fcgi/route.h"

__attribute__((weak)) int route_execute(Request *req, Context *ctx) {
        (void) req;
        (void) ctx;
        return 0;
}

__attribute__((weak)) int route_pool(Request *req, Context *ctx) {
        (void) req;
        (void) ctx;
        return 0;
}

__attribute__((weak)) int route_call(Request *req, Context *ctx) {
        (void) req;
        (void) ctx;
        return 0;
}
