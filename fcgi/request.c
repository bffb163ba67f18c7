/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcgiapp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fcgi/event-stream.h"
#include "fcgi/request.h"
#include "lib/time-util.h"

/* false when the value did not fit (then it is cut, and must not be acted on). */
static bool copy_param(FCGX_Request *fcgx, const char *name, char *dst, size_t size) {
        const char *v = FCGX_GetParam(name, fcgx->envp);

        return (size_t) snprintf(dst, size, "%s", v ? v : "") < size;
}

/* nginx's $request_id is 32 hex digits. Anything else (no nginx in front) gets an id of our own. */
static void request_set_id(Request *req) {
        const char *v = FCGX_GetParam("REQUEST_ID", req->fcgx->envp);
        size_t n = v ? strlen(v) : 0;
        unsigned char rnd[16];

        if (n > 0 && n < sizeof(req->id) && strspn(v, "0123456789abcdef") == n) {
                memcpy(req->id, v, n + 1);
                return;
        }
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                memset(rnd, 0, sizeof(rnd));
        for (size_t i = 0; i < sizeof(rnd); i++)
                (void) snprintf(req->id + 2 * i, 3, "%02x", rnd[i]);
}

static int request_read_body(Request *req, size_t max_body) {
        const char *cl = FCGX_GetParam("CONTENT_LENGTH", req->fcgx->envp);
        unsigned long long want = cl ? strtoull(cl, NULL, 10) : 0;
        size_t got = 0;

        if (want > max_body) {
                req->body_too_large = true;
                return 0;
        }
        req->body = malloc((size_t) want + 1);
        if (!req->body)
                return -ENOMEM;
        while (got < want) {
                int n = FCGX_GetStr(req->body + got, (int) (want - got), req->fcgx->in);

                if (n <= 0)
                        break; /* short body: the client went away; parse what came */
                got += (size_t) n;
        }
        /* What came short is not what the client sent: a file is not written from it. */
        req->body_short = got < want;
        req->body[got] = 0;
        req->body_len = got;
        return 0;
}

int request_read(Request *req, FCGX_Request *fcgx, size_t max_body, size_t max_put_body) {
        char *q;

        *req = (Request){.fcgx = fcgx, .start_usec = now_usec(CLOCK_MONOTONIC), .duration_ms = -1, .cpu_ms = -1, .memory_peak_bytes = -1, .network_rx_bytes = -1, .network_tx_bytes = -1};

        request_set_id(req);
        copy_param(fcgx, "REQUEST_METHOD", req->method, sizeof(req->method));
        /* DOCUMENT_URI: the decoded path without the query string. */
        req->uri_too_long = !copy_param(fcgx, "DOCUMENT_URI", req->path, sizeof(req->path));
        (void) snprintf(req->route, sizeof(req->route), "%s %s", req->method, req->path);
        if (!copy_param(fcgx, "REQUEST_URI", req->raw_path, sizeof(req->raw_path)) ||
            !copy_param(fcgx, "QUERY_STRING", req->query, sizeof(req->query)))
                req->uri_too_long = true;
        q = strchr(req->raw_path, '?');
        if (q)
                *q = 0;
        return request_read_body(req, strcmp(req->method, "PUT") == 0 ? max_put_body : max_body);
}

void request_done(Request *req) {
        event_stream_free(req->event_stream);
        req->event_stream = NULL;
        req->listener = NULL;
        free(req->body);
        free(req->error);
        free(req->network_hosts);
        free(req->network_refused);
        req->body = req->error = req->network_hosts = req->network_refused = NULL;
}
