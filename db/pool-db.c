/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "lib/alloc-util.h"
#include "lib/macro.h"
#include "lib/time-util.h"

int db_counter_add(sqlite3 *db, const char *name, int64_t delta) {
        int r = db_run(db, "UPDATE counters SET value = value + ?2 WHERE name = ?1", "tI", name, delta);

        return r < 0 ? r : 0;
}

typedef struct PoolAdd {
        const char *machine_id, *socket, *settings;
} PoolAdd;

static int add_locked(sqlite3 *db, void *userdata) {
        const PoolAdd *a = userdata;
        int r = db_run(db, "INSERT INTO pool (machine_id, state, socket, created_at, settings) VALUES (?1, 'starting', ?2, ?3, ?4)", "ttdt",
                       a->machine_id, a->socket, now_unix(), a->settings);

        return r < 0 ? r : db_event_add(db, "machine_created", "", 1);
}

int db_pool_add(sqlite3 *db, const char *machine_id, const char *socket, const char *settings) {
        return db_transaction(db, add_locked, &(PoolAdd){machine_id, socket, settings});
}

int db_pool_ready(sqlite3 *db, const char *machine_id) {
        int r = db_run(db, "UPDATE pool SET state = 'ready', ready_at = ?2 WHERE machine_id = ?1 AND state = 'starting'", "td",
                       machine_id, now_unix());

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

typedef struct Claim {
        sqlite3_stmt *st; /* UPDATE ... RETURNING machine_id, socket, executions */
        bool execution;   /* a sandbox is made on the machine: counted in created_total */
        char *id, *socket;
        size_t id_size, socket_size;
        int64_t executions;
} Claim;

static int claim_locked(sqlite3 *db, void *userdata) {
        Claim *c = userdata;
        int r = db_step_row(c->st);

        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        (void) snprintf(c->id, c->id_size, "%s", (const char *) sqlite3_column_text(c->st, 0));
        (void) snprintf(c->socket, c->socket_size, "%s", (const char *) sqlite3_column_text(c->st, 1));
        c->executions = sqlite3_column_int64(c->st, 2);
        r = db_step_row(c->st);
        if (r < 0)
                return r;
        return c->execution ? db_counter_add(db, "created_total", 1) : 0;
}

/* One claim: the write lock first, so two workers never get the same row. -ENOENT: none. */
static int claim(sqlite3 *db, Claim *c) {
        return db_transaction(db, claim_locked, c);
}

int db_pool_claim(sqlite3 *db, int owner_pid, const char *language, char *ret_machine_id, size_t id_size, char *ret_socket, size_t socket_size,
                  int64_t *ret_executions) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        Claim c = {.execution = true, .id = ret_machine_id, .id_size = id_size, .socket = ret_socket, .socket_size = socket_size};
        int r;

        r = db_prepare(db, &st,
                       "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2, executions = executions + 1 WHERE machine_id = "
                       "(SELECT machine_id FROM pool WHERE state = 'ready' ORDER BY prepared IS NOT ?3, ready_at LIMIT 1) "
                       "RETURNING machine_id, socket, executions",
                       "idt", owner_pid, now_unix(), language ? language : "python");
        if (r < 0)
                return r;
        c.st = st;
        r = claim(db, &c);
        if (r >= 0 && ret_executions)
                *ret_executions = c.executions;
        return r;
}

int db_pool_claim_id(sqlite3 *db, const char *machine_id, int owner_pid, int64_t *ret_executions) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        char id[64], socket[POOL_SOCKET_MAX];
        Claim c = {.execution = true, .id = id, .id_size = sizeof(id), .socket = socket, .socket_size = sizeof(socket)};
        int r;

        r = db_prepare(db, &st,
                       "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2, executions = executions + 1 "
                       "WHERE machine_id = ?3 AND state = 'ready' RETURNING machine_id, socket, executions",
                       "idt", owner_pid, now_unix(), machine_id);
        if (r < 0)
                return r;
        c.st = st;
        r = claim(db, &c);
        if (r >= 0)
                *ret_executions = c.executions;
        return r;
}

int db_pool_release(sqlite3 *db, const char *machine_id, const char *prepared) {
        int r = db_run(db,
                       "UPDATE pool SET state = 'ready', owner_pid = NULL, ready_at = ?2, prepared = ?3 WHERE machine_id = ?1 AND state = 'claimed'",
                       "tdt", machine_id, now_unix(), prepared ? prepared : "python");

        if (r < 0)
                return r;
        return r == 1 ? 0 : -ENOENT;
}

int db_pool_claim_idle(sqlite3 *db, int owner_pid, double ready_before, int64_t keep, double surplus_ready_before, char *ret_machine_id,
                       size_t id_size, char *ret_socket, size_t socket_size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = db_prepare(db, &st,
                       "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2 WHERE machine_id = "
                       "(SELECT machine_id FROM pool WHERE state = 'ready' AND "
                       "(ready_at < ?3 OR ((SELECT count(*) FROM pool WHERE state = 'ready') > ?4 AND ready_at < ?5)) "
                       "ORDER BY ready_at LIMIT 1) RETURNING machine_id, socket, executions",
                       "iddId", owner_pid, now_unix(), ready_before, keep, surplus_ready_before);
        if (r < 0)
                return r;
        return claim(db, &(Claim){.st = st, .id = ret_machine_id, .id_size = id_size, .socket = ret_socket, .socket_size = socket_size});
}

int db_pool_claim_stale(sqlite3 *db, int owner_pid, const char *settings, char *ret_machine_id, size_t id_size, char *ret_socket,
                        size_t socket_size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = db_prepare(db, &st,
                       "UPDATE pool SET state = 'claimed', owner_pid = ?1, claimed_at = ?2 WHERE machine_id = "
                       "(SELECT machine_id FROM pool WHERE state = 'ready' AND settings IS NOT ?3 LIMIT 1) "
                       "RETURNING machine_id, socket, executions",
                       "idt", owner_pid, now_unix(), settings);
        if (r < 0)
                return r;
        return claim(db, &(Claim){.st = st, .id = ret_machine_id, .id_size = id_size, .socket = ret_socket, .socket_size = socket_size});
}

typedef struct PoolRemove {
        const char *machine_id, *reason;
} PoolRemove;

static int remove_locked(sqlite3 *db, void *userdata) {
        const PoolRemove *p = userdata;
        int r = db_run(db, "DELETE FROM pool WHERE machine_id = ?1", "t", p->machine_id);

        /* Counted once, by whoever removed the row. */
        if (r <= 0 || !p->reason)
                return r < 0 ? r : 0;
        return db_event_add(db, "machine_retired", p->reason, 1);
}

int db_pool_remove(sqlite3 *db, const char *machine_id, const char *reason) {
        return db_transaction(db, remove_locked, &(PoolRemove){machine_id, reason});
}

/* 1 if the query (with text ?1, if given) has a row, 0 if not, -errno. */
static int has_row(sqlite3 *db, const char *sql, const char *text) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r = text ? db_prepare(db, &st, sql, "t", text) : db_prepare(db, &st, sql, "");

        return r < 0 ? r : db_step_row(st);
}

int db_pool_any_ready(sqlite3 *db) {
        return has_row(db, "SELECT 1 FROM pool WHERE state = 'ready' LIMIT 1", NULL);
}

int db_pool_exists(sqlite3 *db, const char *machine_id) {
        return has_row(db, "SELECT 1 FROM pool WHERE machine_id = ?1", machine_id);
}

int db_pool_health_failed(sqlite3 *db, const char *reason) {
        int r = db_run(db, "UPDATE pool_health SET failures = failures + 1, last_error = ?1, at = ?2 WHERE id = 1", "td",
                       reason, now_unix());

        return r < 0 ? r : 0;
}

int db_pool_health_ok(sqlite3 *db) {
        /* Most starts succeed: write only when there is something to clear. */
        return db_exec(db, "UPDATE pool_health SET failures = 0, last_error = NULL WHERE id = 1 AND failures > 0");
}

int db_pool_health(sqlite3 *db, double since, int *ret_failures, char *buf, size_t size) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = db_prepare(db, &st, "SELECT failures, coalesce(last_error, '') FROM pool_health WHERE id = 1 AND at >= ?1", "d", since);
        if (r >= 0)
                r = db_step_row(st);
        if (r < 0)
                return r;
        *ret_failures = 0;
        if (r > 0) {
                *ret_failures = sqlite3_column_int(st, 0);
                (void) snprintf(buf, size, "%s", (const char *) sqlite3_column_text(st, 1));
        }
        return 0;
}

int db_pool_counts(sqlite3 *db, PoolCounts *ret) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        int r;

        r = db_prepare(db, &st,
                       "SELECT (SELECT count(*) FROM pool WHERE state = 'ready'), (SELECT count(*) FROM pool WHERE state = 'starting'), "
                       "(SELECT count(*) FROM pool WHERE state = 'claimed'), (SELECT value FROM counters WHERE name = 'created_total'), "
                       "(SELECT value FROM counters WHERE name = 'waits')",
                       "");
        if (r >= 0)
                r = db_step_row(st);
        if (r <= 0)
                return r < 0 ? r : -EIO;
        *ret = (PoolCounts){
                .ready = sqlite3_column_int64(st, 0),
                .starting = sqlite3_column_int64(st, 1),
                .claimed = sqlite3_column_int64(st, 2),
                .created_total = sqlite3_column_int64(st, 3),
                .waits = sqlite3_column_int64(st, 4),
        };
        return 0;
}

int db_pool_list(sqlite3 *db, const char *state, int owner_pid, PoolRow **ret, size_t *ret_n) {
        cleanup_stmt sqlite3_stmt *st = NULL;
        cleanup_free PoolRow *rows = NULL;
        size_t n = 0, cap = 0;
        int r;

        r = db_prepare(db, &st,
                       "SELECT machine_id, state, socket, coalesce(owner_pid, 0), settings FROM pool "
                       "WHERE (?1 IS NULL OR state = ?1) AND (?2 = 0 OR owner_pid = ?2)",
                       "ti", state, owner_pid);
        if (r < 0)
                return r;
        while ((r = db_step_row(st)) > 0) {
                if (ARRAY_GROW(rows, cap, n, 16) < 0)
                        return -ENOMEM;
                rows[n] = (PoolRow){.owner_pid = sqlite3_column_int(st, 3)};
                (void) snprintf(rows[n].machine_id, sizeof(rows[n].machine_id), "%s", (const char *) sqlite3_column_text(st, 0));
                (void) snprintf(rows[n].state, sizeof(rows[n].state), "%s", (const char *) sqlite3_column_text(st, 1));
                (void) snprintf(rows[n].socket, sizeof(rows[n].socket), "%s", (const char *) sqlite3_column_text(st, 2));
                (void) snprintf(rows[n].settings, sizeof(rows[n].settings), "%s", (const char *) sqlite3_column_text(st, 4));
                n++;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rows);
        *ret_n = n;
        return 0;
}
