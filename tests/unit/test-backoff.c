/* SPDX-License-Identifier: MIT */
#include <stdint.h>

#include "lib/backoff.h"
#include "tests/unit/tap.h"

#define MS 1000ULL

static void test_sequence(void) {
        /* The random bits chosen to give the whole wait (0), half of it (full/2) and in between. */
        static const struct {
                uint64_t random;
                uint64_t want;
        } steps[] = {
                {0, 500 * MS},          /* base */
                {0, 1000 * MS},         /* doubled */
                {1000 * MS, 1000 * MS}, /* 2000 ms, less a random 1000 ms: half of it */
                {1, 4000 * MS - 1},
                {0, 8000 * MS},
                {0, 10000 * MS}, /* capped */
                {5000 * MS, 5000 * MS},
                {UINT64_MAX, 10000 * MS - UINT64_MAX % (5000 * MS + 1)},
        };
        Backoff b = {.base_usec = 500 * MS, .cap_usec = 10000 * MS};

        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
                tap_is_int((long long) backoff_next(&b, steps[i].random), (long long) steps[i].want, "failure %zu waits %llu µs", i + 1,
                           (unsigned long long) steps[i].want);
        backoff_reset(&b);
        tap_is_int((long long) backoff_next(&b, 0), 500 * MS, "after a success, base again");
}

static void test_bounds(void) {
        Backoff b = {.base_usec = 1, .cap_usec = 3};
        bool ok = true;

        /* Whatever the dice, never 0 and never over the cap, even after many failures. */
        for (unsigned i = 0; i < 200; i++) {
                uint64_t d = backoff_next(&b, (uint64_t) i * 0x9e3779b97f4a7c15ULL);

                ok = ok && d >= 1 && d <= 3;
        }
        tap_ok(ok, "200 failures: every wait between 1 and the cap");
        b = (Backoff){.base_usec = 1000, .cap_usec = UINT64_MAX};
        for (unsigned i = 0; i < 100; i++)
                (void) backoff_next(&b, 0);
        tap_ok(backoff_next(&b, 0) >= 1000, "... and no overflow to 0 without a cap");
        tap_ok(backoff_random() != backoff_random() || backoff_random() != backoff_random(), "the kernel's dice vary");
}

int main(void) {
        test_sequence();
        test_bounds();
        return tap_done();
}
