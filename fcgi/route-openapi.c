/* SPDX-License-Identifier: MIT */
/* GET /v1/openapi.json: the API's description, docs/openapi.json as `make install` put it beside the
 * binaries. It is the one description the tests check every response against, so it is served as
 * it was installed, never written here. */
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

int route_openapi(Request *req, Context *ctx) {
        cleanup_json struct json_object *doc = NULL;
        cleanup_free char *path = NULL;

        if (asprintf(&path, "%s/openapi.json", ctx->config->lib_dir) < 0)
                return reply_error(req, 500, MSG_INTERNAL, "out of memory");
        /* Read on each request: a new install is served without restarting the workers. */
        doc = json_object_from_file(path);
        if (!doc || !json_object_is_type(doc, json_type_object)) {
                log_error("The API description cannot be read from %s", path);
                return reply_error(req, 500, MSG_INTERNAL, "the API description cannot be read");
        }
        return reply_json(req, 200, doc);
}
