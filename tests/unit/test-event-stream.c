/* SPDX-License-Identifier: MIT */
#include <fcgiapp.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/event-stream.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

/* Whether a request with this Accept header (NULL: none) asks for a stream. */
static bool wanted(const char *accept) {
        char header[256];
        char *envp[] = {header, NULL};
        FCGX_Request fcgx = {.envp = envp};
        Request req = {.fcgx = &fcgx};

        (void) snprintf(header, sizeof(header), "HTTP_ACCEPT=%s", accept ? accept : "");
        if (!accept)
                envp[0] = NULL;
        return event_stream_wanted(&req);
}

static void test_wanted(void) {
        static const struct {
                const char *accept;
                bool want;
        } cases[] = {
                {"text/event-stream", true},
                {"TEXT/Event-Stream", true},
                {"application/json, text/event-stream", true},
                {"text/event-stream;q=0.5, application/json", true},
                {"text/event-stream ; charset=utf-8", true},
                {NULL, false},
                {"", false},
                {"application/json", false},
                {"*/*", false},
                {"text/*", false},
                {"text/event-streams", false},
                {"text/event-stream;q=0", false},
                {"text/event-stream; q=0.0", false},
                {"application/x-text/event-stream", false},
                /* A parameter's quoted value is not the weight; a weight of another range is not its. */
                {"text/event-stream; charset=\"q=0\"", true},
                {"text/event-stream;q=0.5;x=\"a,b\"", true},
                {"text/event-stream;q=0", false},
                {"text/event-stream;q=0, */*", false},
                {"application/json;q=0.5, text/event-stream;q=0", false},
                {"text/event-stream;q=junk", false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(wanted(cases[i].accept) == cases[i].want, "Accept: %s -> %s", cases[i].accept ? cases[i].accept : "(none)",
                       cases[i].want ? "a stream" : "no stream");
        {
                char header[] = "HTTP_ACCEPT=text/event-stream";
                char *envp[] = {header, NULL};
                FCGX_Request fcgx = {.envp = envp};
                ReplyCapture capture = {};
                Request req = {.fcgx = &fcgx, .capture = &capture};

                tap_ok(!event_stream_wanted(&req), "a request made within the worker (its answer captured) never streams");
        }
}

static void test_chunk_json(void) {
        static const struct {
                const char *data;
                size_t len;
                const char *json;
        } cases[] = {
                {"hello\n", 6, "{\"data\":\"hello\\n\",\"base64\":false}"},
                {"caf\xc3\xa9 \"q\" / \\", 13, "{\"data\":\"café \\\"q\\\" / \\\\\",\"base64\":false}"},
                {"", 0, "{\"data\":\"\",\"base64\":false}"},
                {"bad \xff\n", 6, "{\"data\":\"YmFkIP8K\",\"base64\":true}"},
                {"cut \xc3", 5, "{\"data\":\"Y3V0IMM=\",\"base64\":true}"},
                {"nul\0x", 5, "{\"data\":\"bnVsAHg=\",\"base64\":true}"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *json = event_stream_chunk_json((const uint8_t *) cases[i].data, cases[i].len);

                tap_is_str(json, cases[i].json, "chunk %zu as an event's data", i);
                tap_ok(json && !strchr(json, '\n'), "chunk %zu: one line, as an SSE data field needs", i);
                free(json);
        }
}

int main(void) {
        test_wanted();
        test_chunk_json();
        return tap_done();
}
