/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The Prometheus text exposition format (version 0.0.4), written to a stream. Pure: no I/O but
 * on f. Each returns 0, or -EIO when f failed. */

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_LABELS_MAX 8

typedef struct MetricLabel {
        const char *name;
        const char *value; /* escaped as the format has it */
} MetricLabel;

/* A family's "# HELP" and "# TYPE" lines: type "counter", "gauge" or "histogram". */
int metrics_family(FILE *f, const char *name, const char *type, const char *help);

/* One sample: name{labels} value. */
int metrics_sample(FILE *f, const char *name, const MetricLabel *labels, size_t n_labels, int64_t value);

/* A histogram's series for one set of labels (at most METRICS_LABELS_MAX - 1), from durations in
 * milliseconds: name_bucket with le, in seconds, for each of the n ascending bounds_ms with its
 * cumulative count, and for +Inf with count; name_sum in seconds; name_count. */
int metrics_histogram_ms(FILE *f, const char *name, const MetricLabel *labels, size_t n_labels, const int64_t *bounds_ms,
                         const int64_t *cumulative, size_t n, int64_t count, int64_t sum_ms);

/* Milliseconds as seconds, exactly, in decimal: 5 -> "0.005", 2500 -> "2.5", 60000 -> "60",
 * -1500 -> "-1.5". */
void metrics_ms_to_seconds(int64_t ms, char *buf, size_t size);
