/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/metrics.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

/* What write(f) wrote, in a buffer the caller frees; NULL if the stream failed. */
#define CAPTURE(text, len, call)                                      \
        do {                                                          \
                FILE *_f = open_memstream(&(text), &(len));           \
                if (_f) {                                             \
                        FILE *f = _f;                                 \
                        tap_is_int((call), 0, "%s returns 0", #call); \
                        (void) fclose(_f);                            \
                }                                                     \
        } while (0)

static void test_seconds(void) {
        static const struct {
                int64_t ms;
                const char *expected;
        } cases[] = {
                {0, "0"},
                {5, "0.005"},
                {10, "0.01"},
                {250, "0.25"},
                {999, "0.999"},
                {1000, "1"},
                {1030, "1.03"},
                {2500, "2.5"},
                {60000, "60"},
                {-1500, "-1.5"},
                {-5, "-0.005"},
                {123456789, "123456.789"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[32];

                metrics_ms_to_seconds(cases[i].ms, buf, sizeof(buf));
                tap_is_str(buf, cases[i].expected, "%lld ms is %s s", (long long) cases[i].ms, cases[i].expected);
        }
}

static void test_family(void) {
        char *text = NULL;
        size_t len = 0;

        CAPTURE(text, len, metrics_family(f, "sandboxd_x_total", "counter", "What \\ is counted,\nin two lines."));
        tap_is_str(text, "# HELP sandboxd_x_total What \\\\ is counted,\\nin two lines.\n# TYPE sandboxd_x_total counter\n",
                   "HELP escapes backslashes and line feeds (and leaves quotes alone), then TYPE");
        free(text);
}

static void test_sample(void) {
        char *text = NULL;
        size_t len = 0;

        CAPTURE(text, len, metrics_sample(f, "sandboxd_up", NULL, 0, 1));
        tap_is_str(text, "sandboxd_up 1\n", "a sample without labels");
        free(text);
        text = NULL;

        CAPTURE(text, len,
                metrics_sample(f, "sandboxd_x_total", (const MetricLabel[]){{"route", "/v1/execute"}, {"code", "200"}}, 2, 9007199254740993LL));
        tap_is_str(text, "sandboxd_x_total{route=\"/v1/execute\",code=\"200\"} 9007199254740993\n",
                   "labels in order; an integer value printed exactly, past 2^53");
        free(text);
        text = NULL;

        CAPTURE(text, len, metrics_sample(f, "sandboxd_x_total", (const MetricLabel[]){{"reason", "a\"b\\c\nd"}, {"empty", NULL}}, 2, -3));
        tap_is_str(text, "sandboxd_x_total{reason=\"a\\\"b\\\\c\\nd\",empty=\"\"} -3\n",
                   "a label value has its quote, backslash and line feed escaped; NULL is empty");
        free(text);
}

static void test_histogram(void) {
        static const int64_t bounds[] = {5, 250, 2500};
        static const int64_t cumulative[] = {1, 3, 3};
        char *text = NULL;
        size_t len = 0;

        CAPTURE(text, len,
                metrics_histogram_ms(f, "sandboxd_d_seconds", (const MetricLabel[]){{"language", "node"}}, 1, bounds, cumulative, 3, 4, 60123));
        tap_is_str(text,
                   "sandboxd_d_seconds_bucket{language=\"node\",le=\"0.005\"} 1\n"
                   "sandboxd_d_seconds_bucket{language=\"node\",le=\"0.25\"} 3\n"
                   "sandboxd_d_seconds_bucket{language=\"node\",le=\"2.5\"} 3\n"
                   "sandboxd_d_seconds_bucket{language=\"node\",le=\"+Inf\"} 4\n"
                   "sandboxd_d_seconds_sum{language=\"node\"} 60.123\n"
                   "sandboxd_d_seconds_count{language=\"node\"} 4\n",
                   "a histogram: buckets in seconds, +Inf is the count, the sum in seconds");
        free(text);
        text = NULL;

        CAPTURE(text, len, metrics_histogram_ms(f, "sandboxd_d_seconds", NULL, 0, bounds, cumulative, 0, 0, 0));
        tap_is_str(text, "sandboxd_d_seconds_bucket{le=\"+Inf\"} 0\nsandboxd_d_seconds_sum 0\nsandboxd_d_seconds_count 0\n",
                   "an empty histogram without labels: +Inf, sum and count");
        free(text);
        text = NULL;

        {
                MetricLabel many[METRICS_LABELS_MAX] = {};
                FILE *f = open_memstream(&text, &len);

                tap_ok(f && metrics_histogram_ms(f, "x", many, METRICS_LABELS_MAX, bounds, cumulative, 3, 4, 0) == -EINVAL,
                       "more labels than le leaves room for: -EINVAL");
                if (f)
                        (void) fclose(f);
                free(text);
        }
}

int main(void) {
        test_seconds();
        test_family();
        test_sample();
        test_histogram();
        return tap_done();
}
