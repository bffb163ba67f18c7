/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct BrokerAsync BrokerAsync;
typedef struct Sweep Sweep;
typedef struct sqlite3 sqlite3;

/* A sweep's end: how many removals failed (to be tried again soon), or -errno when the broker could
 * not say what there is (-ECANCELED: the broker's client was freed). */
typedef void (*SweepDone)(int failed, void *userdata);

/* The pool manager's sweep: what the host holds of sandboxd that no row of db owns is removed, through
 * the broker's asynchronous client, with one journal entry each
 * (POOL_EVENT=swept or SESSION_EVENT=swept):
 *   - machine-* units without a pool row (failed or inactive ones are only unloaded);
 *   - for each session without a live row (none, or one marked deleted whose removal failed): its
 *     machine unit, its disk's mount, its disk image and its UID range (BROKER_SESSION_DELETE);
 *   - sockets in POOL_DIR of machines without a pool row and of sessions without a live row.
 * The removals are asked once both lists came; done is called once every request ended, from the
 * loop. 0, or -errno when nothing could be asked (done is not called then). */
int sweep_start(BrokerAsync *broker, sqlite3 *db, SweepDone done, void *userdata);
