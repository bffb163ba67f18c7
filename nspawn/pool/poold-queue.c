/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "nspawn/pool/poold-queue.h"

size_t pool_pick(const IdleMachine *m, size_t n, const char *language) {
        size_t best = n, any = n;

        for (size_t i = 0; i < n; i++) {
                if (any == n || m[i].ready_at < m[any].ready_at)
                        any = i;
                if (language && m[i].prepared && strcmp(m[i].prepared, language) == 0 && (best == n || m[i].ready_at < m[best].ready_at))
                        best = i;
        }
        return best < n ? best : any;
}

size_t turn_next(const TurnEntry *e, size_t n, const char *session) {
        size_t first = n;

        for (size_t i = 0; i < n; i++) {
                if (!e[i].session || strcmp(e[i].session, session) != 0)
                        continue;
                if (e[i].held)
                        return n;
                if (first == n || e[i].seq < e[first].seq)
                        first = i;
        }
        return first;
}

size_t turn_queued(const TurnEntry *e, size_t n, const char *session) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += e[i].session && strcmp(e[i].session, session) == 0;
        return k;
}

size_t claim_next(const bool *waiting, const uint64_t *seq, size_t n) {
        size_t first = n;

        for (size_t i = 0; i < n; i++)
                if (waiting[i] && (first == n || seq[i] < seq[first]))
                        first = i;
        return first;
}
