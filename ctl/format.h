/* SPDX-License-Identifier: MIT */
#pragma once

/* How sandboxctl writes times, ages and sizes for people. Pure but for the local time zone. */

#include <stddef.h>
#include <stdint.h>

/* A wall-clock time (µs since the epoch) as "YYYY-MM-DD HH:MM:SS" in local time. */
void format_time(uint64_t usec, char *ret, size_t size);

/* A span of µs as "850ms", "42s", "7m", "3h", "2d": the largest unit that is at least 1 (ms below
 * a second). */
void format_span(uint64_t usec, char *ret, size_t size);

/* A size in bytes as "512B", "1.5K", "47.0M", "2.0G" (powers of 1024). */
void format_bytes(uint64_t bytes, char *ret, size_t size);
