/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct sqlite3 sqlite3;

/* The pool manager's sweep: what the host holds of sandboxd that no row of db owns is removed, through
 * the broker (*broker, a connection made on first use), with one journal entry each
 * (POOL_EVENT=swept or SESSION_EVENT=swept):
 *   - machine-* units without a pool row (failed or inactive ones are only unloaded);
 *   - for each session without a live row (none, or one marked deleted whose removal failed): its
 *     machine unit, its disk's mount, its disk image and its UID range (BROKER_SESSION_DELETE);
 *   - sockets in POOL_DIR of machines without a pool row and of sessions without a live row.
 * Returns how many removals failed (to be tried again soon), or -errno when the broker could not
 * say what there is. */
int sweep_run(int *broker, sqlite3 *db);
