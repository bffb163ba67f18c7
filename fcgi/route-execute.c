/* SPDX-License-Identifier: MIT */
/* POST /v1/execute, and POST /execute (reference 004's shape): run one snippet in a single-use
 * sandbox. */
#include <errno.h>
#include <fcgiapp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "db/requests.h"
#include "fcgi/egress-check.h"
#include "fcgi/egress-link.h"
#include "fcgi/event-stream.h"
#include "fcgi/machine-claim.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/validate.h"
#include "lib/b64.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/fd-wait.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "lib/utf8.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/runner-request.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

/* A runner text field (base64) as a JSON string that is valid whatever bytes the code printed. */
static int add_output(struct json_object *out, const char *key, struct json_object *reply, const char *b64_key) {
        struct json_object *v = NULL;
        cleanup_free uint8_t *raw = NULL;
        cleanup_free char *text = NULL;
        size_t raw_len = 0, len = 0;

        if (!json_object_object_get_ex(reply, b64_key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        if (b64_decode(json_object_get_string(v), (size_t) json_object_get_string_len(v), &raw, &raw_len) < 0)
                return -EBADMSG;
        text = utf8_sanitize(raw, raw_len, &len);
        if (!text)
                return -ENOMEM;
        return json_object_object_add(out, key, json_object_new_string_len(text, (int) len));
}

static int add_flag(struct json_object *out, const char *key, struct json_object *reply) {
        struct json_object *v = NULL;

        /* Absent unless set, so the reference's response shape stays as it is. */
        if (!json_object_object_get_ex(reply, key, &v) || !json_object_get_boolean(v))
                return 0;
        return json_object_object_add(out, key, json_object_new_boolean(1));
}

/* The runner's returned files, [{path, content_b64}] (borrowed), each checked before it is passed
 * on: -EBADMSG for any that is not. */
static int reply_files(struct json_object *reply, struct json_object **ret) {
        struct json_object *files = NULL;
        size_t n;

        if (!json_object_object_get_ex(reply, "files", &files) || !json_object_is_type(files, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(files);
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL;

                if (!json_object_object_get_ex(e, "path", &p) || !json_object_is_type(p, json_type_string) ||
                    !json_object_object_get_ex(e, "content_b64", &c) || !json_object_is_type(c, json_type_string) ||
                    b64_decoded_size(json_object_get_string(c), (size_t) json_object_get_string_len(c)) < 0)
                        return -EBADMSG;
        }
        *ret = files;
        return 0;
}

static int add_files(struct json_object *out, struct json_object *reply) {
        struct json_object *files = NULL;

        if (reply_files(reply, &files) < 0)
                return -EBADMSG;
        return json_object_object_add(out, "files", json_object_get(files));
}

/* A limit the code ran into: named in "limit_exceeded" of flags, and said at the end of out's stderr. */
static int add_limit(struct json_object *out, struct json_object *flags, const Config *cfg, const SandboxLimitsHit *hit) {
        struct json_object *err = NULL;
        char note[160];
        const char *which;
        cleanup_free char *text = NULL;

        if (hit->memory) {
                which = "memory";
                (void) snprintf(note, sizeof(note), "sandboxd: killed: the memory limit of %" PRIu64 " MiB was exceeded\n", cfg->memory_max >> 20);
        } else if (hit->tasks) {
                which = "tasks";
                (void) snprintf(note, sizeof(note), "sandboxd: the limit of %" PRIu64 " processes and threads was reached\n", cfg->tasks_max);
        } else
                return 0;

        if (!json_object_object_get_ex(out, "stderr", &err) ||
            asprintf(&text, "%s%s%s", json_object_get_string(err),
                     json_object_get_string_len(err) > 0 && json_object_get_string(err)[json_object_get_string_len(err) - 1] != '\n' ? "\n" : "",
                     note) < 0)
                return -ENOMEM;
        if (json_object_object_add(out, "stderr", json_object_new_string(text)) < 0)
                return -ENOMEM;
        return json_object_object_add(flags, "limit_exceeded", json_object_new_string(which));
}

/* What every successful reply carries, read once from the runner's. */
typedef struct Outcome {
        int exit_code;
        int64_t duration_ms;
} Outcome;

/* A non-negative integer field of the runner's reply, or -1. */
static int64_t reply_count(struct json_object *reply, const char *key) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(reply, key, &v) || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return -1;
        return json_object_get_int64(v);
}

/* The runner's 200 reply, turned into the API's response. */
static int execute_success(Request *req, const ExecRequest *x, struct json_object *reply, const Config *cfg, const SandboxLimitsHit *hit,
                           const Outcome *o) {
        cleanup_json struct json_object *out = json_object_new_object();

        if (!out)
                return -ENOMEM;
        if (json_object_object_add(out, "sandbox_id", json_object_new_string(req->sandbox_id)) < 0 ||
            add_output(out, "stdout", reply, "stdout_b64") < 0 || add_output(out, "stderr", reply, "stderr_b64") < 0 ||
            json_object_object_add(out, "exit_code", json_object_new_int(o->exit_code)) < 0 ||
            json_object_object_add(out, "duration_ms", json_object_new_int64(o->duration_ms)) < 0 ||
            add_flag(out, "stdout_truncated", reply) < 0 || add_flag(out, "stderr_truncated", reply) < 0)
                return -EBADMSG;
        if (reply_add_usage(req, out) < 0)
                return -ENOMEM;
        if (x->return_files && add_files(out, reply) < 0)
                return -EBADMSG;
        if (add_limit(out, out, cfg, hit) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* Reference 004's output_files: {"<path>": {"content_base64"}}, from the runner's checked list. */
static int add_output_files(struct json_object *details, struct json_object *reply) {
        cleanup_json struct json_object *map = json_object_new_object();
        struct json_object *files = NULL;

        if (!map)
                return -ENOMEM;
        if (reply_files(reply, &files) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < json_object_array_length(files); i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL, *o;

                (void) json_object_object_get_ex(e, "path", &p);
                (void) json_object_object_get_ex(e, "content_b64", &c);
                /* json-c takes a value only when the add succeeds: each failure puts back what it got. */
                o = json_object_new_object();
                if (!o)
                        return -ENOMEM;
                if (json_object_object_add(o, "content_base64", json_object_get(c)) < 0) {
                        json_object_put(c);
                        json_object_put(o);
                        return -ENOMEM;
                }
                if (json_object_object_add(map, json_object_get_string(p), o) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
        }
        return json_object_object_add(details, "output_files", TAKE_PTR(map));
}

static int add_int(struct json_object *out, const char *key, struct json_object *reply) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(reply, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        return json_object_object_add(out, key, json_object_new_int64(json_object_get_int64(v)));
}

/* The runner's 200 reply, in reference 004's shape: stdout, stderr, exit_code, and the rest in
 * execution_details. */
static int execute_success_004(Request *req, struct json_object *reply, const Config *cfg, const SandboxLimitsHit *hit, const Outcome *o) {
        cleanup_json struct json_object *out = json_object_new_object(), *details = json_object_new_object();

        if (!out || !details)
                return -ENOMEM;
        if (add_output(out, "stdout", reply, "stdout_b64") < 0 || add_output(out, "stderr", reply, "stderr_b64") < 0 ||
            json_object_object_add(out, "exit_code", json_object_new_int(o->exit_code)) < 0 ||
            add_output_files(details, reply) < 0 ||
            json_object_object_add(details, "duration_ms", json_object_new_int64(o->duration_ms)) < 0 ||
            add_int(details, "cpu_ms", reply) < 0 || add_int(details, "memory_peak_bytes", reply) < 0 ||
            add_flag(details, "stdout_truncated", reply) < 0 || add_flag(details, "stderr_truncated", reply) < 0)
                return -EBADMSG;
        if (add_limit(out, details, cfg, hit) < 0 || reply_add_usage(req, out) < 0)
                return -ENOMEM;
        if (json_object_object_add(out, "execution_details", TAKE_PTR(details)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

static int execute_timeout(Request *req, const ExecRequest *x, uint64_t duration_usec) {
        cleanup_json struct json_object *out = json_object_new_object();
        char msg[64];

        if (!out)
                return -ENOMEM;
        (void) snprintf(msg, sizeof(msg), "timed out after %us", x->timeout_s);
        req->has_exit_code = true;
        req->exit_code = -1;
        req->duration_ms = (int64_t) (duration_usec / 1000);
        if (x->reference_004) {
                cleanup_json struct json_object *details = json_object_new_object();

                if (!details || json_object_object_add(details, "output_files", json_object_new_object()) < 0 ||
                    json_object_object_add(details, "duration_ms", json_object_new_int64(req->duration_ms)) < 0 ||
                    json_object_object_add(out, "execution_details", TAKE_PTR(details)) < 0)
                        return -ENOMEM;
        } else if (json_object_object_add(out, "sandbox_id", json_object_new_string(req->sandbox_id)) < 0 ||
                   json_object_object_add(out, "duration_ms", json_object_new_int64(req->duration_ms)) < 0)
                return -ENOMEM;
        if (json_object_object_add(out, "stdout", json_object_new_string("")) < 0 ||
            json_object_object_add(out, "stderr", json_object_new_string(msg)) < 0 ||
            json_object_object_add(out, "exit_code", json_object_new_int(-1)) < 0 || reply_add_usage(req, out) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* Parses what the runner answered and answers the client accordingly. */
static int execute_answer(Request *req, Context *ctx, const ExecRequest *x, const char *text, size_t len, SandboxLimitsHit *hit) {
        cleanup_json struct json_object *reply = NULL;
        struct json_object *status = NULL, *error = NULL, *prepared = NULL, *code = NULL, *dur = NULL;
        const Config *cfg = ctx->config;
        Outcome o;
        int r;

        if (validate_parse_body(text, len, &reply) < 0 ||
            !json_object_object_get_ex(reply, "status", &status) || !json_object_is_type(status, json_type_int))
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);

        if (json_object_get_int(status) != 200) {
                if (!json_object_object_get_ex(reply, "error", &error) || !json_object_is_type(error, json_type_string))
                        return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
                return reply_error(req, 502, MSG_SANDBOX_HTTP, json_object_get_int(status), json_object_get_string(error));
        }

        /* The language the machine's next sandbox is ready for: its next claim prefers it. */
        if (json_object_object_get_ex(reply, "prepared", &prepared) && json_object_is_type(prepared, json_type_string) &&
            strcmp(json_object_get_string(prepared), "node") == 0)
                ctx->machine.prepared = "node";
        /* The outcome, read once for either shape, and recorded once the response is made. */
        if (!json_object_object_get_ex(reply, "exit_code", &code) || !json_object_is_type(code, json_type_int) ||
            !json_object_object_get_ex(reply, "duration_ms", &dur) || !json_object_is_type(dur, json_type_int))
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        o = (Outcome){.exit_code = json_object_get_int(code), .duration_ms = json_object_get_int64(dur)};
        /* A kill by the OOM killer in the sandbox's own cgroup: on cgroup v1 the machine's count of
         * them does not include its children's. */
        if (reply_count(reply, "oom_kills") > 0)
                hit->memory = true;
        req->cpu_ms = reply_count(reply, "cpu_ms");
        req->memory_peak_bytes = reply_count(reply, "memory_peak_bytes");
        r = x->reference_004 ? execute_success_004(req, reply, cfg, hit, &o) : execute_success(req, x, reply, cfg, hit, &o);
        if (r == -EBADMSG)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        if (r >= 0) {
                req->has_exit_code = true;
                req->exit_code = o.exit_code;
                req->duration_ms = o.duration_ms;
        }
        return r;
}

/* The execution's own sandbox, made in the claimed machine: a name of its own. */
static int name_sandbox(Request *req) {
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        return unit_name_sandbox_id("sandbox", rnd, req->sandbox_id);
}

/* The most a runner's reply to x may take: both streams at the output cap and the returned files at
 * the return cap, in base64, with every returned file's path as JSON escapes it at worst (6 bytes a
 * byte), and room for the rest. */
static size_t reply_cap(const Config *cfg, const ExecRequest *x) {
        size_t cap = (cfg->output_cap_bytes * 2 + cfg->return_cap_bytes) / 3 * 4 + (64U << 10);
        size_t n = x->return_files ? json_object_array_length(x->return_files) : 0;

        for (size_t i = 0; i < n; i++)
                cap += 6 * (size_t) json_object_get_string_len(json_object_array_get_idx(x->return_files, i)) + 64;
        return cap;
}

/* How an execution that was answered, or not, ended, for its record: a limit it hit first, then
 * what it answered. */
static void set_termination(Request *req, const SandboxLimitsHit *hit) {
        if (hit->memory)
                req->termination = TERMINATION_MEMORY_LIMIT;
        else if (hit->tasks)
                req->termination = TERMINATION_TASKS_LIMIT;
        else if (req->status != 200 || !req->has_exit_code)
                req->termination = TERMINATION_FAILED;
        else
                req->termination = req->exit_code == 0 ? TERMINATION_OK : TERMINATION_EXIT_NONZERO;
}

/* For an execution whose runner never answered: what its machine's cgroup counted since the
 * execution began (CPU) and at most (memory, which includes the machine's own processes). */
static void machine_usage(Request *req, const Config *cfg, const char *unit, const SandboxUsage *before) {
        SandboxUsage now;

        sandbox_usage(cfg->slice, unit, &now);
        if (now.cpu_usec != UINT64_MAX && before->cpu_usec != UINT64_MAX && now.cpu_usec >= before->cpu_usec)
                req->cpu_ms = (int64_t) ((now.cpu_usec - before->cpu_usec) / 1000);
        if (now.memory_peak_bytes != UINT64_MAX)
                req->memory_peak_bytes = (int64_t) now.memory_peak_bytes;
}

/* The request to the runner and its reply. For an execution that asks for network, the runner's
 * first word is the sandbox's listening socket, which goes to the egress relay before the reply is
 * waited for; the relay's counts are the request's once the exchange ended, however it ended. */
static int exchange(Request *req, const ExecRequest *x, int fd, const char *input, size_t input_len, EgressLink *egress, uint64_t deadline,
                    size_t max_reply, char **ret_reply, size_t *ret_len) {
        int client = req->fcgx->ipcFd, r = 0;

        if (egress->fd >= 0) {
                r = pool_send_request(fd, input, input_len, client, deadline);
                if (r >= 0)
                        r = egress_link_start(egress, fd, client, deadline);
                input = NULL;
                if (r == -EPROTO) {
                        /* No socket came: the runner refused, and says why (its refusal holds no
                         * output of the code's), for the journal. */
                        cleanup_free char *said = NULL;
                        size_t n = 0;

                        (void) pool_exchange(fd, NULL, 0, client, deadline, max_reply, &said, &n);
                        if (said && strncmp(said, "{\"status\":400,", 14) == 0)
                                (void) log_error_errno(r, "Sandbox '%s' gave no egress socket: %.300s", req->sandbox_id, said);
                }
        }
        if (r >= 0 && x->stream)
                /* The output goes to its listener as it comes; one gone is a client gone. */
                r = pool_exchange_stream(fd, input, input_len, client, deadline, max_reply, req->listener, ret_reply, ret_len);
        else if (r >= 0)
                r = pool_exchange(fd, input, input_len, client, deadline, max_reply, ret_reply, ret_len);
        if (egress->fd >= 0)
                egress_request_ended(req, egress);
        return r;
}

/* Hands the request to the claimed machine and waits for the reply, at most timeout_s. Whatever
 * leaves the machine in doubt retires it: a timeout, a limit hit, a code process killed by a signal,
 * a reply missing or unreadable. */
static int execute_in(Request *req, Context *ctx, const ExecRequest *x, int fd, const char *input, size_t input_len, EgressLink *egress) {
        const Config *cfg = ctx->config;
        size_t max_reply = reply_cap(cfg, x);
        cleanup_free char *reply = NULL;
        char unit[SANDBOX_ID_MAX + 16];
        SandboxLimitsHit hit = {};
        SandboxUsage before;
        size_t len = 0;
        uint64_t start;
        int r;

        (void) unit_name_from_id(req->machine_id, unit, sizeof(unit));
        sandbox_usage(cfg->slice, unit, &before);
        start = now_usec(CLOCK_MONOTONIC);
        r = exchange(req, x, fd, input, input_len, egress, start + x->timeout_s * USEC_PER_SEC, max_reply, &reply, &len);
        req->exchange_usec = now_usec(CLOCK_MONOTONIC) - start;
        if (r == -EPROTO || r == -EREMOTEIO) {
                /* The code may be running without the way out it asked for: it is stopped with its
                 * machine, and the request answered as a sandbox that failed. */
                ctx->machine.retire = POOL_RETIRE_NO_ANSWER;
                req->termination = TERMINATION_FAILED;
                machine_usage(req, cfg, unit, &before);
                (void) broker_kill(&ctx->broker, req->machine_id);
                return reply_error(req, 502, MSG_SANDBOX_FAILED, r == -EREMOTEIO ? "the egress relay did not take its network" : "its network could not be made");
        }
        if (r == -ECANCELED) {
                /* The client went away: the code is stopped with its machine, whose state is in
                 * doubt, and nobody is answered. */
                ctx->machine.retire = POOL_RETIRE_CLIENT_GONE;
                req->termination = TERMINATION_FAILED;
                machine_usage(req, cfg, unit, &before);
                (void) broker_kill(&ctx->broker, req->machine_id);
                return reply_abandoned(req);
        }
        if (r == -ETIME) {
                /* systemd kills every process of the machine now, not when the answer is sent. */
                ctx->machine.retire = POOL_RETIRE_TIMEOUT;
                req->termination = TERMINATION_TIMEOUT;
                machine_usage(req, cfg, unit, &before);
                (void) broker_kill(&ctx->broker, req->machine_id);
                return execute_timeout(req, x, now_usec(CLOCK_MONOTONIC) - start);
        }
        if (r == -EMSGSIZE) {
                ctx->machine.retire = POOL_RETIRE_REPLY_TOO_LARGE;
                req->termination = TERMINATION_FAILED;
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        }

        /* A machine that retires clean never hit a limit: what its cgroup counted, this one did. */
        sandbox_limits_hit(cfg->slice, unit, &hit);
        if (hit.memory || hit.tasks)
                ctx->machine.retire = hit.memory ? POOL_RETIRE_MEMORY_LIMIT : POOL_RETIRE_TASKS_LIMIT;
        if (r < 0 || len == 0) {
                if (!ctx->machine.retire)
                        ctx->machine.retire = POOL_RETIRE_NO_ANSWER;
                machine_usage(req, cfg, unit, &before);
                char why[128];

                if (hit.memory)
                        (void) snprintf(why, sizeof(why), "the memory limit of %" PRIu64 " MiB was exceeded", cfg->memory_max >> 20);
                else
                        (void) snprintf(why, sizeof(why), "the sandbox ended before it answered");
                (void) log_error_errno(r, "Sandbox '%s' ended without an answer: %s", req->sandbox_id, why);
                r = reply_error(req, 502, MSG_SANDBOX_FAILED, why);
                set_termination(req, &hit);
                return r;
        }
        r = execute_answer(req, ctx, x, reply, len, &hit);
        set_termination(req, &hit);
        if (hit.memory && !ctx->machine.retire)
                ctx->machine.retire = POOL_RETIRE_MEMORY_LIMIT;
        if (ctx->machine.retire)
                return r;
        if (req->status != 200)
                ctx->machine.retire = POOL_RETIRE_REPLY_REFUSED;
        else if (req->has_exit_code && req->exit_code >= 128)
                /* Dead by a signal (128 + N): perhaps the OOM killer, perhaps a crash. */
                ctx->machine.retire = POOL_RETIRE_SIGNAL;
        return r;
}

/* A request let in (and, asking for network, linked to the relay): a machine claimed, the request
 * run in it and answered. */
static int execute_claimed(Request *req, Context *ctx, const ExecRequest *x, EgressLink *egress) {
        cleanup_json struct json_object *input = NULL;
        cleanup_close int fd = -1;
        Error err = {};
        RunnerJob job;
        const char *text;
        size_t len = 0;
        int r;

        execute_request_job(x, ctx->config->output_cap_bytes, ctx->config->return_cap_bytes, &job);
        input = runner_request_new(&job);
        text = input ? json_object_to_json_string_length(input, JSON_C_TO_STRING_PLAIN, &len) : NULL;
        if (!text)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");

        r = name_sandbox(req);
        if (r < 0)
                return reply_error(req, 500, MSG_INTERNAL, "no random bytes for a sandbox name");
        r = machine_claim(req, ctx, x->language, &err, &fd);
        if (r == -ECANCELED)
                return reply_abandoned(req);
        if (r == -ENOSPC) {
                /* Too many wait already: sooner than a wait would end, a machine may be free. */
                req->retry_after_s = 1;
                return reply_error(req, 503, MSG_NO_SANDBOX);
        }
        if (r == -EAGAIN)
                return reply_error(req, 503, MSG_NO_SANDBOX);
        if (r == -EHOSTDOWN)
                return reply_error(req, 502, MSG_SANDBOX_FAILED, err.message);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to claim a sandbox");
                return reply_error(req, 503, MSG_NO_SANDBOX);
        }
        /* From here on it is an execution: counted by its language and how it ends. */
        req->language = x->language;
        r = db_request_sandbox(ctx->db, req->id, req->sandbox_id, req->machine_id, req->language);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record sandbox '%s' of the request, ignoring", req->sandbox_id);
        /* A stream asked for begins as the code does: what went wrong before was answered with its
         * status. One the client is gone from already is noticed by the exchange. */
        if (req->event_stream)
                (void) event_stream_begin(req->event_stream);

        return execute_in(req, ctx, x, fd, text, len, egress);
}

/* A validated request, run in a claimed machine and answered. */
static int execute(Request *req, Context *ctx, const ExecRequest *x) {
        EgressLink egress = EGRESS_LINK_NULL;
        int r;

        if (x->network_allow) {
                r = egress_request_admit(req, ctx, x->network_allow, &egress);
                if (r <= 0)
                        return r;
        }
        r = execute_claimed(req, ctx, x, &egress);
        egress_link_close(&egress);
        return r;
}

/* The output as the code writes it, for a client that asked for an event stream or a listener
 * within the worker (MCP's progress). */
static int stream_setup(Request *req, ExecRequest *x) {
        if (!req->listener && event_stream_wanted(req) && !event_stream_new(req))
                return -ENOMEM;
        x->stream = req->listener != NULL;
        return 0;
}

int route_execute(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL;
        Error err = {};
        ExecRequest x = {};
        int r;

        r = validate_parse_body(req->body, req->body_len, &body);
        if (r < 0)
                return reply_body_refused(req, r);
        if (validate_execute(body, &validate_execute_limits, &x, &err) < 0)
                return reply_error(req, err.status, "%s", err.message);
        if (stream_setup(req, &x) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        /* SANDBOXD_IMPORT_POLICY=curated: the same policy as /execute's, for python. */
        x.import_policy = ctx->config->import_policy_curated && strcmp(x.language, "python") == 0;
        return execute(req, ctx, &x);
}

int route_execute_004(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL;
        Error err = {};
        ExecRequest x = {};
        int r;

        r = validate_parse_body(req->body, req->body_len, &body);
        if (r < 0)
                return reply_body_refused(req, r);
        if (validate_execute_004(body, &validate_execute_limits, &x, &err) < 0)
                return reply_error(req, err.status, "%s", err.message);
        if (stream_setup(req, &x) < 0) {
                execute_request_done(&x);
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        }
        r = execute(req, ctx, &x);
        execute_request_done(&x);
        return r;
}
