/* SPDX-License-Identifier: MIT */
/* POST /v1/execute: run one snippet in a single-use sandbox. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <systemd/sd-bus.h>

#include "b64.h"
#include "config.h"
#include "db/requests.h"
#include "log.h"
#include "macro.h"
#include "messages.h"
#include "nspawn/nspawn-argv.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"
#include "reply.h"
#include "request.h"
#include "route.h"
#include "utf8.h"
#include "validate.h"

DEFINE_JSON_CLEANUP

static const ValidateLimits execute_limits = {
        .max_code_bytes = 1U << 20,
        .max_stdin_bytes = 8U << 20,
        .max_files = 1000,
        .max_file_bytes = 12U << 20,
        .max_return_files = 100,
        .default_timeout_s = 20,
        .max_timeout_s = 60,
};

/* What the runner inside the sandbox reads on its stdin (nspawn/runner/runner.py). */
static struct json_object *runner_input(const ExecRequest *x, const Config *cfg) {
        cleanup_json struct json_object *in = json_object_new_object();

        if (!in)
                return NULL;
        if (json_object_object_add(in, "code", json_object_new_string_len(x->code, (int) x->code_len)) < 0 ||
            json_object_object_add(in, "output_cap", json_object_new_int64((int64_t) cfg->output_cap_bytes)) < 0 ||
            json_object_object_add(in, "return_cap", json_object_new_int64((int64_t) cfg->return_cap_bytes)) < 0)
                return NULL;
        if (x->stdin_data && json_object_object_add(in, "stdin", json_object_new_string_len(x->stdin_data, (int) x->stdin_len)) < 0)
                return NULL;
        if (x->files && json_object_object_add(in, "files", json_object_get(x->files)) < 0)
                return NULL;
        if (x->return_files && json_object_object_add(in, "return_files", json_object_get(x->return_files)) < 0)
                return NULL;
        return TAKE_PTR(in);
}

static uint32_t random_uid_base(void) {
        /* A 65536-UID range of nspawn's "pick" space (0x80000 … 0x6fff0000), one per sandbox. */
        uint32_t r = 0;

        if (getrandom(&r, sizeof(r), 0) != (ssize_t) sizeof(r))
                r = (uint32_t) getpid();
        return (0x8U + r % (0x6fffU - 0x8U)) << 16;
}

static int new_sandbox_id(char ret[static SANDBOX_ID_MAX]) {
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        return unit_name_sandbox_id("sandbox", rnd, ret);
}

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

/* Returned files: [{path, content_b64}], each checked before it is passed on. */
static int add_files(struct json_object *out, struct json_object *reply) {
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
        return json_object_object_add(out, "files", json_object_get(files));
}

/* The runner's 200 reply, turned into the API's response. */
static int execute_success(Request *req, const ExecRequest *x, struct json_object *reply) {
        cleanup_json struct json_object *out = json_object_new_object();
        struct json_object *code = NULL, *dur = NULL;

        if (!out)
                return -ENOMEM;
        if (!json_object_object_get_ex(reply, "exit_code", &code) || !json_object_is_type(code, json_type_int) ||
            !json_object_object_get_ex(reply, "duration_ms", &dur) || !json_object_is_type(dur, json_type_int))
                return -EBADMSG;

        if (json_object_object_add(out, "sandbox_id", json_object_new_string(req->sandbox_id)) < 0 ||
            add_output(out, "stdout", reply, "stdout_b64") < 0 || add_output(out, "stderr", reply, "stderr_b64") < 0 ||
            json_object_object_add(out, "exit_code", json_object_new_int(json_object_get_int(code))) < 0 ||
            json_object_object_add(out, "duration_ms", json_object_new_int64(json_object_get_int64(dur))) < 0 ||
            add_flag(out, "stdout_truncated", reply) < 0 || add_flag(out, "stderr_truncated", reply) < 0)
                return -EBADMSG;
        if (x->return_files && add_files(out, reply) < 0)
                return -EBADMSG;

        req->has_exit_code = true;
        req->exit_code = json_object_get_int(code);
        req->duration_ms = json_object_get_int64(dur);
        return reply_json(req, 200, out);
}

static int execute_timeout(Request *req, const ExecRequest *x, const SandboxResult *res) {
        cleanup_json struct json_object *out = json_object_new_object();
        char msg[64];

        if (!out)
                return -ENOMEM;
        (void) snprintf(msg, sizeof(msg), "timed out after %us", x->timeout_s);
        req->has_exit_code = true;
        req->exit_code = -1;
        req->duration_ms = (int64_t) (res->duration_usec / 1000);
        if (json_object_object_add(out, "sandbox_id", json_object_new_string(req->sandbox_id)) < 0 ||
            json_object_object_add(out, "stdout", json_object_new_string("")) < 0 ||
            json_object_object_add(out, "stderr", json_object_new_string(msg)) < 0 ||
            json_object_object_add(out, "exit_code", json_object_new_int(-1)) < 0 ||
            json_object_object_add(out, "duration_ms", json_object_new_int64(req->duration_ms)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* The last line nspawn or the runner wrote to stderr: the real reason a sandbox failed. */
static void last_line(const char *s, size_t n, char *buf, size_t size) {
        size_t end = n, start;

        while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == ' '))
                end--;
        start = end;
        while (start > 0 && s[start - 1] != '\n')
                start--;
        (void) snprintf(buf, size, "%.*s", (int) (end - start), s + start);
}

static int execute_failure(Request *req, const SandboxResult *res) {
        char why[512];

        if (res->diag_len > 0)
                last_line(res->diag, res->diag_len, why, sizeof(why));
        else
                why[0] = 0;
        if (!why[0] && strcmp(res->result, "success") == 0)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        if (!why[0])
                (void) snprintf(why, sizeof(why), "sandbox ended with result '%s', status %d", res->result, res->exec_main_status);
        log_warning_errno(0, "Sandbox '%s' failed: %s", req->sandbox_id, why);
        return reply_error(req, 502, MSG_SANDBOX_FAILED, why);
}

/* Parses what the runner wrote and answers accordingly. */
static int execute_answer(Request *req, const ExecRequest *x, const SandboxResult *res) {
        cleanup_json struct json_object *reply = NULL;
        struct json_object *status = NULL, *error = NULL;
        int r;

        if (strcmp(res->result, "timeout") == 0)
                return execute_timeout(req, x, res);
        if (res->reply_len == 0)
                return execute_failure(req, res);
        if (res->reply_truncated || validate_parse_body(res->reply, res->reply_len, &reply) < 0 ||
            !json_object_object_get_ex(reply, "status", &status) || !json_object_is_type(status, json_type_int))
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);

        if (json_object_get_int(status) != 200) {
                if (!json_object_object_get_ex(reply, "error", &error) || !json_object_is_type(error, json_type_string))
                        return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
                return reply_error(req, 502, MSG_SANDBOX_HTTP, json_object_get_int(status), json_object_get_string(error));
        }

        r = execute_success(req, x, reply);
        if (r == -EBADMSG)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        return r;
}

static int execute_run(Request *req, Context *ctx, const ExecRequest *x, const char *input, size_t input_len) {
        const Config *cfg = ctx->config;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        SandboxResult res = {};
        char unit[SANDBOX_ID_MAX + 16], runner[512], etc[512];
        const char *command[] = {"/usr/bin/python3", "-I", "-S", runner, NULL};
        NspawnSpec ns = {.machine = req->sandbox_id, .uid_base = random_uid_base(), .workspace_bytes = cfg->workspace_bytes,
                         .tmp_bytes = cfg->tmp_bytes, .nofile = cfg->nofile, .etc_dir = etc, .user = "sandbox", .command = command};
        SandboxSpec spec = {.unit = unit, .slice = cfg->slice, .request_id = req->id, .nspawn = &ns,
                            .runtime_max_usec = x->timeout_s * USEC_PER_SEC, .memory_max = cfg->memory_max, .tasks_max = cfg->tasks_max,
                            .cpu_quota_per_sec_usec = cfg->cpu_quota_percent * USEC_PER_SEC / 100,
                            .max_reply_bytes = (cfg->output_cap_bytes * 2 + cfg->return_cap_bytes) / 3 * 4 + (64U << 10)};
        sd_bus *bus = context_bus(ctx);
        int r;

        (void) snprintf(runner, sizeof(runner), "%s/runner.py", cfg->lib_dir);
        (void) snprintf(etc, sizeof(etc), "%s/etc", cfg->lib_dir);
        r = unit_name_from_id(req->sandbox_id, unit, sizeof(unit));
        if (r < 0)
                return reply_error(req, 500, MSG_INTERNAL, "bad sandbox id");
        if (!bus)
                return reply_error(req, 502, MSG_SANDBOX_FAILED, "systemd is not reachable over D-Bus");

        r = sandbox_run(bus, &spec, input, input_len, &res, &error);
        if (r < 0) {
                const char *why = sd_bus_error_is_set(&error) ? error.message : strerror(-r);

                log_error_errno(r, "Failed to run sandbox unit '%s': %s", unit, why);
                return reply_error(req, 502, MSG_SANDBOX_FAILED, why);
        }

        req->cpu_usec = res.cpu_usec;
        r = execute_answer(req, x, &res);
        sandbox_result_done(&res);
        return r;
}

int route_execute(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL, *input = NULL;
        ValidateError verr = {};
        ExecRequest x = {};
        const char *text;
        size_t len = 0;
        int r;

        if (validate_parse_body(req->body, req->body_len, &body) < 0)
                return reply_error(req, 400, MSG_INVALID_JSON);
        if (validate_execute(body, &execute_limits, &x, &verr) < 0)
                return reply_error(req, verr.status, "%s", verr.message);

        r = new_sandbox_id(req->sandbox_id);
        if (r < 0)
                return reply_error(req, 500, MSG_INTERNAL, "no randomness");
        r = db_request_sandbox(ctx->db, req->id, req->sandbox_id);
        if (r < 0)
                log_warning_errno(r, "Failed to record sandbox '%s' of the request, ignoring", req->sandbox_id);

        input = runner_input(&x, ctx->config);
        text = input ? json_object_to_json_string_length(input, JSON_C_TO_STRING_PLAIN, &len) : NULL;
        if (!text)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");

        return execute_run(req, ctx, &x, text, len);
}
