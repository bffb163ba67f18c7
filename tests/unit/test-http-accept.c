/* SPDX-License-Identifier: MIT */
#include "fcgi/http-accept.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

#define SSE "text/event-stream"
#define JSON "application/json"

static void test_weight(void) {
        static const struct {
                const char *accept;
                const char *type;
                HttpAcceptMatch match;
                int weight;
        } cases[] = {
                {NULL, JSON, HTTP_ACCEPT_ANY, -1},
                {"", JSON, HTTP_ACCEPT_ANY, -1},
                {JSON, JSON, HTTP_ACCEPT_ANY, 1000},
                {"Application/JSON", JSON, HTTP_ACCEPT_ANY, 1000},
                {JSON ", " SSE, SSE, HTTP_ACCEPT_ANY, 1000},
                {" \t" JSON " ,\t" SSE " ", SSE, HTTP_ACCEPT_ANY, 1000},
                {SSE ";q=0.5, " JSON, SSE, HTTP_ACCEPT_ANY, 500},
                {SSE " ; Q=0.25", SSE, HTTP_ACCEPT_ANY, 250},
                {SSE ";q=1.000", SSE, HTTP_ACCEPT_ANY, 1000},
                {SSE ";q=0.001", SSE, HTTP_ACCEPT_ANY, 1},
                /* q=0: "not acceptable", said of it by name. */
                {SSE ";q=0", SSE, HTTP_ACCEPT_ANY, 0},
                {SSE "; q=0.0", SSE, HTTP_ACCEPT_ANY, 0},
                {JSON ";q=0, " SSE, JSON, HTTP_ACCEPT_ANY, 0},
                {"*/*;q=0", JSON, HTTP_ACCEPT_ANY, 0},
                /* Wildcards, and the most specific range wins whatever the order. */
                {"*/*", JSON, HTTP_ACCEPT_ANY, 1000},
                {"*/*", JSON, HTTP_ACCEPT_EXACT, -1},
                {"text/*", SSE, HTTP_ACCEPT_ANY, 1000},
                {"text/*", SSE, HTTP_ACCEPT_EXACT, -1},
                {"text/*", JSON, HTTP_ACCEPT_ANY, -1},
                {"*/*;q=0.1, text/*;q=0.5, " SSE ";q=0.9", SSE, HTTP_ACCEPT_ANY, 900},
                {SSE ";q=0.9, text/*;q=0.5, */*;q=0.1", SSE, HTTP_ACCEPT_ANY, 900},
                {SSE ";q=0, */*", SSE, HTTP_ACCEPT_ANY, 0},
                {"*/*, " JSON ";q=0", JSON, HTTP_ACCEPT_ANY, 0},
                {"text/*;q=0, */*", SSE, HTTP_ACCEPT_ANY, 0},
                {"*/json", JSON, HTTP_ACCEPT_ANY, -1},
                /* Names that only contain the type are not it. */
                {"application/jsonx", JSON, HTTP_ACCEPT_ANY, -1},
                {"application/x-" JSON, JSON, HTTP_ACCEPT_ANY, -1},
                {SSE "s", SSE, HTTP_ACCEPT_ANY, -1},
                {"x" SSE, SSE, HTTP_ACCEPT_ANY, -1},
                /* Other parameters are read past, quoted strings whole. */
                {SSE ";charset=utf-8", SSE, HTTP_ACCEPT_ANY, 1000},
                {SSE "; charset=\"q=0\"", SSE, HTTP_ACCEPT_ANY, 1000},
                {SSE "; x=\"a, b; q=0\" ; q=0.3", SSE, HTTP_ACCEPT_ANY, 300},
                {SSE ";x=\"a\\\"b\";q=0.2", SSE, HTTP_ACCEPT_ANY, 200},
                {SSE ";level;q=0.4", SSE, HTTP_ACCEPT_ANY, 400},
                /* What cannot be read matches nothing; the next range still counts. */
                {SSE ";q=2", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";q=1.5", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";q=0.0001", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";q=abc", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";q=", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";q=-1, */*", SSE, HTTP_ACCEPT_ANY, 1000},
                {"text", SSE, HTTP_ACCEPT_ANY, -1},
                {"/", SSE, HTTP_ACCEPT_ANY, -1},
                {"text/", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE " junk", SSE, HTTP_ACCEPT_ANY, -1},
                {",,, " SSE ";q=0.7 ,,", SSE, HTTP_ACCEPT_ANY, 700},
                {";;;", SSE, HTTP_ACCEPT_ANY, -1},
                {"\"", SSE, HTTP_ACCEPT_ANY, -1},
                {SSE ";x=\"unterminated", SSE, HTTP_ACCEPT_ANY, 1000},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_int(http_accept_weight(cases[i].accept, cases[i].type, cases[i].match), cases[i].weight, "Accept: %s, %s%s",
                           cases[i].accept ? cases[i].accept : "(none)", cases[i].type, cases[i].match == HTTP_ACCEPT_EXACT ? " by name" : "");
}

static void test_accepts(void) {
        static const struct {
                const char *accept;
                const char *type;
                bool accepts;
        } cases[] = {
                {NULL, JSON, true},
                {"", JSON, true},
                {"  ", JSON, true},
                {JSON, JSON, true},
                {SSE, JSON, false},
                {JSON ";q=0, " SSE, JSON, false},
                {JSON ";q=0, " SSE, SSE, true},
                {"*/*", SSE, true},
                {"*/*;q=0", SSE, false},
                {"text/*", SSE, true},
                {"text/html", JSON, false},
                /* A header that says something, none of it readable: nothing is taken. */
                {"garbage", JSON, false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(http_accepts(cases[i].accept, cases[i].type) == cases[i].accepts, "Accept: %s %s %s", cases[i].accept ? cases[i].accept : "(none)",
                       cases[i].accepts ? "takes" : "refuses", cases[i].type);
}

int main(void) {
        test_weight();
        test_accepts();
        return tap_done();
}
