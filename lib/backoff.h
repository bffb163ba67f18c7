/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/* The wait before the next try of something that keeps failing (etcd out of reach): base, doubled
 * at each failure up to cap, then cut by a random share of at most half, so that the members that
 * lost etcd together do not all come back at the same instant. */
typedef struct Backoff {
        uint64_t base_usec, cap_usec;
        unsigned failures;
} Backoff;

/* One more failure: the wait before the next try, in µs, between half of and the whole of
 * min(cap, base * 2^failures); random is any 64 random bits. Pure. */
uint64_t backoff_next(Backoff *b, uint64_t random);

/* A success: the next failure waits base again. */
void backoff_reset(Backoff *b);

/* 64 bits from the kernel's random source for backoff_next() (not for secrets). */
uint64_t backoff_random(void);
