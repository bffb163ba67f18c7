/* SPDX-License-Identifier: MIT */
/* The pool manager's records, retried when sqlite is locked (poold-writes.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/pool-db.h"
#include "db/sessions.h"
#include "lib/alloc-util.h"
#include "lib/macro.h"
#include "nspawn/pool/poold-writes.h"

#define BACKOFF_FIRST_USEC (10 * USEC_PER_MSEC)
#define BACKOFF_MAX_USEC USEC_PER_SEC

uint64_t poold_writes_backoff(unsigned tries) {
        uint64_t usec = BACKOFF_FIRST_USEC << (tries < 10 ? tries : 10);

        return usec < BACKOFF_MAX_USEC ? usec : BACKOFF_MAX_USEC;
}

static int write_run(sqlite3 *db, const PooldWrite *w) {
        switch (w->op) {
        case POOLD_WRITE_POOL_READY:
                return db_pool_ready(db, w->id);
        case POOLD_WRITE_POOL_RELEASE:
                return db_pool_release(db, w->id, w->text[0] ? w->text : NULL);
        case POOLD_WRITE_POOL_REMOVE:
                return db_pool_remove(db, w->id, w->text);
        case POOLD_WRITE_HEALTH_FAILED:
                return db_pool_health_failed(db, w->detail);
        case POOLD_WRITE_HEALTH_OK:
                return db_pool_health_ok(db);
        case POOLD_WRITE_COUNTER:
                return db_counter_add(db, w->text, w->n);
        case POOLD_WRITE_SESSION_USAGE:
                return db_session_usage_add(db, w->id, w->text, NULL, w->n);
        case POOLD_WRITE_SESSION_PAUSED:
                return db_session_paused(db, w->id);
        case POOLD_WRITE_SESSION_ACTIVE:
                return db_session_unpause(db, w->id);
        case POOLD_WRITE_SESSION_EVENT:
                return db_session_event(db, w->id, w->text, NULL, w->detail);
        default:
                return -EINVAL;
        }
}

static int queue_push(PooldWrites *q, const PooldWrite *w, uint64_t now) {
        if (ARRAY_GROW(q->items, q->cap, q->n, 16) < 0)
                return -ENOMEM;
        q->items[q->n++] = *w;
        if (q->next_at == UINT64_MAX)
                q->next_at = now + poold_writes_backoff(q->tries);
        return 0;
}

int poold_writes_do(PooldWrites *q, sqlite3 *db, const PooldWrite *w, uint64_t now) {
        int r;

        /* Behind writes that wait: in order, or a row's removal could pass its release. */
        if (q->n > 0)
                return queue_push(q, w, now);
        r = write_run(db, w);
        if (r == -EBUSY)
                return queue_push(q, w, now);
        return r;
}

unsigned poold_writes_flush(PooldWrites *q, sqlite3 *db, uint64_t now) {
        unsigned failed = 0;
        size_t done = 0;

        if (q->n == 0 || now < q->next_at)
                return 0;
        while (done < q->n) {
                int r = write_run(db, &q->items[done]);

                if (r == -EBUSY)
                        break;
                failed += r < 0 && r != -ENOENT;
                done++;
        }
        memmove(q->items, q->items + done, (q->n - done) * sizeof(*q->items));
        q->n -= done;
        if (q->n == 0) {
                q->tries = 0;
                q->next_at = UINT64_MAX;
        } else {
                q->tries++;
                q->next_at = now + poold_writes_backoff(q->tries);
        }
        return failed;
}

bool poold_writes_holds(const PooldWrites *q, const char *id) {
        for (size_t i = 0; i < q->n; i++)
                if (strcmp(q->items[i].id, id) == 0)
                        return true;
        return false;
}

void poold_writes_done(PooldWrites *q) {
        q->items = mfree(q->items);
        q->n = q->cap = 0;
        q->tries = 0;
        q->next_at = UINT64_MAX;
}
