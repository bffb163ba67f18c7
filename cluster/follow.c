/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "cluster/follow.h"
#include "lib/macro.h"

typedef struct Follow {
        const FollowOps *ops;
        void *userdata;
        sd_event_source *timer;
        int done_fd; /* the thread's word to the loop: a round ended */
        Backoff backoff;

        pthread_mutex_t lock;
        pthread_cond_t wake;
        /* Under lock: */
        bool go;       /* the loop's word to the thread: the next round */
        uint64_t wait; /* what the round that ended asks for */
} Follow;

uint64_t follow_round(const FollowOps *ops, void *userdata, Backoff *b, uint64_t random) {
        int64_t revision = 0;
        int r;

        /* This round's results only: a read that failed is what decides the wait, whatever the
         * watch before it ended with. */
        r = ops->sync(userdata, &revision);
        if (r < 0)
                return backoff_next(b, random);
        backoff_reset(b);
        r = ops->watch(userdata, revision + 1);
        if (r == -ESTALE)
                return 0;
        return backoff_next(b, random);
}

static void *follow_thread(void *userdata) {
        Follow *f = userdata;

        (void) pthread_mutex_lock(&f->lock);
        for (;;) {
                uint64_t wait;

                while (!f->go)
                        (void) pthread_cond_wait(&f->wake, &f->lock);
                f->go = false;
                (void) pthread_mutex_unlock(&f->lock);
                wait = follow_round(f->ops, f->userdata, &f->backoff, backoff_random());
                (void) pthread_mutex_lock(&f->lock);
                f->wait = wait;
                /* An eventfd's counter cannot overflow from one write per round. */
                (void) eventfd_write(f->done_fd, 1);
        }
        return NULL;
}

static void follow_go(Follow *f) {
        (void) pthread_mutex_lock(&f->lock);
        f->go = true;
        (void) pthread_cond_signal(&f->wake);
        (void) pthread_mutex_unlock(&f->lock);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        follow_go(userdata);
        return 0;
}

/* A round ended: the next after the wait it asked for, on the loop's clock. */
static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Follow *f = userdata;
        eventfd_t n;
        uint64_t wait;
        int r;

        (void) s;
        (void) revents;
        if (eventfd_read(fd, &n) < 0)
                return 0;
        (void) pthread_mutex_lock(&f->lock);
        wait = f->wait;
        (void) pthread_mutex_unlock(&f->lock);
        r = sd_event_source_set_time_relative(f->timer, wait);
        if (r >= 0)
                r = sd_event_source_set_enabled(f->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                follow_go(f); /* no timer: the thread's round then starts at once, which is what 0 asks */
        return 0;
}

int follow_start(sd_event *event, const FollowOps *ops, void *userdata) {
        Follow *f = calloc(1, sizeof(*f));
        pthread_t thread;
        int r;

        if (!f)
                return -ENOMEM;
        *f = (Follow){
                .ops = ops,
                .userdata = userdata,
                .done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
                .go = true, /* the first round at once */
                .backoff = {.base_usec = FOLLOW_RETRY_BASE_USEC, .cap_usec = FOLLOW_RETRY_MAX_USEC},
        };
        if (f->done_fd < 0) {
                free(f);
                return -errno;
        }
        (void) pthread_mutex_init(&f->lock, NULL);
        (void) pthread_cond_init(&f->wake, NULL);
        r = sd_event_add_io(event, NULL, f->done_fd, EPOLLIN, on_done, f);
        if (r >= 0)
                r = sd_event_add_time_relative(event, &f->timer, CLOCK_MONOTONIC, 0, 0, on_timer, f);
        if (r >= 0)
                r = sd_event_source_set_enabled(f->timer, SD_EVENT_OFF);
        if (r >= 0)
                r = -pthread_create(&thread, NULL, follow_thread, f);
        if (r >= 0)
                (void) pthread_detach(thread);
        /* On failure the sources are the loop's, and go with it; f stays theirs. */
        return r;
}
