/* SPDX-License-Identifier: MIT */
/* POST /v1/call: one function of an agent's own code, in a one-use sandbox made from its image. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <systemd/sd-bus.h>

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
#include "validate.h"

DEFINE_JSON_CLEANUP

#define CALL_MAX_BODY_BYTES (1U << 20)  /* reference: tool-call bodies are capped at 1 MiB */
#define CALL_MAX_REPLY_BYTES (8U << 20) /* reference: replies are capped at 8 MiB */
#define READY_MARKER "READY\n"
#define TOOLRUNNER_PATH "/run/sandboxd/toolrunner.py"

/* The image directory for a reference, or a 503 answered. */
static int find_image(Request *req, const Config *cfg, const char *ref, char *ret, size_t size) {
        char name[80], python[1100];
        struct stat st;

        if (validate_image_name(ref, name, sizeof(name)) < 0)
                return reply_error(req, 503, MSG_CALL_START, "invalid image reference");
        if ((size_t) snprintf(ret, size, "%s/%s", cfg->image_dir, name) >= size || stat(ret, &st) < 0 || !S_ISDIR(st.st_mode)) {
                char why[256];

                (void) snprintf(why, sizeof(why), "image '%s' not found in %s", name, cfg->image_dir);
                return reply_error(req, 503, MSG_CALL_START, why);
        }
        /* The tool runner is sandboxd's, but the interpreter must be the image's own. The same
         * answer as a sandbox that found none, without booting one to find out. */
        if ((size_t) snprintf(python, sizeof(python), "%s/usr/bin/python3", ret) >= sizeof(python) || stat(python, &st) < 0)
                return reply_error(req, 503, MSG_CALL_NOT_STARTED, MSG_CALL_NO_RUNNER);
        return 0;
}

static int call_reply(Request *req, const SandboxResult *res, struct json_object *reply) {
        cleanup_json struct json_object *out = json_object_new_object();
        struct json_object *status = NULL, *v = NULL;
        const char *s;

        if (!out)
                return -ENOMEM;
        if (!json_object_object_get_ex(reply, "status", &status) || !json_object_is_type(status, json_type_string))
                return reply_error(req, 502, MSG_CALL_INVALID);
        s = json_object_get_string(status);

        if (strcmp(s, "failed") == 0) {
                if (!json_object_object_get_ex(reply, "error", &v) || !json_object_is_type(v, json_type_string))
                        return reply_error(req, 502, MSG_CALL_INVALID);
                return reply_error(req, 502, MSG_CALL_FAILED, json_object_get_string(v));
        }
        if (json_object_object_add(out, "sandbox_id", json_object_new_string(req->sandbox_id)) < 0)
                return -ENOMEM;
        if (strcmp(s, "ok") == 0) {
                /* Empty fields are left out, not sent as null: a None result has no "result". */
                if (json_object_object_get_ex(reply, "result", &v) && v &&
                    json_object_object_add(out, "result", json_object_get(v)) < 0)
                        return -ENOMEM;
        } else if (strcmp(s, "raised") == 0) {
                if (!json_object_object_get_ex(reply, "error", &v) || !json_object_is_type(v, json_type_string))
                        return reply_error(req, 502, MSG_CALL_INVALID);
                if (json_object_object_add(out, "error", json_object_get(v)) < 0)
                        return -ENOMEM;
        } else
                return reply_error(req, 502, MSG_CALL_INVALID);

        req->duration_ms = (int64_t) (res->duration_usec / 1000);
        if (json_object_object_add(out, "duration_ms", json_object_new_int64(req->duration_ms)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

static int call_answer(Request *req, const CallRequest *c, const SandboxResult *res) {
        cleanup_json struct json_object *reply = NULL;
        size_t skip = strlen(READY_MARKER);

        if (res->killed_unready)
                return reply_error(req, 503, MSG_CALL_READY_TIMEOUT);
        if (!res->ready) {
                log_warning_errno(0, "Tool sandbox '%s' did not start: %.*s", req->sandbox_id, (int) res->diag_len, res->diag ? res->diag : "");
                if (res->diag && (strstr(res->diag, "No such file or directory") || strstr(res->diag, "Failed to execute") ||
                                  strstr(res->diag, "Failed to resolve user")))
                        return reply_error(req, 503, MSG_CALL_NOT_STARTED, MSG_CALL_NO_RUNNER);
                return reply_error(req, 503, MSG_CALL_NOT_STARTED, "the tool sandbox exited before it was ready (phase Failed)");
        }
        if (res->killed_timeout) {
                char why[64];

                (void) snprintf(why, sizeof(why), "timed out after %us", c->timeout_s);
                return reply_error(req, 502, MSG_CALL_FAILED, why);
        }
        if (res->reply_truncated)
                return reply_error(req, 502, MSG_CALL_INVALID);
        if (res->reply_len <= skip) {
                char why[128];

                (void) snprintf(why, sizeof(why), "the tool sandbox ended without a reply (%s)", res->result);
                return reply_error(req, 502, MSG_CALL_FAILED, why);
        }
        if (validate_parse_body(res->reply + skip, res->reply_len - skip, &reply) < 0)
                return reply_error(req, 502, MSG_CALL_INVALID);
        return call_reply(req, res, reply);
}

static int call_run(Request *req, Context *ctx, const CallRequest *c, const char *image, const char *input, size_t input_len) {
        const Config *cfg = ctx->config;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        SandboxResult res = {};
        char unit[SANDBOX_ID_MAX + 16], etc[512], runner_bind[600], field[128];
        const char *command[] = {"/usr/bin/python3", "-I", TOOLRUNNER_PATH, NULL};
        const char *binds[] = {runner_bind, NULL};
        NspawnSpec ns = {.machine = req->sandbox_id, .workspace_bytes = cfg->workspace_bytes,
                         .tmp_bytes = cfg->tmp_bytes, .nofile = cfg->nofile, .etc_dir = etc, .user = "sandbox",
                         .command = command, .image = image, .bind_ro = binds};
        SandboxSpec spec = {.unit = unit, .slice = cfg->slice, .log_field = field, .nspawn = &ns,
                            .runtime_max_usec = (cfg->call_ready_timeout_s + c->timeout_s + 10) * USEC_PER_SEC,
                            .memory_max = cfg->memory_max, .tasks_max = cfg->tasks_max,
                            .cpu_quota_per_sec_usec = cfg->cpu_quota_percent * USEC_PER_SEC / 100,
                            .max_reply_bytes = CALL_MAX_REPLY_BYTES + strlen(READY_MARKER), .ready_marker = READY_MARKER,
                            .ready_timeout_usec = cfg->call_ready_timeout_s * USEC_PER_SEC, .run_timeout_usec = c->timeout_s * USEC_PER_SEC};
        sd_bus *bus = context_bus(ctx);
        uint32_t uid_rnd = 0;
        int r;

        if (getrandom(&uid_rnd, sizeof(uid_rnd), 0) != (ssize_t) sizeof(uid_rnd))
                return reply_error(req, 500, MSG_INTERNAL, "no randomness");
        ns.uid_base = nspawn_uid_base(uid_rnd);
        (void) snprintf(etc, sizeof(etc), "%s/etc", cfg->lib_dir);
        (void) snprintf(runner_bind, sizeof(runner_bind), "%s/toolrunner.py:" TOOLRUNNER_PATH, cfg->lib_dir);
        (void) snprintf(field, sizeof(field), "REQUEST_ID=%s", req->id);
        (void) unit_name_from_id(req->sandbox_id, unit, sizeof(unit));
        if (!bus)
                return reply_error(req, 503, MSG_CALL_START, "systemd is not reachable over D-Bus");

        r = sandbox_run(bus, &spec, input, input_len, &res, &error);
        if (r < 0) {
                const char *why = sd_bus_error_is_set(&error) ? error.message : strerror(-r);

                (void) log_error_errno(r, "Failed to run tool sandbox '%s': %s", unit, why);
                return reply_error(req, 503, MSG_CALL_START, why);
        }
        req->cpu_usec = res.cpu_usec;
        r = call_answer(req, c, &res);
        sandbox_result_done(&res);
        return r;
}

int route_call(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL, *input = NULL;
        ValidateError verr = {};
        CallRequest c = {};
        char image[1024];
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
        const char *text;
        size_t len = 0;
        int r;

        if (req->body_len > CALL_MAX_BODY_BYTES)
                return reply_error(req, 413, MSG_BODY_TOO_LARGE);
        if (validate_parse_body(req->body, req->body_len, &body) < 0)
                return reply_error(req, 400, MSG_INVALID_JSON);
        if (validate_call(body, &validate_call_limits, &c, &verr) < 0)
                return reply_error(req, verr.status, "%s", verr.message);
        r = find_image(req, ctx->config, c.image, image, sizeof(image));
        if (r < 0 || req->status != 0)
                return r;

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd) || unit_name_sandbox_id("tool", rnd, req->sandbox_id) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "no randomness");
        r = db_request_sandbox(ctx->db, req->id, req->sandbox_id);
        if (r < 0)
                (void) log_warning_errno(r, "Failed to record sandbox '%s' of the request, ignoring", req->sandbox_id);

        input = json_object_new_object();
        if (!input || json_object_object_add(input, "module", json_object_new_string(c.module)) < 0 ||
            json_object_object_add(input, "function", json_object_new_string(c.function)) < 0 ||
            json_object_object_add(input, "args", c.args ? json_object_get(c.args) : json_object_new_object()) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        text = json_object_to_json_string_length(input, JSON_C_TO_STRING_PLAIN, &len);
        if (!text)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");

        return call_run(req, ctx, &c, image, text, len);
}
