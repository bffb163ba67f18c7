/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "ctl/api.h"
#include "ctl/ctl.h"
#include "ctl/http.h"
#include "lib/error.h"
#include "lib/macro.h"

DEFINE_JSON_CLEANUP

/* What a refusal says: the API's {"error": ...}, else the body's first line (an answer from
 * something that is not sandboxd), else nothing. */
static int report_status(const HttpResponse *resp) {
        cleanup_json struct json_object *j = json_tokener_parse(resp->body);
        struct json_object *e;

        if (j && json_object_object_get_ex(j, "error", &e) && json_object_is_type(e, json_type_string))
                (void) ctl_fail("%i %s", resp->status, json_object_get_string(e));
        else if (resp->body_len > 0)
                (void) ctl_fail("%i %.*s", resp->status, (int) strcspn(resp->body, "\r\n"), resp->body);
        else
                (void) ctl_fail("%i (an empty answer)", resp->status);
        return -EBADMSG;
}

int ctl_api(const CtlOptions *o, const char *method, const char *path, const char *body, size_t body_len,
            struct json_object **ret, char *ret_request_id) {
        HttpResponse resp = {};
        Error err = {};
        HttpUrl url;
        int r;

        r = http_url_parse(o->url, &url);
        if (r < 0) {
                (void) ctl_fail("'%s' is not an http:// URL", o->url);
                return r;
        }
        r = http_request(&url, method, path, o->token, "application/json", body, body_len, &resp, &err);
        if (r < 0) {
                (void) ctl_fail("%s", error_message(&err, r));
                return r;
        }
        if (resp.status < 200 || resp.status > 299) {
                r = report_status(&resp);
                http_response_done(&resp);
                return r;
        }
        if (ret_request_id)
                (void) snprintf(ret_request_id, 64, "%s", resp.request_id);
        if (ret) {
                *ret = resp.body_len > 0 ? json_tokener_parse(resp.body) : NULL;
                if (resp.body_len > 0 && !*ret) {
                        http_response_done(&resp);
                        (void) ctl_fail("%s %s: the answer is not JSON", method, path);
                        return -EBADMSG;
                }
        }
        http_response_done(&resp);
        return 0;
}
