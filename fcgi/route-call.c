/* SPDX-License-Identifier: MIT */
/* POST /v1/call: one function of an agent's own code, in a one-use sandbox made from its image. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>

#include "db/keys.h"
#include "db/requests.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "fcgi/tool-manifest.h"
#include "fcgi/validate.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/image-name.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/sandbox.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

#define CALL_MAX_BODY_BYTES (1U << 20)  /* reference: tool-call bodies are capped at 1 MiB */

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
        if (json_object_object_add(out, "duration_ms", json_object_new_int64(req->duration_ms)) < 0 || reply_add_usage(req, out) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* Whether a tool sandbox that ended before its ready marker never got its interpreter going, by what
 * systemd says of the unit's main process, systemd-nspawn. nspawn exits with its container's exit
 * status, and when it cannot execute the payload (no such file, not executable, a dangling link) or
 * set up the container for it, the container's init exits EXIT_FAILURE: so systemd reports
 * Result=exit-code, ExecMainCode=CLD_EXITED, ExecMainStatus=1. That status alone cannot tell "nspawn
 * could not start /usr/bin/python3" from "python3 started and exited 1" (an uncaught exception): nspawn
 * gives no status of its own to an exec failure. Before the marker, though, no agent code has run (the
 * tool runner prints it first), so a status 1 there means the image's interpreter did not come up
 * either way. Any other ending (another status, a signal, a start job that failed) is not that. */
static bool interpreter_failed(const SandboxResult *res) {
        return strcmp(res->result, "exit-code") == 0 && res->exit_code == CLD_EXITED && res->exit_status == EXIT_FAILURE;
}

static int call_answer(Request *req, const CallRequest *c, const SandboxResult *res) {
        cleanup_json struct json_object *reply = NULL;
        size_t skip = strlen(TOOL_READY_MARKER);

        if (res->killed_unready)
                return reply_error(req, 503, MSG_CALL_READY_TIMEOUT);
        if (!res->ready) {
                log_warning("Tool sandbox '%s' did not start: result %s, main process code %d status %d: %.*s", req->sandbox_id,
                            res->result, res->exit_code, res->exit_status, (int) res->diag_len, res->diag ? res->diag : "");
                if (interpreter_failed(res))
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

/* Whether the call may go ahead, decided here before any machine is asked for: the image must be
 * a tool image sandboxd-image built (its published manifest; never the runtime image, never another
 * tree of the store), one the request's key may call, and the module and function ones it
 * declares. Each refusal is the answer of an image, module or function that does not exist, so a
 * caller learns nothing of what it may not call. 1 when it may; 0 when answered. */
static int call_allowed(Request *req, Context *ctx, const char *image, const CallRequest *c) {
        const Config *cfg = ctx->config;
        char images[API_KEY_IMAGES_MAX + 1] = "", why[256];
        int r;

        if (req->key_name[0]) {
                r = db_key_images(ctx->db, req->key_name, images, sizeof(images));
                if (r < 0 && r != -ENOENT)
                        return reply_error(req, 500, MSG_INTERNAL, "cannot read the key's images");
                /* Revoked since it was let in: it may call nothing. */
                if (r == -ENOENT || !tool_image_listed(images, image))
                        r = -ENOENT;
        } else
                r = 0;
        if (r == 0)
                r = tool_manifest_check(cfg->tool_state_dir, image, c->module, c->function);
        switch (r) {
        case 0:
                return 1;
        case -ENOENT:
                (void) snprintf(why, sizeof(why), MSG_CALL_NO_IMAGE, image, cfg->image_dir);
                return reply_error(req, 503, MSG_CALL_START, why);
        case -ESRCH:
                (void) snprintf(why, sizeof(why), MSG_CALL_NO_MODULE, c->module, c->module);
                return reply_error(req, 502, MSG_CALL_FAILED, why);
        case -ENOSYS:
                (void) snprintf(why, sizeof(why), MSG_CALL_NO_FUNCTION, c->module, c->function);
                return reply_error(req, 502, MSG_CALL_FAILED, why);
        default:
                (void) log_error_errno(r, "Failed to read the manifest of image '%s': %s", image, strerror(-r));
                return reply_error(req, 500, MSG_INTERNAL, "cannot read the image's manifest");
        }
}

/* The broker starts the tool sandbox, from its own configuration, and follows it to its end. */
static int call_run(Request *req, const CallRequest *c, const char *image, const char *input, size_t input_len) {
        SandboxResult res = {};
        Error err = {};
        int r;

        r = broker_run_tool(req->sandbox_id, req->id, image, c->timeout_s, input, input_len, &res, &err);
        /* The broker looked at the image first: no interpreter in it is the answer of a sandbox that
         * found none, without booting one to find out. */
        if (r == -ENOEXEC)
                return reply_error(req, 503, MSG_CALL_NOT_STARTED, MSG_CALL_NO_RUNNER);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to run tool sandbox '%s': %s", req->sandbox_id, error_message(&err, r));
                return reply_error(req, 503, MSG_CALL_START, error_message(&err, r));
        }
        if (res.cpu_usec != UINT64_MAX)
                req->cpu_ms = (int64_t) (res.cpu_usec / 1000);
        if (res.memory_peak_bytes != UINT64_MAX)
                req->memory_peak_bytes = (int64_t) res.memory_peak_bytes;
        r = call_answer(req, c, &res);
        sandbox_result_done(&res);
        return r;
}

int route_call(Request *req, Context *ctx) {
        cleanup_json struct json_object *body = NULL, *input = NULL;
        Error err = {};
        CallRequest c = {};
        char image[80];
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
        const char *text;
        size_t len = 0;
        int r;

        if (req->body_len > CALL_MAX_BODY_BYTES)
                return reply_error(req, 413, MSG_BODY_TOO_LARGE);
        r = validate_parse_body(req->body, req->body_len, &body);
        if (r < 0)
                return reply_body_refused(req, r);
        if (validate_call(body, &validate_call_limits, &c, &err) < 0)
                return reply_error(req, err.status, "%s", err.message);
        /* The name only: the image directory is root's, the broker finds the image in it. */
        if (image_name_from_ref(c.image, image, sizeof(image)) < 0)
                return reply_error(req, 503, MSG_CALL_START, "invalid image reference");
        r = call_allowed(req, ctx, image, &c);
        if (r <= 0)
                return r;

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd) || unit_name_sandbox_id("tool", rnd, req->sandbox_id) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "no randomness");
        r = db_request_sandbox(ctx->db, req->id, req->sandbox_id, NULL, NULL);
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

        return call_run(req, &c, image, text, len);
}
