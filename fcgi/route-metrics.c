/* SPDX-License-Identifier: MIT */
/* GET /metrics: sandboxd's metrics in the Prometheus text format, read from sqlite, which every
 * worker and the pool manager write to: any worker answers for all of them. A scrape reads small
 * tables of totals (db/schema.sql, step 7), never the requests themselves. Labels whose values are
 * known (languages, terminations, reasons, operations) are all given, at 0 until they happen, so
 * that a series exists before its first event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/metrics-db.h"
#include "db/pool-db.h"
#include "db/requests.h"
#include "fcgi/inflight.h"
#include "fcgi/messages.h"
#include "fcgi/metrics.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/validate.h"
#include "lib/config.h"
#include "lib/error-count.h"
#include "lib/language.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/session-state.h"
#include "nspawn/pool/pool-retire.h"

/* Every table of totals, as read for one scrape. */
typedef struct Scrape {
        MetricsRow *rows[_METRICS_TABLE_MAX];
        size_t n[_METRICS_TABLE_MAX];
        PoolCounts pool;
} Scrape;

static void scrape_done(Scrape *s) {
        for (size_t t = 0; t < _METRICS_TABLE_MAX; t++)
                s->rows[t] = mfree(s->rows[t]);
}

static int scrape_read_all(sqlite3 *db, Scrape *s) {
        for (size_t t = 0; t < _METRICS_TABLE_MAX; t++) {
                int r = db_metrics_rows(db, (MetricsTable) t, &s->rows[t], &s->n[t]);

                if (r < 0)
                        return r;
        }
        return db_pool_counts(db, &s->pool);
}

/* Every table in one read transaction: one snapshot (WAL), so that the numbers agree with each
 * other (machines created = retired + in the pool), and no writer waits for it. */
static int scrape_read(sqlite3 *db, Scrape *s) {
        int r = db_exec(db, "BEGIN");

        if (r < 0)
                return r;
        r = scrape_read_all(db, s);
        if (r < 0) {
                (void) db_exec(db, "ROLLBACK");
                return r;
        }
        return db_exec(db, "COMMIT");
}

/* The row of table t with that key, label, number and API key, or NULL: none counted yet. */
static const MetricsRow *find_key(const Scrape *s, MetricsTable t, const char *key, const char *label, int64_t number, const char *api_key) {
        for (size_t i = 0; i < s->n[t]; i++) {
                const MetricsRow *row = &s->rows[t][i];

                if (strcmp(row->key, key) == 0 && strcmp(row->label, label) == 0 && row->number == number && strcmp(row->api_key, api_key) == 0)
                        return row;
        }
        return NULL;
}

static const MetricsRow *find(const Scrape *s, MetricsTable t, const char *key, const char *label, int64_t number) {
        return find_key(s, t, key, label, number, "");
}

static int64_t count_of(const Scrape *s, MetricsTable t, const char *key, const char *label, int64_t number) {
        const MetricsRow *row = find(s, t, key, label, number);

        return row ? row->count : 0;
}

/* The labels of a sample, with the API key's name last when there is one (API keys on): requests
 * without a key keep the label sets they had before keys existed. */
static int sample_key(FILE *f, const char *name, MetricLabel *labels, size_t n, const char *api_key, int64_t value) {
        if (api_key[0])
                labels[n++] = (MetricLabel){"key", api_key};
        return metrics_sample(f, name, labels, n, value);
}

static int write_requests(FILE *f, const Scrape *s) {
        int r = metrics_family(f, "sandboxd_http_requests_total", "counter",
                               "Requests the workers answered, by the route they matched (unmatched: none) and HTTP status.");

        for (size_t i = 0; r >= 0 && i < s->n[METRICS_REQUESTS]; i++) {
                const MetricsRow *row = &s->rows[METRICS_REQUESTS][i];
                char code[16];

                (void) snprintf(code, sizeof(code), "%lld", (long long) row->number);
                r = sample_key(f, "sandboxd_http_requests_total", (MetricLabel[3]){{"route", row->key}, {"code", code}}, 2, row->api_key,
                               row->count);
        }
        return r;
}

/* Every language and termination of one API key ("": none), at 0 until they happen. */
static int write_executions_of(FILE *f, const Scrape *s, const char *api_key) {
        int r = 0;

        for (size_t l = 0; r >= 0 && l < LANGUAGES_N; l++)
                for (Termination t = TERMINATION_NONE + 1; r >= 0 && t < _TERMINATION_MAX; t++) {
                        const char *lang = language_names[l], *term = db_termination_label(t);
                        const MetricsRow *row = find_key(s, METRICS_EXECUTIONS, lang, term, 0, api_key);

                        r = sample_key(f, "sandboxd_executions_total", (MetricLabel[3]){{"language", lang}, {"termination", term}}, 2, api_key,
                                       row ? row->count : 0);
                }
        return r;
}

/* Whether row i of the executions is the first of its API key's. */
static bool first_of_key(const Scrape *s, size_t i) {
        for (size_t j = 0; j < i; j++)
                if (strcmp(s->rows[METRICS_EXECUTIONS][j].api_key, s->rows[METRICS_EXECUTIONS][i].api_key) == 0)
                        return false;
        return true;
}

static int write_executions(FILE *f, const Scrape *s) {
        int r = metrics_family(f, "sandboxd_executions_total", "counter",
                               "Executions handed to a sandbox, by language and how they ended: ok, exit_nonzero, timeout, "
                               "memory_limit, tasks_limit, failed (no answer that could be passed on).");

        /* Those without a key, then each key's, from its first execution on. */
        if (r >= 0)
                r = write_executions_of(f, s, "");
        for (size_t i = 0; r >= 0 && i < s->n[METRICS_EXECUTIONS]; i++)
                if (s->rows[METRICS_EXECUTIONS][i].api_key[0] && first_of_key(s, i))
                        r = write_executions_of(f, s, s->rows[METRICS_EXECUTIONS][i].api_key);
        return r;
}

static int write_durations(FILE *f, const Scrape *s) {
        size_t n = s->n[METRICS_BOUNDS];
        cleanup_free int64_t *bounds = calloc(n ? n : 1, sizeof(int64_t));
        cleanup_free int64_t *cumulative = calloc(n ? n : 1, sizeof(int64_t));
        int r;

        if (!bounds || !cumulative)
                return -ENOMEM; /* NOLINT(clang-analyzer-unix.Malloc): bounds and cumulative are cleanup_free, unseen by clang-analyzer 14 */
        r = metrics_family(f, "sandboxd_execution_duration_seconds", "histogram",
                           "Time the sandbox took to run an execution's code (as its duration_ms), of the executions that "
                           "answered or timed out, by language.");
        for (size_t i = 0; i < n; i++)
                bounds[i] = s->rows[METRICS_BOUNDS][i].number;
        for (size_t l = 0; r >= 0 && l < LANGUAGES_N; l++) {
                const char *lang = language_names[l];
                const MetricsRow *total = find(s, METRICS_DURATIONS, lang, "", 0);

                for (size_t i = 0; i < n; i++)
                        cumulative[i] = count_of(s, METRICS_BUCKETS, lang, "", bounds[i]);
                r = metrics_histogram_ms(f, "sandboxd_execution_duration_seconds", (const MetricLabel[]){{"language", lang}}, 1, bounds,
                                         cumulative, n, total ? total->count : 0, total ? total->sum : 0);
        }
        return r;
}

static int gauge(FILE *f, const char *name, const char *help, int64_t value) {
        int r = metrics_family(f, name, "gauge", help);

        return r < 0 ? r : metrics_sample(f, name, NULL, 0, value);
}

static int counter(FILE *f, const char *name, const char *help, int64_t value) {
        int r = metrics_family(f, name, "counter", help);

        return r < 0 ? r : metrics_sample(f, name, NULL, 0, value);
}

/* The numbers of GET /v1/pool, and the machines' comings and goings. */
static int write_pool(FILE *f, const Scrape *s, const Config *cfg) {
        int r = 0;

        if (r >= 0)
                r = gauge(f, "sandboxd_pool_warm_machines", "Idle machines, ready for an execution (GET /v1/pool: warm).", s->pool.ready);
        if (r >= 0)
                r = gauge(f, "sandboxd_pool_target_machines", "Idle machines the pool manager keeps ready (SANDBOXD_POOL_TARGET).",
                          (int64_t) cfg->pool_target);
        if (r >= 0)
                r = gauge(f, "sandboxd_pool_in_flight_executions", "Executions running now, one per busy machine (GET /v1/pool: in_flight).",
                          s->pool.claimed);
        if (r >= 0)
                r = gauge(f, "sandboxd_pool_starting_machines", "Machines started and not ready yet.", s->pool.starting);
        if (r >= 0)
                r = counter(f, "sandboxd_sandboxes_created_total", "Sandboxes made, one per execution (GET /v1/pool: created_total).",
                            s->pool.created_total);
        if (r >= 0)
                r = counter(f, "sandboxd_pool_waits_total", "Executions that found no idle machine and waited for one.", s->pool.waits);
        if (r >= 0)
                r = counter(f, "sandboxd_machines_created_total", "Machines the pool manager started.",
                            count_of(s, METRICS_EVENTS, "machine_created", "", 0));
        if (r >= 0)
                r = metrics_family(f, "sandboxd_machines_retired_total", "counter", "Machines destroyed, by the reason why.");
        for (PoolRetire why = POOL_RETIRE_NONE + 1; r >= 0 && why < _POOL_RETIRE_MAX; why++)
                r = metrics_sample(f, "sandboxd_machines_retired_total", (const MetricLabel[]){{"reason", pool_retire_label(why)}}, 1,
                                   count_of(s, METRICS_EVENTS, "machine_retired", pool_retire_label(why), 0));
        return r;
}

/* Sessions by state, from their table when the schema has one; none until then. */
static int write_sessions(FILE *f, const Scrape *s) {
        const char *const states[] = {session_state_to_string(SESSION_ACTIVE), session_state_to_string(SESSION_PAUSED)};
        int r = metrics_family(f, "sandboxd_sessions", "gauge", "Sessions, by state.");

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(states); i++)
                r = metrics_sample(f, "sandboxd_sessions", (const MetricLabel[]){{"state", states[i]}}, 1,
                                   count_of(s, METRICS_SESSIONS, states[i], "", 0));
        return r;
}

/* What code with network did through the egress relay and proxy (README, "Network: egress by
 * name"): totals recorded with each request that asked for it. */
static int write_egress(FILE *f, const Scrape *s) {
        static const char *const directions[] = {"rx", "tx"};
        int r = counter(f, "sandboxd_egress_connections_total", "Connections code made to the egress proxy.",
                        count_of(s, METRICS_EVENTS, "egress_connection", "", 0));

        if (r >= 0)
                r = counter(f, "sandboxd_egress_refusals_total",
                            "Requests and tunnels the egress proxy refused, and connections past a sandbox's limit.",
                            count_of(s, METRICS_EVENTS, "egress_refusal", "", 0));
        if (r >= 0)
                r = metrics_family(f, "sandboxd_egress_bytes_total", "counter", "Bytes through the egress relay: rx to the code, tx from it.");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(directions); i++)
                r = metrics_sample(f, "sandboxd_egress_bytes_total", (const MetricLabel[]){{"direction", directions[i]}}, 1,
                                   count_of(s, METRICS_EVENTS, "egress_bytes", directions[i], 0));
        return r;
}

static int write_errors(FILE *f, const Scrape *s) {
        int r = counter(f, "sandboxd_sqlite_errors_total", "sqlite calls that failed, in the workers and the pool manager.",
                        count_of(s, METRICS_EVENTS, "sqlite_error", "", 0));

        if (r >= 0)
                r = metrics_family(f, "sandboxd_broker_errors_total", "counter",
                                   "Calls to the broker that failed (not reached, or it could not do what was asked), by operation.");
        for (ErrorCount e = ERROR_COUNT_SQLITE + 1; r >= 0 && e < _ERROR_COUNT_MAX; e++)
                r = metrics_sample(f, "sandboxd_broker_errors_total", (const MetricLabel[]){{"operation", error_count_label(e)}}, 1,
                                   count_of(s, METRICS_EVENTS, error_count_event(e), error_count_label(e), 0));
        return r;
}

/* The requests in flight now, by class, and each class's bound (fcgi/inflight.h). */
static int write_inflight(FILE *f, Inflight *inflight, const Config *cfg) {
        static const char *const classes[_LOAD_MAX] = {[LOAD_WORK] = "work", [LOAD_CONTROL] = "control"};
        const int64_t max[_LOAD_MAX] = {[LOAD_WORK] = cfg->max_inflight, [LOAD_CONTROL] = INFLIGHT_CONTROL_MAX};
        int r = metrics_family(f, "sandboxd_requests_in_flight", "gauge",
                               "Requests being served now, by class: work (executions, tool calls, session operations) or control.");

        for (Load l = 0; r >= 0 && l < _LOAD_MAX; l++)
                r = metrics_sample(f, "sandboxd_requests_in_flight", (const MetricLabel[]){{"class", classes[l]}}, 1,
                                   (int64_t) inflight_count(inflight, l));
        if (r >= 0)
                r = metrics_family(f, "sandboxd_requests_in_flight_max", "gauge",
                                   "Requests in flight at most, by class (work: SANDBOXD_MAX_INFLIGHT); past it, 503 with Retry-After.");
        for (Load l = 0; r >= 0 && l < _LOAD_MAX; l++)
                r = metrics_sample(f, "sandboxd_requests_in_flight_max", (const MetricLabel[]){{"class", classes[l]}}, 1, max[l]);
        return r;
}

static int write_all(FILE *f, const Scrape *s, const Config *cfg) {
        int r = write_requests(f, s);

        if (r >= 0)
                r = write_executions(f, s);
        if (r >= 0)
                r = write_durations(f, s);
        if (r >= 0)
                r = write_pool(f, s, cfg);
        if (r >= 0)
                r = write_sessions(f, s);
        if (r >= 0)
                r = write_errors(f, s);
        if (r >= 0)
                r = write_egress(f, s);
        return r;
}

int route_metrics(Request *req, Context *ctx) {
        cleanup_free char *text = NULL;
        Scrape s = {};
        size_t len = 0;
        FILE *f;
        int r;

        r = scrape_read(ctx->db, &s);
        if (r < 0) {
                scrape_done(&s);
                (void) log_error_errno(r, "Failed to read the metrics: %s", db_errmsg(ctx->db));
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        }
        f = open_memstream(&text, &len);
        r = f ? write_all(f, &s, ctx->config) : -ENOMEM;
        if (r >= 0 && ctx->inflight)
                r = write_inflight(f, ctx->inflight, ctx->config);
        if (f && fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        scrape_done(&s);
        if (r < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        return reply_text(req, 200, METRICS_CONTENT_TYPE, text, len);
}
