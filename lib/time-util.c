/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "lib/macro.h"
#include "lib/time-util.h"

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

double now_unix(void) {
        return (double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC;
}
