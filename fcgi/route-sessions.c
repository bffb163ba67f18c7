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
/* A file operation's answer. */
#define FILE_OP_TIMEOUT_USEC (120 * USEC_PER_SEC)

/* The answer to a session operation that failed after its turn: the session gone, too many active
 * to resume it, its machine not starting (*err says why), a reply not to be read, or its machine
 * failing. */
static int session_error(Request *req, Context *ctx, int r, const Error *err) {
        if (req->status != 0)
                return 0; /* answered already: a quota's refusal (session-quota.h) */
        if (r == -ENOENT)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        if (r == -EUSERS)
                return reply_error(req, 503, MSG_SESSIONS_FULL, ctx->config->sessions_max);
        if (r == -EHOSTDOWN)
                return reply_error(req, 502, MSG_SESSION_START, err->message);
        if (r == -EBADMSG || r == -EMSGSIZE)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        return reply_error(req, 502, MSG_SESSION_FAILED, err->message[0] ? err->message : strerror(-r));
}

static const char *get_str(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
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

/* A runner reply of an error: its status (400, 404, 507 …) and message passed on as they are. */
static int runner_error(Request *req, struct json_object *reply) {
        int64_t status = json_int(reply, "status", 502);
        const char *message = get_str(reply, "error");

        if (!message || status < 400 || status > 599)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        return reply_error(req, (int) status, "%s", message);
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

/* Reference 002's response to a run or an exec. */
static int run_response(Request *req, Context *ctx, const char *id, const SessionRun *run, const RunEnd *e, uint64_t start_usec,
                        uint64_t queue_usec) {
        cleanup_json struct json_object *out = json_object_new_object(), *result = json_object_new_object(),
                                        *usage = json_object_new_object(), *session = NULL;
        bool ok = strcmp(e->termination, "success") == 0;
        Session s;
        int r;

        if (!out || !result || !usage)
                return -ENOMEM;
        r = db_session_get(ctx->db, id, &s);
        if (r < 0)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        session = session_json(&s, true, NULL);
        if (!session || json_object_object_add(session, "state_reset", json_object_new_boolean(e->state_reset)) < 0)
                return -ENOMEM;
        if (json_object_object_add(result, "stdout", json_object_get(e->stdout_text)) < 0 ||
            json_object_object_add(result, "stderr", json_object_get(e->stderr_text)) < 0 ||
            json_object_object_add(result, "exit_code", json_object_new_int(e->exit_code)) < 0 ||
            json_object_object_add(result, "termination_reason", json_object_new_string(e->termination)) < 0 ||
            json_object_object_add(result, "duration_ms", ms_json(now_usec(CLOCK_MONOTONIC) - start_usec)) < 0 ||
            json_object_object_add(result, "guest_duration_ms", ms_json(e->guest_usec)) < 0)
                return -ENOMEM;
        if (json_object_object_add(usage, "execution_time_ms", ms_json(e->guest_usec)) < 0 ||
            json_object_object_add(usage, "queue_wait_ms", ms_json(queue_usec)) < 0 ||
            json_object_object_add(usage, "timeout_limit_ms", json_object_new_int64((int64_t) run->timeout_s * 1000)) < 0 ||
            json_object_object_add(usage, "cpu_ms", json_object_new_int64(e->cpu_ms)) < 0 ||
            json_object_object_add(usage, "memory_peak_bytes", json_object_new_int64(e->memory_peak_bytes)) < 0 ||
            /* A session with network: what this run's code exchanged through the egress relay. */
            (req->network_rx_bytes >= 0 && json_object_object_add(usage, "network_rx_bytes", json_object_new_int64(req->network_rx_bytes)) < 0) ||
            (req->network_tx_bytes >= 0 && json_object_object_add(usage, "network_tx_bytes", json_object_new_int64(req->network_tx_bytes)) < 0))
                return -ENOMEM;
        if (json_object_object_add(out, "status", json_object_new_string(ok ? "success" : "error")) < 0 ||
            json_object_object_add(out, "request_id", json_object_new_string(req->id)) < 0 ||
            json_object_object_add(out, "session_id", json_object_new_string(id)) < 0 ||
            json_object_object_add(out, "result", TAKE_PTR(result)) < 0 || json_object_object_add(out, "usage", TAKE_PTR(usage)) < 0 ||
            json_object_object_add(out, "session", TAKE_PTR(session)) < 0)
                return -ENOMEM;
        if (!ok) {
                cleanup_json struct json_object *error = json_object_new_object();
                char message[128];

                if (strcmp(e->termination, "timeout") == 0)
                        (void) snprintf(message, sizeof(message), "timed out after %us", run->timeout_s);
                else if (strcmp(e->termination, "memory_limit") == 0)
                        (void) snprintf(message, sizeof(message), "the memory limit of %" PRIu64 " MiB was exceeded", ctx->config->memory_max >> 20);
                else
                        (void) snprintf(message, sizeof(message), "process exited with code %d", e->exit_code);
                if (!error || json_object_object_add(error, "code", json_object_new_string(run->language ? "execution_failed" : "exec_failed")) < 0 ||
                    json_object_object_add(error, "message", json_object_new_string(message)) < 0 ||
                    json_object_object_add(out, "error", TAKE_PTR(error)) < 0)
                        return -ENOMEM;
        }
        req->has_exit_code = true;
        req->exit_code = e->exit_code;
        req->duration_ms = (int64_t) ((now_usec(CLOCK_MONOTONIC) - start_usec) / 1000);
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

/* One run's steps in their order (turn, machine, run, its end, the answer), each short: apart, they
 * would pass a dozen locals between them. */
static int session_run(Request *req, Context *ctx, const SessionRoute *route, bool exec) { /* NOLINT(readability-function-size) */
        cleanup_json struct json_object *body = NULL, *input = json_object_new_object(), *reply = NULL, *network = NULL;
        cleanup_egress_link EgressLink egress = EGRESS_LINK_NULL;
        cleanup_free char *buf = NULL;
        cleanup_close int fd = -1;
        uint64_t start, queue_usec = 0, deadline;
        size_t max_reply = ctx->config->output_cap_bytes / 3 * 8 + (64U << 10);
        const char *id = route->id;
        RunEnd e = {};
        SessionRun run;
        Error err = {};
        Session s;
        bool pending_reset;
        int turn = -1;
        int r;

        if (!input)
                return -ENOMEM;
        if (validate_parse_body(req->body, req->body_len, &body) < 0)
                return reply_error(req, 400, MSG_INVALID_JSON);
        if (validate_session_run(body, exec, validate_execute_limits.max_code_bytes, ctx->config->session_timeout_max_s, &run, &err) < 0)
                return reply_error(req, err.status, "%s", err.message);
        if (!req->listener && event_stream_wanted(req) && !event_stream_new(req))
                return -ENOMEM;
        if (db_session_get(ctx->db, id, &s) < 0)
                return reply_error(req, 404, MSG_SESSION_NOT_FOUND);
        r = session_network(req, ctx, id, &network, &egress);
        if (r <= 0)
                return r;

        r = session_turn_take(req, ctx, id, &turn, &queue_usec);
        if (r < 0)
                return session_turn_error(req, ctx, r);
        r = session_machine_ready(req, ctx, id, &s, &fd, &err);
        if (r < 0)
                goto answer_error;
        /* A reset still unsaid (a resume, a new machine) is said by this run, and then no more;
         * one that happens during it is set again for the next. */
        pending_reset = s.state_reset;
        if (pending_reset && !exec)
                (void) db_session_set_reset(ctx->db, id, false);
        start = now_usec(CLOCK_MONOTONIC);

        if (json_object_object_add(input, "op", json_object_new_string(exec ? "exec" : "run")) < 0 ||
            (!exec && json_object_object_add(input, "language", json_object_new_string(run.language)) < 0) ||
            json_object_object_add(input, exec ? "command" : "code", json_object_new_string_len(run.code, (int) run.code_len)) < 0 ||
            json_object_object_add(input, "timeout_ms", json_object_new_int64((int64_t) run.timeout_s * 1000)) < 0 ||
            json_object_object_add(input, "output_cap", json_object_new_int64((int64_t) ctx->config->output_cap_bytes)) < 0) {
                r = -ENOMEM;
                goto answer_error;
        }
        if ((req->listener && json_object_object_add(input, "stream", json_object_new_boolean(1)) < 0) ||
            (network && json_object_object_add(input, "egress", json_object_new_boolean(1)) < 0)) {
                r = -ENOMEM;
                goto answer_error;
        }
        (void) db_session_used(ctx->db, id, exec ? 0 : 1);
        deadline = now_usec(CLOCK_MONOTONIC) + run.timeout_s * USEC_PER_SEC + RUN_GRACE_USEC;
        /* A streamed run's client may go: the run goes on to its end, unread, for the record. */
        if (req->event_stream) {
                req->event_stream->keep_result = true;
                (void) event_stream_begin(req->event_stream);
        }
        r = session_runner_call(fd, input, NULL, 0, req->event_stream ? -1 : req->fcgx->ipcFd, deadline, max_reply, req->listener,
                                network ? &egress : NULL, &reply, NULL, NULL, &buf);
        if (network)
                egress_request_ended(req, &egress);
        if (r == -EPROTO || r == -EREMOTEIO) {
                /* Its code must not run without the way out it was made with: the machine goes. */
                session_machine_lost(req, ctx, id, r == -EREMOTEIO ? "the egress relay did not take its network" : "its network could not be made", true);
                (void) error_set(&err, r, r == -EREMOTEIO ? "the egress relay did not take its network" : "its network could not be made");
                goto answer_error;
        }
        if (r >= 0)
                r = run_read(req, ctx, id, reply, &e);
        if (r == -ECANCELED) {
                /* The client went away: the connection to the runner closes with this request, and
                 * the runner ends the run it was for. */
                run_end_done(&e);
                session_turn_give(&turn);
                return reply_abandoned(req);
        }
        if (r == -ETIME) {
                /* The runner did not end the run itself: the machine goes with everything in it. */
                session_machine_lost(req, ctx, id, "its machine did not end a run that timed out", true);
                e = (RunEnd){.termination = "timeout", .exit_code = -1, .state_reset = true, .stdout_text = json_object_new_string(""), .stderr_text = json_object_new_string("")};
                r = 0;
        } else if (r < 0 && db_session_get(ctx->db, id, &s) == -ENOENT) {
                r = -ENOENT; /* deleted while it ran */
                goto answer_error;
        } else if (r < 0 && r != -EBADMSG && r != -EMSGSIZE && r != -ENOMEM) {
                /* The machine died under the run: the memory limit, or worse. */
                bool memory = memory_hit(ctx, id);

                session_machine_lost(req, ctx, id, memory ? "its machine ran out of memory" : "its machine ended during a run", true);
                e = (RunEnd){.termination = memory ? "memory_limit" : "killed", .exit_code = memory ? 137 : -1, .state_reset = true, .stdout_text = json_object_new_string(""), .stderr_text = json_object_new_string("")};
                (void) db_session_set_reset(ctx->db, id, false);
                r = 0;
        }
        if (r < 0) {
                if (r == -EBADMSG || r == -EMSGSIZE)
                        session_machine_lost(req, ctx, id, "its machine's reply could not be read", true);
                goto answer_error;
        }
        if (pending_reset)
                e.state_reset = true;
        (void) db_session_used(ctx->db, id, 0);
        {
                char detail[96];

                (void) snprintf(detail, sizeof(detail), "%s: %s, exit code %d", exec ? "exec" : run.language, e.termination, e.exit_code);
                session_event(ctx->db, id, exec ? "exec" : "run", req->id, detail);
        }
        session_turn_give(&turn);
        r = run_response(req, ctx, id, &run, &e, start, queue_usec);
        run_end_done(&e);
        if (req->event_stream && req->event_stream->gone)
                stream_unread(req, ctx, id);
        return r;

answer_error:
        run_end_done(&e);
        session_turn_give(&turn);
        r = session_error(req, ctx, r, &err);
        /* A gone client's error answer (the machine failed under the run) is kept as its result
         * would have been. */
        if (req->event_stream && req->event_stream->gone)
                stream_unread(req, ctx, id);
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

/* One file operation on the session's runner, with the session's turn held: the reply object, and
 * for "get" the file's bytes (in *ret_buf). Errors are answered here: -errno then means answered. */
static int file_op(Request *req, Context *ctx, const char *id, struct json_object *op, const void *data, size_t len,
                   struct json_object **ret, const char **ret_rest, size_t *ret_rest_len, char **ret_buf) {
        cleanup_close int fd = -1;
        Error err = {};
        Session s;
        int turn = -1;
        uint64_t queue_usec = 0;
        int r = session_turn_take(req, ctx, id, &turn, &queue_usec);

        if (r < 0) {
                (void) session_turn_error(req, ctx, r);
                return r;
        }
        r = session_machine_ready(req, ctx, id, &s, &fd, &err);
        if (r >= 0) {
                r = session_runner_call(fd, op, data, len, -1, now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC,
                                        ctx->config->session_upload_bytes + (64U << 10), NULL, NULL, ret, ret_rest, ret_rest_len, ret_buf);
                if (r < 0 && r != -EMSGSIZE)
                        session_machine_lost(req, ctx, id, "its machine did not answer a file operation", true);
                (void) db_session_used(ctx->db, id, 0);
        }
        session_turn_give(&turn);
        if (r >= 0)
                return 0;
        /* Too large to move is the file's size, not a fault of the machine's reply. */
        if (r == -EMSGSIZE)
                (void) reply_error(req, 413, "the file is larger than %zu bytes, the most sandboxd moves at once (SANDBOXD_SESSION_UPLOAD_BYTES)",
                                   ctx->config->session_upload_bytes);
        else
                (void) session_error(req, ctx, r, &err);
        return r;
}

static struct json_object *op_json(const char *op, const char *key, const char *value) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o || json_object_object_add(o, "op", json_object_new_string(op)) < 0 ||
            (key && json_object_object_add(o, key, json_object_new_string(value)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

/* A file path of the URL, checked as every path a client names is: 0, or answered (400). */
static int file_path_check(Request *req, const char *path) {
        int r = path_relative_check(path, strlen(path), NULL, 0);

        if (r == -EXDEV)
                return reply_error(req, 400, MSG_PATH_ESCAPES, path), -EINVAL;
        if (r < 0)
                return reply_error(req, 400, MSG_SESSION_PATH), -EINVAL;
        return 0;
}

static int session_file(Request *req, Context *ctx, const SessionRoute *route) {
        cleanup_json struct json_object *op = NULL, *reply = NULL;
        cleanup_free char *buf = NULL;
        const char *rest = NULL, *event;
        size_t rest_len = 0;
        int r;

        if (file_path_check(req, route->path) < 0)
                return 0;
        if (req->body_short)
                return reply_error(req, 400, MSG_BODY_SHORT);
        if (strcmp(req->method, "PUT") == 0 && session_disk_reserve(req, ctx) < 0)
                return 0; /* answered: 507 */
        if (strcmp(req->method, "PUT") == 0)
                op = op_json("put", "path", route->path), event = "upload";
        else if (strcmp(req->method, "GET") == 0)
                op = op_json("get", "path", route->path), event = "download";
        else
                op = op_json("delete", "path", route->path), event = "remove";
        if (!op)
                return -ENOMEM;
        if (file_op(req, ctx, route->id, op, req->body, req->body ? req->body_len : 0, &reply, &rest, &rest_len, &buf) < 0)
                return 0;
        if (json_int(reply, "status", 0) >= 300)
                return runner_error(req, reply);
        if (strcmp(req->method, "PUT") == 0 && json_int(reply, "size", -1) != (int64_t) (req->body ? req->body_len : 0))
                return reply_error(req, 502, MSG_SESSION_UPLOAD_SHORT, (long long) json_int(reply, "size", -1), req->body ? req->body_len : 0);
        session_event(ctx->db, route->id, event, req->id, route->path);
        if (strcmp(req->method, "GET") == 0) {
                if (json_int(reply, "size", -1) != (int64_t) rest_len)
                        return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
                return reply_bytes(req, 200, "application/octet-stream", rest, rest_len);
        } else {
                cleanup_json struct json_object *out = json_object_new_object();

                if (!out || json_object_object_add(out, "path", json_object_new_string(route->path)) < 0)
                        return -ENOMEM;
                if (strcmp(req->method, "PUT") == 0)
                        r = json_object_object_add(out, "size", json_object_new_int64(json_int(reply, "size", 0)));
                else
                        r = json_object_object_add(out, "deleted", json_object_new_boolean(1));
                if (r < 0)
                        return -ENOMEM;
                return reply_json(req, strcmp(req->method, "PUT") == 0 ? 201 : 200, out);
        }
}

static int session_files(Request *req, Context *ctx, const SessionRoute *route) {
        cleanup_json struct json_object *op = NULL, *reply = NULL, *out = json_object_new_object();
        cleanup_free char *buf = NULL;
        struct json_object *files = NULL;
        char dir[PATH_MAX_BYTES];
        int r = query_get(req->query, "dir", dir, sizeof(dir));

        if (!out)
                return -ENOMEM;
        if (r < 0)
                return reply_error(req, 400, MSG_SESSION_DIR);
        if (r == 0 || strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
                dir[0] = 0;
        if (dir[0]) {
                size_t n = strlen(dir);

                while (n > 1 && dir[n - 1] == '/')
                        dir[--n] = 0;
                if (path_relative_check(dir, n, NULL, 0) == -EXDEV)
                        return reply_error(req, 400, MSG_PATH_ESCAPES, dir);
                if (path_relative_check(dir, n, NULL, 0) < 0)
                        return reply_error(req, 400, MSG_SESSION_DIR);
        }
        op = op_json("list", "dir", dir);
        if (!op)
                return -ENOMEM;
        if (file_op(req, ctx, route->id, op, NULL, 0, &reply, NULL, NULL, &buf) < 0)
                return 0;
        if (json_int(reply, "status", 0) >= 300)
                return runner_error(req, reply);
        if (!json_object_object_get_ex(reply, "files", &files) || !json_object_is_type(files, json_type_array))
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        session_event(ctx->db, route->id, "list", req->id, dir[0] ? dir : ".");
        if (json_object_object_add(out, "files", json_object_get(files)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* One of a new session's files (validated already, so only an allocation or the machine can fail)
 * written into it: 0, or -errno with *err saying why (-EIO: the runner refused it). */
static int session_put_file(const char *id, struct json_object *e, Error *err) {
        struct json_object *p = NULL, *content = NULL, *op, *reply = NULL;
        cleanup_free uint8_t *raw = NULL;
        cleanup_free char *buf = NULL;
        cleanup_close int fd = -1;
        size_t raw_len = 0;
        int r;

        (void) json_object_object_get_ex(e, "path", &p);
        (void) json_object_object_get_ex(e, "content_b64", &content);
        r = b64_decode(json_object_get_string(content), (size_t) json_object_get_string_len(content), &raw, &raw_len);
        if (r < 0)
                return error_set(err, r, "could not write '%s': %s", json_object_get_string(p), strerror(-r));
        op = op_json("put", "path", json_object_get_string(p));
        r = op ? session_machine_connect(id, &fd) : -ENOMEM;
        if (r >= 0)
                r = session_runner_call(fd, op, raw, raw_len, -1, now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC, 64U << 10, NULL, NULL, &reply, NULL, NULL, &buf);
        json_object_put(op);
        if (r >= 0 && (json_int(reply, "status", 0) != 201 || json_int(reply, "size", -1) != (int64_t) raw_len)) {
                const char *m = get_str(reply, "error");

                r = error_set(err, -EIO, "could not write '%s': %s", json_object_get_string(p), m ? m : "no reason given");
        } else if (r < 0)
                r = error_set(err, r, "could not write '%s': %s", json_object_get_string(p), strerror(-r));
        json_object_put(reply);
        return r;
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

        if (req->body_len > 0 && validate_parse_body(req->body, req->body_len, &body) < 0)
                return reply_error(req, 400, MSG_INVALID_JSON);
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
                        r = broker_session_stop(&ctx->broker, id, false, &err);
                if (r >= 0) {
                        r = db_session_paused(ctx->db, id);
                        if (r == -ENOENT) /* the pool manager finished it first */
                                r = 0;
                }
                if (r < 0) /* still its machine's: active again, the next operation sees to it */
                        (void) db_run(ctx->db, "UPDATE sessions SET state = 'active' WHERE session_id = ?1 AND state = 'pausing'", "t", id);
                session_socket_path(id, path, sizeof(path));
                (void) unlink(path);
                if (r >= 0)
                        session_event(ctx->db, id, "pause", req->id, NULL);
        } else if (r >= 0 && !pause) {
                reset = session_state_from_string(s.state) != SESSION_ACTIVE;
                r = session_machine_ready(req, ctx, id, &s, &fd, &err);
        }
        if (r >= 0)
                r = db_session_get(ctx->db, id, &s);
        session_turn_give(&turn);
        if (r < 0)
                return session_error(req, ctx, r, &err);
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
                return session_files(req, ctx, &route);
        case SESSION_FILE:
                return session_file(req, ctx, &route);
        default:
                return reply_error(req, 404, MSG_NOT_FOUND);
        }
}
