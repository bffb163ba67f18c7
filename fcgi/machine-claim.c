/* SPDX-License-Identifier: MIT */
/* A request's machine of the pool: claimed from the pool manager (nspawn/pool/poold-client.h),
 * released to it after the answer. The claim is the connection: all its state is the request's
 * ClaimedMachine, none a process's. */
#include <errno.h>
#include <fcgiapp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fcgi/machine-claim.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool-retire.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/poold-client.h"

/* A claim of the pool manager's, into ctx->machine: 0, or as machine_claim(). */
static int claim(Request *req, Context *ctx, const char *language, uint64_t deadline, Error *reterr) {
        ClaimedMachine *m = &ctx->machine;
        char reason[256] = "";
        PooldMachine got;
        int fd = -1;
        int r = pooldc_claim(language, req->fcgx ? req->fcgx->ipcFd : -1, deadline, &got, &fd, reason, sizeof(reason));

        if (r == -ETIME || r == -ECONNREFUSED)
                return -EAGAIN;
        if (r == -EHOSTDOWN)
                return error_set(reterr, -EHOSTDOWN, "%s", reason);
        if (r < 0)
                return r;
        *m = (ClaimedMachine){.poold_fd = fd};
        (void) snprintf(m->id, sizeof(m->id), "%s", got.id);
        (void) snprintf(m->socket, sizeof(m->socket), "%s", got.socket);
        (void) snprintf(req->machine_id, sizeof(req->machine_id), "%s", got.id);
        /* Its runner ends after this many: the machine is not put back. */
        if (got.executions >= (int64_t) ctx->config->executions_per_machine)
                m->retire = POOL_RETIRE_SERVED;
        return 0;
}

int machine_claim(Request *req, Context *ctx, const char *language, Error *reterr, int *ret_fd) {
        uint64_t start = now_usec(CLOCK_MONOTONIC), deadline = start + ctx->config->pool_wait_s * USEC_PER_SEC;

        /* A machine that does not greet has died since it was put back (nothing was sent to it
         * yet): it is retired, and another claimed, a few times at most. */
        for (unsigned attempt = 0;; attempt++) {
                cleanup_close int fd = -1;
                int r = claim(req, ctx, language, deadline, reterr);

                if (r < 0)
                        return r;
                r = pool_connect(ctx->machine.socket, &fd);
                if (r >= 0)
                        r = pool_wait_greeting(fd, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC);
                if (r >= 0) {
                        req->claim_usec = now_usec(CLOCK_MONOTONIC) - start;
                        *ret_fd = TAKE_FD(fd);
                        return 0;
                }
                (void) log_warning_errno(r, "Machine '%s' does not answer, trying another", req->machine_id);
                ctx->machine.retire = POOL_RETIRE_UNRESPONSIVE;
                machine_release(&ctx->machine);
                req->machine_id[0] = 0;
                if (attempt == 2)
                        return error_set(reterr, -EHOSTDOWN, "the sandbox did not answer");
        }
}

void machine_release(ClaimedMachine *m) {
        if (!m->id[0])
                return;
        pooldc_release(m->poold_fd, pool_retire_label((PoolRetire) m->retire), m->prepared);
        *m = (ClaimedMachine){};
}
