/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* Fills every empty slot of slots[0..n) (a PID <= 0) with what spawn(i, userdata) returns for slot i: a worker's
 * PID, or -errno when it could not be made (fork() failed: too many processes, no memory). Returns
 * how many slots are still empty, for the caller to try again later rather than run short of
 * workers for good. */
unsigned worker_slots_fill(pid_t *slots, unsigned n, pid_t (*spawn)(unsigned slot, void *userdata), void *userdata);

/* The slot of pid, emptied: its index, or -1 if no slot holds it. */
int worker_slots_release(pid_t *slots, unsigned n, pid_t pid);
