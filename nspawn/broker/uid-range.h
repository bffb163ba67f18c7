/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Which machine holds which 65536-UID range of the host, so that no two running machines share one.
 * A reservation is a symlink in a directory of root's: named by the range's first UID (8 hex digits),
 * pointing at its holder's unit id. symlinkat() makes or refuses one atomically, so two starts never
 * get one range. A session holds its range from its creation until its deletion (the files on its
 * disk belong to it); any other machine while its unit runs (the unit's ExecStopPost= removes it). */

/* How many ranges there are: nspawn's --private-users=pick space, 0x80000 … 0x6ffe0000. */
#define UID_RANGE_COUNT 0x6ff7U

/* The range number n (0 … UID_RANGE_COUNT-1, wrapped)'s first UID, as nspawn_uid_base() makes. Pure. */
uint32_t uid_range_base(uint32_t n);

/* The range number a session made before ranges were reserved ran with: its id's FNV-1a hash, as
 * nspawn_uid_base() made it. Pure. */
uint32_t uid_range_of_id(const char *id);

/* Reserves a free range for owner (a unit id, no '/') in dir_fd, trying from range hint on; with
 * exact, range hint or nothing (-EBUSY). 0 and *ret_base, -EUSERS when every range is taken. */
int uid_range_reserve(int dir_fd, const char *owner, uint32_t hint, bool exact, uint32_t *ret_base);

/* The range owner holds: 0 and *ret_base, -ENOENT when it holds none. */
int uid_range_find(int dir_fd, const char *owner, uint32_t *ret_base);

/* Gives up every range owner holds: how many, or -errno. */
int uid_range_release(int dir_fd, const char *owner);

/* Calls f for every reservation: its holder and its range's first UID. 0 or -errno. */
typedef void (*UidRangeFunc)(const char *owner, uint32_t base, void *userdata);
int uid_range_foreach(int dir_fd, UidRangeFunc f, void *userdata);
