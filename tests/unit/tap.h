/* SPDX-License-Identifier: MIT */
#pragma once

/* A minimal TAP producer for `prove --exec ''`: one "ok N - name" line per check, "# SKIP" and
 * "# TODO" directives, the plan at the end, and an exit status of 1 when any (non-TODO) check failed. */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static unsigned tap_count, tap_failures;

__attribute__((format(printf, 3, 0))) static inline bool tap_vresult(bool pass, const char *directive, const char *fmt, va_list ap) {
        tap_count++;
        if (!pass && !directive)
                tap_failures++;
        printf("%sok %u - ", pass ? "" : "not ", tap_count);
        vprintf(fmt, ap);
        printf("%s%s\n", directive ? " # " : "", directive ? directive : "");
        (void) fflush(stdout);
        return pass;
}

/* Returns pass, so a caller can add a diagnostic when a check fails. */
__attribute__((format(printf, 2, 3))) static inline bool tap_ok(bool pass, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        pass = tap_vresult(pass, NULL, fmt, ap);
        va_end(ap);
        return pass;
}

/* A check for a known bug: "not ok N - name # TODO reason" does not fail the run. */
__attribute__((format(printf, 3, 4))) static inline bool tap_todo(bool pass, const char *reason, const char *fmt, ...) {
        char directive[256];
        va_list ap;

        (void) snprintf(directive, sizeof(directive), "TODO %s", reason);
        va_start(ap, fmt);
        pass = tap_vresult(pass, directive, fmt, ap);
        va_end(ap);
        return pass;
}

__attribute__((format(printf, 2, 3))) static inline void tap_skip(const char *reason, const char *fmt, ...) {
        char directive[256];
        va_list ap;

        (void) snprintf(directive, sizeof(directive), "SKIP %s", reason);
        va_start(ap, fmt);
        (void) tap_vresult(true, directive, fmt, ap);
        va_end(ap);
}

#define tap_diag(...) (printf("# " __VA_ARGS__), (void) putchar('\n'))

/* Equality checks that print both sides when they differ. */
__attribute__((format(printf, 3, 4))) static inline bool tap_is_int(long long got, long long want, const char *fmt, ...) {
        va_list ap;
        bool pass;

        va_start(ap, fmt);
        pass = tap_vresult(got == want, NULL, fmt, ap);
        va_end(ap);
        if (!pass)
                tap_diag("  got %lld, want %lld", got, want);
        return pass;
}

__attribute__((format(printf, 3, 4))) static inline bool tap_is_str(const char *got, const char *want, const char *fmt, ...) {
        va_list ap;
        bool pass;

        va_start(ap, fmt);
        pass = tap_vresult(got && want ? strcmp(got, want) == 0 : got == want, NULL, fmt, ap);
        va_end(ap);
        if (!pass)
                tap_diag("  got '%s', want '%s'", got ? got : "(null)", want ? want : "(null)");
        return pass;
}

/* Prints the plan; main returns this. */
static inline int tap_done(void) {
        printf("1..%u\n", tap_count);
        if (tap_failures > 0)
                printf("# %u of %u checks failed\n", tap_failures, tap_count);
        return tap_failures > 0 ? 1 : 0;
}
