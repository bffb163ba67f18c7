/* SPDX-License-Identifier: MIT */
#include <stdio.h>
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

void format_time_iso(uint64_t usec, char *ret, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        char base[32];
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                base[0] = 0;
        (void) snprintf(ret, size, "%s.%06lluZ", base, (unsigned long long) (usec % 1000000));
}
