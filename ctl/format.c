/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <time.h>

#include "ctl/format.h"

void format_time(uint64_t usec, char *ret, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(ret, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                (void) snprintf(ret, size, "@%llu", (unsigned long long) (usec / 1000000));
}

void format_span(uint64_t usec, char *ret, size_t size) {
        static const struct {
                const char *unit;
                uint64_t usec;
        } units[] = {
                {"d", 86400ULL * 1000000},
                {"h", 3600ULL * 1000000},
                {"m", 60ULL * 1000000},
                {"s", 1000000},
        };

        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (usec >= units[i].usec) {
                        (void) snprintf(ret, size, "%llu%s", (unsigned long long) (usec / units[i].usec), units[i].unit);
                        return;
                }
        (void) snprintf(ret, size, "%llums", (unsigned long long) (usec / 1000));
}

void format_bytes(uint64_t bytes, char *ret, size_t size) {
        static const char units[] = "KMGTPE";
        double v = (double) bytes;
        size_t i = 0;

        if (bytes < 1024) {
                (void) snprintf(ret, size, "%lluB", (unsigned long long) bytes);
                return;
        }
        for (v /= 1024; v >= 1024 && i + 1 < sizeof(units) - 1; i++)
                v /= 1024;
        (void) snprintf(ret, size, "%.1f%c", v, units[i]);
}
