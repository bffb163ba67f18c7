/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>

#include "cluster/follow.h"
#include "tests/unit/tap.h"

/* etcd as a script: what each round's read and watch give. */
typedef struct Script {
        const int *sync, *watch;
        size_t n, i;
        unsigned syncs, watches;
} Script;

static int fake_sync(void *userdata, int64_t *ret_revision) {
        Script *s = userdata;

        s->syncs++;
        *ret_revision = 41;
        return s->sync[s->i < s->n ? s->i : s->n - 1];
}

static int fake_watch(void *userdata, int64_t from) {
        Script *s = userdata;

        s->watches++;
        return from == 42 ? s->watch[s->i < s->n ? s->i : s->n - 1] : -EINVAL;
}

static const FollowOps ops = {.sync = fake_sync, .watch = fake_watch};

/* The rounds of a minute of a fake clock: the sum of the waits follow_round() asks for. */
static unsigned rounds_in(Script *s, uint64_t span_usec, uint64_t *ret_first_wait) {
        Backoff b = {.base_usec = FOLLOW_RETRY_BASE_USEC, .cap_usec = FOLLOW_RETRY_MAX_USEC};
        uint64_t clock = 0;
        unsigned rounds = 0;

        *ret_first_wait = UINT64_MAX;
        for (s->i = 0; clock < span_usec && rounds < 100000; s->i++, rounds++) {
                uint64_t wait = follow_round(&ops, s, &b, (uint64_t) rounds * 0x9e3779b97f4a7c15ULL);

                if (s->i == 1)
                        *ret_first_wait = wait;
                clock += wait;
        }
        return rounds;
}

/* The watch ends with -ESTALE (etcd compacted), then etcd refuses every connection: the rounds
 * after come at the backoff's pace, not at once. */
static void test_refused_after_stale(void) {
        static const int sync[] = {0, -ECONNREFUSED}, watch[] = {-ESTALE, 0};
        Script s = {.sync = sync, .watch = watch, .n = 2};
        uint64_t first;
        unsigned rounds = rounds_in(&s, 60 * 1000 * 1000ULL, &first);

        tap_ok(first >= FOLLOW_RETRY_BASE_USEC / 2, "a refused read after a compacted watch waits (%llu µs)", (unsigned long long) first);
        /* 0.5 s, 1, 2, 4, 8, then 10 s at most, each at least half: some 12 rounds a minute, never thousands. */
        tap_ok(rounds >= 6 && rounds <= 30, "a minute of etcd refusing: %u rounds", rounds);
        tap_is_int(s.watches, 1, "... and no watch without a good read");
}

static void test_stale_rereads_at_once(void) {
        static const int sync[] = {0, 0, -ECONNREFUSED}, watch[] = {-ESTALE, -ECONNRESET, 0};
        Script s = {.sync = sync, .watch = watch, .n = 3};
        Backoff b = {.base_usec = FOLLOW_RETRY_BASE_USEC, .cap_usec = FOLLOW_RETRY_MAX_USEC};

        s.i = 0;
        tap_is_int((long long) follow_round(&ops, &s, &b, 0), 0, "a compacted watch after a good read: read again at once");
        s.i = 1;
        tap_is_int((long long) follow_round(&ops, &s, &b, 0), (long long) FOLLOW_RETRY_BASE_USEC, "a watch that ended otherwise waits the base");
        s.i = 2;
        tap_ok(follow_round(&ops, &s, &b, 0) > FOLLOW_RETRY_BASE_USEC, "... and a refusal after it longer");
}

static void test_refused_from_start(void) {
        static const int sync[] = {-ECONNREFUSED}, watch[] = {0};
        Script s = {.sync = sync, .watch = watch, .n = 1};
        uint64_t first;
        unsigned rounds = rounds_in(&s, 60 * 1000 * 1000ULL, &first);

        tap_ok(rounds >= 6 && rounds <= 30, "etcd refusing from the start, a minute: %u rounds", rounds);
}

int main(void) {
        test_refused_after_stale();
        test_stale_rereads_at_once();
        test_refused_from_start();
        return tap_done();
}
