/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Request Request;
typedef struct Context Context;
typedef struct ClaimedMachine ClaimedMachine;
typedef struct Error Error;

/* An idle machine of the pool for an execution in language, asked of the pool manager, which hands
 * them out in arrival order; waited for up to pool_wait_s, or until the client goes. Connected and
 * greeted: 0 with the connection in *ret_fd (the caller's), ctx->machine the claim. -EAGAIN when
 * none came in time, -ENOSPC when too many claims wait already, -EHOSTDOWN (*reterr says why) when
 * machines cannot be started, -ECANCELED when the client went, -errno. */
int machine_claim(Request *req, Context *ctx, const char *language, Error *reterr, int *ret_fd);

/* After the answer: the machine back to the pool, or retired when m->retire says why, as the pool
 * manager is told on the claim's connection; m emptied. Safe from any thread: it touches only m. */
void machine_release(ClaimedMachine *m);
