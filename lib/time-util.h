/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <time.h>

/* The time of clock (CLOCK_MONOTONIC for deadlines and durations, CLOCK_REALTIME for what is
 * stored), in microseconds. */
uint64_t now_usec(clockid_t clock);

/* Seconds since the epoch, as sqlite's records keep them (REAL). */
double now_unix(void);

/* A wall-clock time in µs as ISO 8601 in UTC with microseconds, for JSON and records:
 * "YYYY-MM-DDTHH:MM:SS.uuuuuuZ". */
void format_time_iso(uint64_t usec, char *ret, size_t size);
