/* SPDX-License-Identifier: MIT */
#pragma once

/* A prefix of etcd followed for as long as the process runs: read whole, then watched, and again
 * when the watch ends. What the member's mirror and the front's watcher do. etcd's calls block
 * (cluster/etcd.h), so they run on a thread of the Follow's own, never on the caller's loop; the
 * loop (sd-event) holds the wait between two rounds, a timer with a capped, jittered backoff
 * (lib/backoff.h), and learns of a round's end from an eventfd. While a watch lasts, nothing
 * fires. */

#include <stdint.h>

#include "lib/backoff.h"

typedef struct sd_event sd_event;
typedef struct Follow Follow;

typedef struct FollowOps {
        /* The prefix read whole and applied: 0 and the revision it was read at, or -errno (logged
         * by it). On the Follow's thread. */
        int (*sync)(void *userdata, int64_t *ret_revision);
        /* The prefix watched from revision from on, each change applied as it comes; blocks until
         * the watch ends: why, as -errno (logged by it). On the Follow's thread. */
        int (*watch)(void *userdata, int64_t from);
} FollowOps;

/* The retries' first and longest waits: etcd back after an outage is followed again within
 * FOLLOW_RETRY_MAX_USEC, and one that cannot reach it asks every 5 to 10 s once it has tried a while. */
#define FOLLOW_RETRY_BASE_USEC 500000ULL
#define FOLLOW_RETRY_MAX_USEC 10000000ULL

/* One round: sync, then the watch when sync succeeded. The wait before the next, in µs: none after
 * a watch etcd compacted away from under (-ESTALE) right after a good read, else b's next (reset by a
 * good read). random: for backoff_next(). */
uint64_t follow_round(const FollowOps *ops, void *userdata, Backoff *b, uint64_t random);

/* Rounds on a thread of its own, the first at once, each next when event's timer says: 0, or
 * -errno. ops and userdata are borrowed for the life of the process, which the Follow lasts. */
int follow_start(sd_event *event, const FollowOps *ops, void *userdata);
