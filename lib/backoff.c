/* SPDX-License-Identifier: MIT */
#include <sys/random.h>

#include "lib/backoff.h"

uint64_t backoff_next(Backoff *b, uint64_t random) {
        uint64_t full = b->base_usec;

        /* Doubled while that stays under the cap: no overflow, whatever the count. */
        for (unsigned i = 0; i < b->failures && full < b->cap_usec; i++)
                full = full > b->cap_usec / 2 ? b->cap_usec : full * 2;
        if (full > b->cap_usec)
                full = b->cap_usec;
        if (b->failures < 64)
                b->failures++;
        /* Between half and all of it: never 0 however the dice fall, so never a busy loop. */
        return full - (full / 2 == 0 ? 0 : random % (full / 2 + 1));
}

void backoff_reset(Backoff *b) {
        b->failures = 0;
}

uint64_t backoff_random(void) {
        uint64_t v = 0;

        /* A short read or none leaves a jitter of 0: the wait is whole, which is still correct. */
        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v))
                return 0;
        return v;
}
