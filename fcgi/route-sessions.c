/* SPDX-License-Identifier: MIT */
/* Sessions: a machine that keeps state between runs (README, "Sessions"). A session owns one
 * machine, started through the broker on the session's own disk, for as long as it is active; its
 * runner (nspawn/runner/runner.c, --session) keeps long-lived python, node and bash interpreters
 * and serves the session's files. Operations on one session take turns, in arrival order, as the
 * pool manager grants them (session-machine.h); it also pauses idle sessions and deletes
 * long-paused ones (nspawn/pool/poold-sessions.c). */
#include <errno.h>
#include <fcgiapp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/sessions.h"
#include "fcgi/egress-check.h"
#include "fcgi/egress-link.h"
#include "fcgi/event-stream.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route-session-files.h"
#include "fcgi/route.h"
#include "fcgi/session-call.h"
#include "fcgi/session-machine.h"
#include "fcgi/session-quota.h"
#include "fcgi/session-route.h"
#include "fcgi/session-view.h"
#include "fcgi/validate.h"
#include "lib/b64.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/json-limits.h"
#include "lib/json-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/session-state.h"
#include "lib/time-util.h"
#include "lib/utf8.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-client.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

/* Past its own timeout a run gets this long to be answered before its machine is stopped. */
#define RUN_GRACE_USEC (15 * USEC_PER_SEC)

static const char *get_str(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

/* v (taken; NULL: an allocation failed) as o's key: 0 or -ENOMEM. */
static int add_taken(struct json_object *o, const char *key, struct json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* Milliseconds to a tenth, as reference 002 writes them (42.1, not 42.099999999999994). */
static struct json_object *ms_json(uint64_t usec) {
        char text[32];

        (void) snprintf(text, sizeof(text), "%.1f", (double) usec / 1000.0);
        /* The number is the text's: rounded to a tenth of a millisecond as %.1f rounds. */
        return json_object_new_double_s(strtod(text, NULL), text);
}

/* A runner text field (base64) as a JSON string that is valid whatever bytes the code printed. */
static struct json_object *output_json(struct json_object *reply, const char *key) {
        cleanup_free uint8_t *raw = NULL;
        cleanup_free char *text = NULL;
        const char *b64 = get_str(reply, key);
        size_t raw_len = 0, len = 0;

        if (!b64 || b64_decode(b64, strlen(b64), &raw, &raw_len) < 0)
                return NULL;
        text = utf8_sanitize(raw, raw_len, &len);
        return text ? json_object_new_string_len(text, (int) len) : NULL;
}

/* How a run or exec ended, in reference 002's words. */
typedef struct RunEnd {
        const char *termination; /* success, exit, timeout, memory_limit, killed */
        int exit_code;
        bool state_reset;
        uint64_t guest_usec; /* the runner's duration_us, or its duration_ms */
        int64_t cpu_ms;
        int64_t memory_peak_bytes;
        struct json_object *stdout_text, *stderr_text; /* owned */
} RunEnd;

static void run_end_done(RunEnd *e) {
        json_object_put(e->stdout_text);
        json_object_put(e->stderr_text);
        e->stdout_text = e->stderr_text = NULL;
}

/* One run or exec on its way: what its steps share, from its body to its answer. */
typedef struct RunCall {
        Request *req;
        Context *ctx;
        const char *id;
        bool exec;
        SessionRun run;              /* the body's, borrowed from body */
        struct json_object *body;    /* owned */
        struct json_object *network; /* the session's network list (owned), or NULL: none */
        EgressLink egress;           /* with network: the link to the relay */
        int turn;                    /* the session's turn, -1 when not held */
        int fd;                      /* the runner's connection */
        uint64_t queue_usec, start;  /* the wait for the turn; when the run was sent */
        bool pending_reset;          /* a reset not said yet, which this run says */
        RunEnd end;
        Error err; /* why the machine failed, for the answer */
} RunCall;

static void run_call_done(RunCall *c) {
        run_end_done(&c->end);
        session_turn_give(&c->turn);
        egress_link_close(&c->egress);
        closep(&c->fd);
        json_object_put(c->body);
        json_object_put(c->network);
        c->body = c->network = NULL;
}

/* Reference 002's "result" of a run. NULL: no memory. */
static struct json_object *run_result_json(const RunCall *c) {
        cleanup_json struct json_object *result = json_object_new_object();
        const RunEnd *e = &c->end;

        if (!result || json_object_object_add(result, "stdout", json_object_get(e->stdout_text)) < 0 ||
            json_object_object_add(result, "stderr", json_object_get(e->stderr_text)) < 0 ||
            json_object_object_add(result, "exit_code", json_object_new_int(e->exit_code)) < 0 ||
            json_object_object_add(result, "termination_reason", json_object_new_string(e->termination)) < 0 ||
            json_object_object_add(result, "duration_ms", ms_json(now_usec(CLOCK_MONOTONIC) - c->start)) < 0 ||
            json_object_object_add(result, "guest_duration_ms", ms_json(e->guest_usec)) < 0)
                return NULL;
        return TAKE_PTR(result);
}

/* Reference 002's "usage" of a run, and sandboxd's own counts. NULL: no memory. */
static struct json_object *run_usage_json(const RunCall *c) {
        cleanup_json struct json_object *usage = json_object_new_object();
        const Request *req = c->req;
        const RunEnd *e = &c->end;

        if (!usage || json_object_object_add(usage, "execution_time_ms", ms_json(e->guest_usec)) < 0 ||
            json_object_object_add(usage, "queue_wait_ms", ms_json(c->queue_usec)) < 0 ||
            json_object_object_add(usage, "timeout_limit_ms", json_object_new_int64((int64_t) c->run.timeout_s * 1000)) < 0 ||
            json_object_object_add(usage, "cpu_ms", json_object_new_int64(e->cpu_ms)) < 0 ||
            json_object_object_add(usage, "memory_peak_bytes", json_object_new_int64(e->memory_peak_bytes)) < 0 ||
            /* A session with network: what this run's code exchanged through the egress relay. */
            (req->network_rx_bytes >= 0 && json_object_object_add(usage, "network_rx_bytes", json_object_new_int64(req->network_rx_bytes)) < 0) ||
            (req->network_tx_bytes >= 0 && json_object_object_add(usage, "network_tx_bytes", json_object_new_int64(req->network_tx_bytes)) < 0))
                return NULL;
        return TAKE_PTR(usage);
}

/* Reference 002's "error" of a run that did not succeed. NULL: no memory. */
static struct json_object *run_error_json(const RunCall *c) {
        cleanup_json struct json_object *error = json_object_new_object();
        const RunEnd *e = &c->end;
        char message[128];

        if (strcmp(e->termination, "timeout") == 0)
                (void) snprintf(message, sizeof(message), "timed out after %us", c->run.timeout_s);
        else if (strcmp(e->termination, "memory_limit") == 0)
                (void) snprintf(message, sizeof(message), "the memory limit of %" PRIu64 " MiB was exceeded", c->ctx->config->memory_max >> 20);
        else
                (void) snprintf(message, sizeof(message), "process exited with code %d", e->exit_code);
        if (!error || json_object_object_add(error, "code", json_object_new_string(c->exec ? "exec_failed" : "execution_failed")) < 0 ||
            json_object_object_add(error, "message", json_object_new_string(message)) < 0)
                return NULL;
        return TAKE_PTR(error);
}

/* reply: reference 002's response to a run or an exec. */
static int run_response(const RunCall *c) {
        cleanup_json struct json_object *out = json_object_new_object(), *session = NULL;
        Request *req = c->req;
        bool ok = strcmp(c->end.termination, "success") == 0;
        Session s;

        if (db_session_get(c->ctx->db, c->id, &s) < 0)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        session = session_json(&s, true, NULL);
        if (!out || !session || json_object_object_add(session, "state_reset", json_object_new_boolean(c->end.state_reset)) < 0)
                return -ENOMEM;
        if (json_object_object_add(out, "status", json_object_new_string(ok ? "success" : "error")) < 0 ||
            json_object_object_add(out, "request_id", json_object_new_string(req->id)) < 0 ||
            json_object_object_add(out, "session_id", json_object_new_string(c->id)) < 0 ||
            add_taken(out, "result", run_result_json(c)) < 0 || add_taken(out, "usage", run_usage_json(c)) < 0 ||
            json_object_object_add(out, "session", TAKE_PTR(session)) < 0 || (!ok && add_taken(out, "error", run_error_json(c)) < 0))
                return -ENOMEM;
        req->has_exit_code = true;
        req->exit_code = c->end.exit_code;
        req->duration_ms = (int64_t) ((now_usec(CLOCK_MONOTONIC) - c->start) / 1000);
        return reply_json(req, 200, out);
}

/* Whether the session's machine ran into its memory limit since it started. */
static bool memory_hit(Context *ctx, const char *id) {
        char unit[SANDBOX_ID_MAX + 16];
        SandboxLimitsHit hit = {};

        if (unit_name_from_id(id, unit, sizeof(unit)) < 0)
                return false;
        sandbox_limits_hit(ctx->config->slice, unit, &hit);
        return hit.memory;
}

/* The runner's reply to a run or exec, read into *e. A memory kill stops the machine: its cgroup's
 * count of them starts again with the next one, and its state is lost anyway. */
static int run_read(Request *req, Context *ctx, const char *id, struct json_object *reply, RunEnd *e) {
        const char *termination = get_str(reply, "termination");
        struct json_object *reset = NULL;

        if (json_int(reply, "status", 0) != 200 || !termination || !json_object_object_get_ex(reply, "exit_code", NULL))
                return -EBADMSG;
        e->exit_code = (int) json_int(reply, "exit_code", -1);
        e->guest_usec = (uint64_t) (json_int(reply, "duration_us", -1) >= 0 ? json_int(reply, "duration_us", 0)
                                                                            : json_int(reply, "duration_ms", 0) * 1000);
        e->cpu_ms = json_int(reply, "cpu_ms", 0);
        e->memory_peak_bytes = json_int(reply, "memory_peak_bytes", 0);
        req->cpu_ms = e->cpu_ms;
        req->memory_peak_bytes = e->memory_peak_bytes;
        e->state_reset = json_object_object_get_ex(reply, "state_reset", &reset) && json_object_get_boolean(reset);
        e->stdout_text = output_json(reply, "stdout_b64");
        e->stderr_text = output_json(reply, "stderr_b64");
        if (!e->stdout_text || !e->stderr_text)
                return -EBADMSG;
        if (strcmp(termination, "timeout") == 0)
                e->termination = "timeout";
        else if (strcmp(termination, "killed") == 0 && (json_int(reply, "oom_kills", 0) > 0 || memory_hit(ctx, id))) {
                e->termination = "memory_limit";
                e->state_reset = true;
                /* Said here, and again by the next run, which starts on a new machine. */
                session_machine_lost(req, ctx, id, "its machine ran out of memory", true);
        } else if (strcmp(termination, "killed") == 0)
                e->termination = "killed";
        else if (strcmp(termination, "exit") == 0)
                e->termination = e->exit_code == 0 ? "success" : "exit";
        else
                return -EBADMSG;
        return 0;
}

/* A streamed run whose client went before its end: its answer into the session's events, where
 * its owner finds what nobody read, and the request's record says so. */
static void stream_unread(Request *req, Context *ctx, const char *id) {
        int r = db_session_event(ctx->db, id, "unread", req->id, req->event_stream->result);

        if (r < 0)
                (void) log_warning_errno(r, "Failed to record the unread answer of a run of session '%s': %s", id, db_errmsg(ctx->db));
        /* An error's own words stay the record's: the event has them too. */
        if (req->status != 200)
                return;
        free(req->error);
        req->error = strdup("the client closed the stream before the run ended; the run went on, its answer is the session's "
                            "\"unread\" event");
}

/* A session made with network: its list (*ret, NULL for one without), allowed still by the
 * operator's and its key's lists, and the egress relay linked in *ret_link (egress-check.h). 1 to go
 * on; 0 when answered; -errno. */
static int session_network(Request *req, Context *ctx, const char *id, struct json_object **ret, EgressLink *ret_link) {
        cleanup_free char *text = NULL;
        int r = db_session_network(ctx->db, id, &text);

        if (r == -ENOENT)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        if (!text)
                return 1;
        *ret = json_tokener_parse(text);
        if (!json_object_is_type(*ret, json_type_array))
                return reply_error(req, 500, MSG_INTERNAL, "the session's network list is unreadable");
        /* The lists may have narrowed since it was made: what it may not reach now, it does not. */
        return egress_request_admit(req, ctx, *ret, ret_link);
}

/* parse and validate: the body, the session, its network still allowed. 1 to go on, 0 answered. */
static int run_parse(RunCall *c) {
        Request *req = c->req;
        Session s;
        int r;

        r = validate_parse_body(req->body, req->body_len, &c->body);
        if (r < 0)
                return reply_body_refused(req, r);
        r = validate_session_run(c->body, c->exec, validate_execute_limits.max_code_bytes, c->ctx->config->session_timeout_max_s, &c->run, &c->err);
        if (r < 0)
                return reply_error(req, c->err.status, "%s", c->err.message);
        if (!req->listener && event_stream_wanted(req) && !event_stream_new(req))
                return -ENOMEM;
        if (db_session_get(c->ctx->db, c->id, &s) < 0)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        return session_network(req, c->ctx, c->id, &c->network, &c->egress);
}

/* The session's turn and its machine, ready: -errno (answered by the caller) or 0. */
static int run_start(RunCall *c) {
        Session s;
        int r = session_turn_take(c->req, c->ctx, c->id, &c->turn, &c->queue_usec);

        if (r < 0)
                return r;
        r = session_machine_ready(c->req, c->ctx, c->id, &s, &c->fd, &c->err);
        if (r < 0)
                return r;
        /* A reset still unsaid (a resume, a new machine) is said by this run, and then no more;
         * one that happens during it is set again for the next. */
        c->pending_reset = s.state_reset;
        if (c->pending_reset && !c->exec)
                (void) db_session_set_reset(c->ctx->db, c->id, false);
        return 0;
}

/* The runner's request: reference 002's fields, as runner-session.c reads them. NULL: no memory. */
static struct json_object *run_input(const RunCall *c) {
        cleanup_json struct json_object *in = json_object_new_object();
        const SessionRun *run = &c->run;

        if (!in || json_object_object_add(in, "op", json_object_new_string(c->exec ? "exec" : "run")) < 0 ||
            (!c->exec && json_object_object_add(in, "language", json_object_new_string(run->language)) < 0) ||
            json_object_object_add(in, c->exec ? "command" : "code", json_object_new_string_len(run->code, (int) run->code_len)) < 0 ||
            json_object_object_add(in, "timeout_ms", json_object_new_int64((int64_t) run->timeout_s * 1000)) < 0 ||
            json_object_object_add(in, "output_cap", json_object_new_int64((int64_t) c->ctx->config->output_cap_bytes)) < 0 ||
            (c->req->listener && json_object_object_add(in, "stream", json_object_new_boolean(1)) < 0) ||
            (c->network && json_object_object_add(in, "egress", json_object_new_boolean(1)) < 0))
                return NULL;
        return TAKE_PTR(in);
}

/* A run whose machine failed under it, as an ending of its own: killed (-1), or the memory limit
 * (137); its state is lost either way, which this answer says. */
static void run_killed(RunCall *c, const char *termination, int exit_code) {
        c->end = (RunEnd){.termination = termination, .exit_code = exit_code, .state_reset = true, .stdout_text = json_object_new_string(""), .stderr_text = json_object_new_string("")};
}

/* What the call's failure r means for the run: an ending (0 with c->end), or the operation's
 * failure (-errno, c->err saying why). The machine goes where it cannot be trusted any more. */
static int run_failed(RunCall *c, int r) {
        Session s;

        if (r == -EPROTO || r == -EREMOTEIO) {
                /* Its code must not run without the way out it was made with: the machine goes. */
                const char *why = r == -EREMOTEIO ? "the egress relay did not take its network" : "its network could not be made";

                session_machine_lost(c->req, c->ctx, c->id, why, true);
                return error_set(&c->err, r, "%s", why);
        }
        if (r == -ECANCELED)
                return r;
        if (r == -ETIME) {
                /* The runner did not end the run itself: the machine goes with everything in it. */
                session_machine_lost(c->req, c->ctx, c->id, "its machine did not end a run that timed out", true);
                run_killed(c, "timeout", -1);
                return 0;
        }
        if (db_session_get(c->ctx->db, c->id, &s) == -ENOENT)
                return -ENOENT; /* deleted while it ran */
        if (r == -EBADMSG || r == -EMSGSIZE) {
                session_machine_lost(c->req, c->ctx, c->id, "its machine's reply could not be read", true);
                return r;
        }
        if (r == -ENOMEM)
                return r;
        /* The machine died under the run: the memory limit, or worse. */
        if (memory_hit(c->ctx, c->id)) {
                session_machine_lost(c->req, c->ctx, c->id, "its machine ran out of memory", true);
                run_killed(c, "memory_limit", 137);
        } else {
                session_machine_lost(c->req, c->ctx, c->id, "its machine ended during a run", true);
                run_killed(c, "killed", -1);
        }
        (void) db_session_set_reset(c->ctx->db, c->id, false);
        return 0;
}

/* act: the run on the session's machine, its end into c->end. -ECANCELED when the client went. */
static int run_act(RunCall *c) {
        cleanup_json struct json_object *input = run_input(c), *reply = NULL;
        Request *req = c->req;
        RunnerCall call = {
                .request = input,
                /* A streamed run's client may go: the run goes on to its end, unread, for the record. */
                .client_fd = req->event_stream ? -1 : req->fcgx->ipcFd,
                .deadline = now_usec(CLOCK_MONOTONIC) + c->run.timeout_s * USEC_PER_SEC + RUN_GRACE_USEC,
                /* The output, base64 in JSON, and the reply's other fields. */
                .max_reply = c->ctx->config->output_cap_bytes / 3 * 8 + (64U << 10),
                .listener = req->listener,
                .egress = c->network ? &c->egress : NULL,
        };
        int r;

        if (!input)
                return -ENOMEM;
        (void) db_session_used(c->ctx->db, c->id, c->exec ? 0 : 1);
        if (req->event_stream) {
                req->event_stream->keep_result = true;
                (void) event_stream_begin(req->event_stream);
        }
        c->start = now_usec(CLOCK_MONOTONIC);
        r = session_runner_call(c->fd, &call, &reply);
        if (c->network)
                egress_request_ended(req, &c->egress);
        if (r >= 0)
                r = run_read(req, c->ctx, c->id, reply, &c->end);
        return r < 0 ? run_failed(c, r) : 0;
}

/* record: the session used, the run in its events. */
static void run_record(RunCall *c) {
        char detail[96];

        if (c->pending_reset)
                c->end.state_reset = true;
        (void) db_session_used(c->ctx->db, c->id, 0);
        (void) snprintf(detail, sizeof(detail), "%s: %s, exit code %d", c->exec ? "exec" : c->run.language, c->end.termination, c->end.exit_code);
        session_event(c->ctx->db, c->id, c->exec ? "exec" : "run", c->req->id, detail);
}

/* POST .../run or .../exec: parse → validate → the turn and the machine → the run → record → reply.
 * The turn is given back before the answer is sent. */
static int session_run(Request *req, Context *ctx, const SessionRoute *route, bool exec) {
        __attribute__((cleanup(run_call_done))) RunCall c = {.req = req, .ctx = ctx, .id = route->id, .exec = exec, .turn = -1, .fd = -1, .egress = EGRESS_LINK_NULL};
        int r = run_parse(&c);

        if (r <= 0)
                return r;
        r = run_start(&c);
        if (r < 0 && c.turn < 0) /* no turn: not the machine's failure */
                return session_turn_error(req, ctx, r);
        if (r >= 0)
                r = run_act(&c);
        if (r == -ECANCELED) {
                /* The client went away: the connection to the runner closes with this request, and
                 * the runner ends the run it was for. */
                session_turn_give(&c.turn);
                return reply_abandoned(req);
        }
        if (r >= 0)
                run_record(&c);
        session_turn_give(&c.turn);
        r = r >= 0 ? run_response(&c) : session_call_error(req, ctx, r, &c.err);
        /* A gone client's answer (its result, or the error of a machine that failed under the run)
         * is kept as its result would have been. */
        if (req->event_stream && req->event_stream->gone)
                stream_unread(req, ctx, c.id);
        return r;
}

/* A new session name: "session-" and 12 random characters, as every unit of sandboxd's is named; on
 * a cluster's member, its name between them, which the front routes by (unit-name.h). */
static int new_session_id(const Config *config, char ret[SANDBOX_ID_MAX]) {
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
        char prefix[8 + MEMBER_NAME_MAX];

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        (void) snprintf(prefix, sizeof(prefix), "session%s%s", config->member[0] ? "-" : "", config->member);
        return unit_name_sandbox_id(prefix, rnd, ret);
}

static int session_create(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL, *out = NULL;
        char id[SANDBOX_ID_MAX];
        int turn = -1;
        SessionCreate c;
        Error err = {};
        Session s;
        size_t n;
        int r;

        r = req->body_len > 0 ? validate_parse_body(req->body, req->body_len, &body) : 0;
        if (r < 0)
                return reply_body_refused(req, r);
        if (validate_session_create(body, &validate_execute_limits, &c, &err) < 0)
                return reply_error(req, err.status, "%s", err.message);
        if (c.network_allow) {
                /* Checked, and the relay there, before anything is made: a session is never made
                 * with less than it asked for. Each run links to the relay again. */
                EgressLink probe = EGRESS_LINK_NULL;

                r = egress_request_admit(req, ctx, c.network_allow, &probe);
                egress_link_close(&probe);
                if (r <= 0)
                        return r;
        }
        if (new_session_id(ctx->config, id) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "no random bytes for a session name");
        r = session_quota_create(req, ctx, id, c.ttl_s);
        if (r == -EDQUOT || r == -ENOSPC)
                return 0; /* answered */
        if (r == -EUSERS)
                return reply_error(req, 503, MSG_SESSIONS_FULL, ctx->config->sessions_max);
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        (void) snprintf(req->session_id, sizeof(req->session_id), "%s", id);
        if (c.network_allow && db_session_set_network(ctx->db, id, json_object_to_json_string_ext(c.network_allow, JSON_C_TO_STRING_PLAIN)) < 0) {
                (void) db_session_delete(ctx->db, id);
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        }
        session_event(ctx->db, id, "create", req->id, NULL);

        /* Its first turn, held until it is made: nothing else starts its machine meanwhile, and the
         * pool manager does not take it for idle. */
        r = session_turn_take(req, ctx, id, &turn, &(uint64_t){0});
        if (r >= 0)
                r = session_machine_start(req, ctx, id, true, &err);
        /* Whatever fails, the loop ends and the clean-up below runs: the queue's turn is given
         * back, the machine and disk removed. */
        n = c.files ? json_object_array_length(c.files) : 0;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = session_put_file(id, json_object_array_get_idx(c.files, i), &err);
        (void) db_session_used(ctx->db, id, 0);
        session_turn_give(&turn);
        if (r < 0) {
                /* Nothing half-made is left: no session, no machine, no disk. */
                (void) db_session_delete(ctx->db, id);
                (void) broker_session_stop(&ctx->broker, id, true, NULL);
                session_event(ctx->db, id, "delete", req->id, err.message);
                if (r == -EIO)
                        return reply_error(req, 400, "%s", err.message);
                return reply_error(req, 502, MSG_SESSION_START, err.message);
        }
        r = db_session_get(ctx->db, id, &s);
        if (r < 0)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        out = session_json(&s, false, ctx->db);
        return out ? reply_json(req, 201, out) : -ENOMEM;
}

static int session_delete(Request *req, Context *ctx, const char *id) {
        cleanup_json struct json_object *out = json_object_new_object();
        char path[POOL_SOCKET_MAX];
        Error err = {};
        int r;

        if (!out)
                return -ENOMEM;
        session_quota_bill(req, ctx, id, "delete");
        r = db_session_delete(ctx->db, id);
        if (r == -ENOENT)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        if (r < 0)
                return reply_error(req, 503, MSG_DB_UNAVAILABLE, db_errmsg(ctx->db));
        /* Its machine and every file go now; operations queued behind find it gone. */
        r = broker_session_stop(&ctx->broker, id, true, &err);
        if (r < 0)
                (void) log_error_errno(r, "Failed to remove the machine and disk of session '%s': %s", id, err.message);
        session_socket_path(id, path, sizeof(path));
        (void) unlink(path);
        session_event(ctx->db, id, "delete", req->id, r < 0 ? err.message : NULL);
        /* A delete takes no turn of the pool manager's: a cluster's member hears of it this way, and
         * the other members stop listing the session (cluster/session-record.h). */
        if (ctx->config->etcd[0])
                (void) pooldc_notify("sessions");
        if (json_object_object_add(out, "session_id", json_object_new_string(id)) < 0 ||
            json_object_object_add(out, "state", json_object_new_string("deleted")) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* The session's machine stopped and its disk unmounted, by the broker: 0, or -EREMOTEIO with *err
 * saying why (never the broker's own errno: its socket missing is -ENOENT, which is no session's
 * absence). */
static int pause_stop(Context *ctx, const char *id, Error *err) {
        int r = broker_session_stop(&ctx->broker, id, false, err);
        Error why = *err;

        if (r >= 0)
                return 0;
        return error_set(err, -EREMOTEIO, "it could not be stopped: %s", error_message(&why, r));
}

/* pause: its machine stopped, its files kept; resume: its machine started again, its interpreters
 * afresh. Each with the session's turn. */
static int session_pause_resume(Request *req, Context *ctx, const char *id, bool pause) {
        cleanup_json struct json_object *out = NULL;
        cleanup_close int fd = -1;
        uint64_t queue_usec = 0;
        int turn = -1;
        bool reset = false;
        Error err = {};
        Session s;
        int r = session_turn_take(req, ctx, id, &turn, &queue_usec);

        if (r < 0)
                return session_turn_error(req, ctx, r);
        r = db_session_get(ctx->db, id, &s);
        if (r >= 0 && pause && session_state_from_string(s.state) == SESSION_ACTIVE) {
                char path[POOL_SOCKET_MAX];

                r = db_session_claim_down(ctx->db, id);
                if (r >= 0 && s.up)
                        session_quota_bill(req, ctx, id, "pause");
                if (r >= 0)
                        r = pause_stop(ctx, id, &err);
                if (r >= 0) {
                        r = db_session_paused(ctx->db, id);
                        if (r == -ENOENT) /* the pool manager finished it first */
                                r = 0;
                }
                /* Failed, its machine may run on (the broker never had the stop, or it did not
                 * stop): active again, its socket and "up" kept, so that the next operation finds
                 * it; one that went meanwhile is stopped, whatever is left of it, before a new one
                 * starts (session_machine_ready()). */
                if (r < 0)
                        (void) db_run(ctx->db, "UPDATE sessions SET state = 'active' WHERE session_id = ?1 AND state = 'pausing'", "t", id);
                if (r >= 0) {
                        session_socket_path(id, path, sizeof(path));
                        (void) unlink(path);
                        session_event(ctx->db, id, "pause", req->id, NULL);
                }
        } else if (r >= 0 && !pause) {
                reset = session_state_from_string(s.state) != SESSION_ACTIVE;
                r = session_machine_ready(req, ctx, id, &s, &fd, &err);
        }
        if (r >= 0)
                r = db_session_get(ctx->db, id, &s);
        session_turn_give(&turn);
        if (r < 0)
                return session_call_error(req, ctx, r, &err);
        out = session_json(&s, false, ctx->db);
        if (!out || (!pause && json_object_object_add(out, "state_reset", json_object_new_boolean(reset || s.state_reset)) < 0))
                return -ENOMEM;
        return reply_json(req, 200, out);
}

int route_sessions(Request *req, Context *ctx) {
        cleanup_json struct json_object *out = NULL;
        SessionRoute route;
        Session s;

        if (session_route_parse(req->raw_path, &route) < 0)
                return reply_error(req, 404, MSG_NOT_FOUND);
        if (!session_route_allows(&route, req->method)) {
                req->allow = route.allow;
                return reply_error(req, 405, MSG_METHOD_NOT_ALLOWED);
        }
        if (route.action == SESSION_COLLECTION)
                return strcmp(req->method, "POST") == 0 ? session_create(req, ctx) : session_list(req, ctx);

        (void) snprintf(req->session_id, sizeof(req->session_id), "%s", route.id);
        /* Any id that is not one of ours is no session: no lookup needed, nothing echoed. */
        if (!broker_id_valid(route.id, "session") || db_session_get(ctx->db, route.id, &s) < 0 || !session_visible(req, ctx, &s)) {
                req->session_id[0] = 0;
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        }
        switch (route.action) {
        case SESSION_ONE:
                if (strcmp(req->method, "DELETE") == 0)
                        return session_delete(req, ctx, route.id);
                out = session_json(&s, false, ctx->db);
                return out ? reply_json(req, 200, out) : -ENOMEM;
        case SESSION_RUN:
        case SESSION_EXEC:
                return session_run(req, ctx, &route, route.action == SESSION_EXEC);
        case SESSION_PAUSE:
        case SESSION_RESUME:
                return session_pause_resume(req, ctx, route.id, route.action == SESSION_PAUSE);
        case SESSION_FILES:
                return route_session_files(req, ctx, &route);
        case SESSION_FILE:
                return route_session_file(req, ctx, &route);
        default:
                return reply_error(req, 404, MSG_NOT_FOUND);
        }
}
