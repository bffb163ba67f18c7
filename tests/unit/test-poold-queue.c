/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdint.h>

#include "nspawn/pool/poold-queue.h"
#include "tests/unit/tap.h"

static void test_pool_pick(void) {
        static const IdleMachine m[] = {
                {"python", 30},
                {"node", 20},
                {"python", 10},
                {"node", 40},
        };
        static const struct {
                size_t n;
                const char *language;
                size_t want;
        } cases[] = {
                {4, "python", 2}, /* prepared for it, the longest idle */
                {4, "node", 1},
                {4, "bash", 2}, /* none prepared: the longest idle of all */
                {4, NULL, 2},
                {1, "node", 0},   /* only one, not prepared: it anyway */
                {0, "python", 0}, /* none: n */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int((long long) pool_pick(m, cases[i].n, cases[i].language), (long long) cases[i].want, "pool_pick of %zu for %s",
                           cases[i].n, cases[i].language ? cases[i].language : "(none)");
}

/* First in, first out per session; one holder at a time; sessions apart. */
static void test_turns(void) {
        TurnEntry e[] = {
                {"session-a", 5, false},
                {"session-b", 2, false},
                {"session-a", 3, false},
                {NULL, 1, false},
                {"session-a", 4, false},
        };
        size_t n = sizeof(e) / sizeof(e[0]);

        tap_is_int((long long) turn_next(e, n, "session-a"), 2, "a: the earliest arrival first");
        tap_is_int((long long) turn_next(e, n, "session-b"), 1, "b: its own, whatever a's");
        tap_is_int((long long) turn_next(e, n, "session-c"), (long long) n, "c: none waits");
        tap_is_int((long long) turn_queued(e, n, "session-a"), 3, "a: three in its queue");
        e[2].held = true;
        tap_is_int((long long) turn_next(e, n, "session-a"), (long long) n, "a: held, nobody else gets it");
        e[2].session = NULL; /* done */
        tap_is_int((long long) turn_next(e, n, "session-a"), 4, "a: then the next in arrival order");
        tap_is_int((long long) turn_queued(e, n, "session-a"), 2, "a: two left");
}

static void test_claim_next(void) {
        bool waiting[] = {false, true, true, true};
        uint64_t seq[] = {1, 9, 4, 7};

        tap_is_int((long long) claim_next(waiting, seq, 4), 2, "the earliest waiting claim");
        waiting[2] = false;
        tap_is_int((long long) claim_next(waiting, seq, 4), 3, "then the next");
        tap_is_int((long long) claim_next(waiting, seq, 0), 0, "none: n");
}

int main(void) {
        test_pool_pick();
        test_turns();
        test_claim_next();
        return tap_done();
}
