/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fcgi/worker-slots.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

/* A fork() that fails the first `failures` times, then hands out PIDs from 100 on. */
typedef struct FakeFork {
        unsigned failures;
        pid_t next;
} FakeFork;

static pid_t fake_spawn(unsigned slot, void *userdata) {
        FakeFork *f = userdata;

        (void) slot;

        if (f->failures > 0) {
                f->failures--;
                return -EAGAIN;
        }
        return f->next++;
}

int main(void) {
        pid_t slots[4] = {};
        FakeFork f = {.failures = 2, .next = 100};

        /* The start: two forks fail, the two other slots get workers. */
        tap_is_int(worker_slots_fill(slots, ELEMENTSOF(slots), fake_spawn, &f), 2, "two slots stay empty when two forks fail");
        tap_ok(slots[0] <= 0 && slots[1] <= 0 && slots[2] == 100 && slots[3] == 101, "the failed slots are marked empty");
        /* The retry fills them: no slot is lost for good to a failed fork. */
        tap_is_int(worker_slots_fill(slots, ELEMENTSOF(slots), fake_spawn, &f), 0, "a later fill fills every empty slot");
        tap_ok(slots[0] == 102 && slots[1] == 103 && slots[2] == 100 && slots[3] == 101, "and leaves the live workers alone");

        /* A worker dies: its slot is emptied, then refilled. */
        tap_is_int(worker_slots_release(slots, ELEMENTSOF(slots), 101), 3, "a dead worker's slot is found");
        tap_is_int(worker_slots_release(slots, ELEMENTSOF(slots), 999), -1, "a PID that is no worker's is not");
        tap_is_int(worker_slots_release(slots, ELEMENTSOF(slots), 0), -1, "nor is an empty slot's");
        tap_is_int(worker_slots_fill(slots, ELEMENTSOF(slots), fake_spawn, &f), 0, "the emptied slot is filled again");
        tap_is_int(slots[3], 104, "with a new worker");
        printf("1..%u\n", tap_count);
        return tap_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
