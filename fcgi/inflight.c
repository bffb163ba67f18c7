/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "fcgi/inflight.h"
#include "fcgi/session-route.h"

Load inflight_load(const char *method, const char *path, const char *raw_path) {
        const Route *route = NULL;
        SessionRoute s;
        int found = route_find(method, path, &route);

        /* A 404 or a 405 is answered at once. */
        if (found != 200)
                return LOAD_CONTROL;
        switch (route->id) {
        case ROUTE_POOL:
        case ROUTE_METRICS:
        case ROUTE_OPENAPI:
        case ROUTE_RUNTIMES:
                return LOAD_CONTROL;
        case ROUTE_SESSIONS:
                /* A session's listing and status come from sqlite; its files, runs and lifecycle
                 * take its turn and its machine. */
                if (strcmp(method, "GET") != 0)
                        return LOAD_WORK;
                if (session_route_parse(raw_path, &s) < 0)
                        return LOAD_CONTROL; /* a 404 */
                return s.action == SESSION_COLLECTION || s.action == SESSION_ONE ? LOAD_CONTROL : LOAD_WORK;
        default:
                return LOAD_WORK;
        }
}

Inflight *inflight_new(void) {
        Inflight *f = mmap(NULL, sizeof(Inflight), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        return f == MAP_FAILED ? NULL : f;
}

int inflight_take(Inflight *f, unsigned slot, Load load, unsigned max) {
        /* The worker's own count first: a worker killed between the two leaves the total one short
         * (a bound one too wide, for a moment), never one too many for good. */
        atomic_fetch_add(&f->by_worker[slot][load], 1);
        if (atomic_fetch_add(&f->total[load], 1) >= (int) max) {
                atomic_fetch_sub(&f->total[load], 1);
                atomic_fetch_sub(&f->by_worker[slot][load], 1);
                return -EBUSY;
        }
        return 0;
}

void inflight_give_back(Inflight *f, unsigned slot, Load load) {
        atomic_fetch_sub(&f->total[load], 1);
        atomic_fetch_sub(&f->by_worker[slot][load], 1);
}

void inflight_release_worker(Inflight *f, unsigned slot) {
        for (int l = 0; l < _LOAD_MAX; l++)
                atomic_fetch_sub(&f->total[l], atomic_exchange(&f->by_worker[slot][l], 0));
}

unsigned inflight_count(Inflight *f, Load load) {
        int n = atomic_load(&f->total[load]);

        return n > 0 ? (unsigned) n : 0;
}
