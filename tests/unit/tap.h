/* SPDX-License-Identifier: MIT */
#pragma once

/* A minimal TAP producer for `prove --exec ''`: "ok N - name" per check, "# SKIP" and "# TODO"
 * directives, the plan last, and exit status 1 when any check failed (a TODO check never fails). */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static unsigned tap_count, tap_failures;

/* directive: NULL, "SKIP reason" or "TODO reason". Returns pass. */
__attribute__((format(printf, 3, 0))) static inline bool tap_vresult(bool pass, const char *directive, const char *fmt, va_list ap) {
        tap_failures += !pass && !directive;
        printf("%sok %u - ", pass ? "" : "not ", ++tap_count);
        vprintf(fmt, ap);
        printf("%s%s\n", directive ? " # " : "", directive ? directive : "");
        (void) fflush(stdout);
        return pass;
}

__attribute__((format(printf, 3, 4))) static inline bool tap_result(bool pass, const char *directive, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        pass = tap_vresult(pass, directive, fmt, ap);
        va_end(ap);
        return pass;
}

#define tap_ok(pass, ...) tap_result(pass, NULL, __VA_ARGS__)
/* A check of a known bug: "not ok N - name # TODO reason" does not fail the run. */
#define tap_todo(pass, reason, ...) tap_result(pass, "TODO " reason, __VA_ARGS__)
#define tap_skip(reason, ...) ((void) tap_result(true, "SKIP " reason, __VA_ARGS__))
#define tap_diag(...) (printf("# " __VA_ARGS__), (void) putchar('\n'))

/* Equality checks that print both sides when they differ. */
__attribute__((format(printf, 3, 4))) static inline bool tap_is_int(long long got, long long want, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (!tap_vresult(got == want, NULL, fmt, ap))
                tap_diag("  got %lld, want %lld", got, want);
        va_end(ap);
        return got == want;
}

__attribute__((format(printf, 3, 4))) static inline bool tap_is_str(const char *got, const char *want, const char *fmt, ...) {
        bool pass = got && want ? strcmp(got, want) == 0 : got == want;
        va_list ap;

        va_start(ap, fmt);
        if (!tap_vresult(pass, NULL, fmt, ap))
                tap_diag("  got '%s', want '%s'", got ? got : "(null)", want ? want : "(null)");
        va_end(ap);
        return pass;
}

/* Prints the plan; main() returns this. */
static inline int tap_done(void) {
        printf("1..%u\n", tap_count);
        return tap_failures > 0 ? 1 : 0;
}
