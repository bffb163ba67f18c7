/* SPDX-License-Identifier: MIT */
/* The master's table of worker processes: which slots hold a worker and which wait for one. */
#include "fcgi/worker-slots.h"

unsigned worker_slots_fill(pid_t *slots, unsigned n, pid_t (*spawn)(unsigned slot, void *userdata), void *userdata) {
        unsigned empty = 0;

        for (unsigned i = 0; i < n; i++) {
                if (slots[i] > 0)
                        continue;
                slots[i] = spawn(i, userdata);
                if (slots[i] <= 0)
                        empty++;
        }
        return empty;
}

int worker_slots_release(pid_t *slots, unsigned n, pid_t pid) {
        for (unsigned i = 0; i < n; i++)
                if (slots[i] == pid && pid > 0) {
                        slots[i] = 0;
                        return (int) i;
                }
        return -1;
}
