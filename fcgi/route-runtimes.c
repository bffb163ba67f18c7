/* SPDX-License-Identifier: MIT */
/* GET /v1/runtimes: the languages of the runtime image and their versions, as sandboxd-image wrote
 * them when it built the image now in use. */
#include <json-c/json.h>
#include <stdio.h>

#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

int route_runtimes(Request *req, Context *ctx) {
        cleanup_json struct json_object *doc = NULL, *out = NULL;
        cleanup_free char *path = NULL;
        struct json_object *runtimes = NULL;

        if (asprintf(&path, "%s/runtimes.json", ctx->config->runtime_state_dir) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        /* Written whole and renamed into place by sandboxd-image: never read half-written. */
        doc = json_object_from_file(path);
        if (!doc || !json_object_object_get_ex(doc, "runtimes", &runtimes) || !json_object_is_type(runtimes, json_type_array)) {
                log_warning("The runtime image's versions cannot be read from %s", path);
                return reply_error(req, 503, MSG_NO_RUNTIME);
        }
        out = json_object_new_object();
        if (!out || json_object_object_add(out, "runtimes", json_object_get(runtimes)) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        return reply_json(req, 200, out);
}
