/* SPDX-License-Identifier: MIT */
/* The Prometheus text format: families, samples with escaped labels, histograms. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fcgi/metrics.h"

/* Text with '\\' and line feeds escaped, and '"' too in a label value. */
static int put_escaped(FILE *f, const char *s, int quote) {
        for (; *s; s++) {
                int r;

                if (*s == '\\')
                        r = fputs("\\\\", f);
                else if (*s == '\n')
                        r = fputs("\\n", f);
                else if (*s == '"' && quote)
                        r = fputs("\\\"", f);
                else
                        r = fputc(*s, f);
                if (r == EOF)
                        return -EIO;
        }
        return 0;
}

int metrics_family(FILE *f, const char *name, const char *type, const char *help) {
        if (fprintf(f, "# HELP %s ", name) < 0 || put_escaped(f, help, 0) < 0 || fprintf(f, "\n# TYPE %s %s\n", name, type) < 0)
                return -EIO;
        return 0;
}

static int put_labels(FILE *f, const MetricLabel *labels, size_t n_labels) {
        if (n_labels == 0)
                return 0;
        for (size_t i = 0; i < n_labels; i++)
                if (fprintf(f, "%s%s=\"", i ? "," : "{", labels[i].name) < 0 || put_escaped(f, labels[i].value ? labels[i].value : "", 1) < 0 ||
                    fputc('"', f) == EOF)
                        return -EIO;
        return fputc('}', f) == EOF ? -EIO : 0;
}

static int put_line(FILE *f, const char *name, const char *suffix, const MetricLabel *labels, size_t n_labels, const char *value) {
        if (fprintf(f, "%s%s", name, suffix) < 0 || put_labels(f, labels, n_labels) < 0 || fprintf(f, " %s\n", value) < 0)
                return -EIO;
        return 0;
}

int metrics_sample(FILE *f, const char *name, const MetricLabel *labels, size_t n_labels, int64_t value) {
        char v[32];

        (void) snprintf(v, sizeof(v), "%" PRId64, value);
        return put_line(f, name, "", labels, n_labels, v);
}

void metrics_ms_to_seconds(int64_t ms, char *buf, size_t size) {
        uint64_t a = ms < 0 ? -(uint64_t) ms : (uint64_t) ms;
        char frac[8];
        size_t len;

        (void) snprintf(frac, sizeof(frac), "%03" PRIu64, a % 1000);
        len = strlen(frac);
        while (len > 0 && frac[len - 1] == '0')
                frac[--len] = 0;
        (void) snprintf(buf, size, "%s%" PRIu64 "%s%s", ms < 0 ? "-" : "", a / 1000, len ? "." : "", frac);
}

int metrics_histogram_ms(FILE *f, const char *name, const MetricLabel *labels, size_t n_labels, const int64_t *bounds_ms,
                         const int64_t *cumulative, size_t n, int64_t count, int64_t sum_ms) {
        MetricLabel with_le[METRICS_LABELS_MAX];
        char le[32], v[32];

        if (n_labels >= METRICS_LABELS_MAX)
                return -EINVAL;
        if (n_labels > 0)
                memcpy(with_le, labels, n_labels * sizeof(*labels));
        with_le[n_labels] = (MetricLabel){.name = "le", .value = le};
        for (size_t i = 0; i < n; i++) {
                metrics_ms_to_seconds(bounds_ms[i], le, sizeof(le));
                (void) snprintf(v, sizeof(v), "%" PRId64, cumulative[i]);
                if (put_line(f, name, "_bucket", with_le, n_labels + 1, v) < 0)
                        return -EIO;
        }
        (void) snprintf(le, sizeof(le), "+Inf");
        (void) snprintf(v, sizeof(v), "%" PRId64, count);
        if (put_line(f, name, "_bucket", with_le, n_labels + 1, v) < 0)
                return -EIO;
        metrics_ms_to_seconds(sum_ms, v, sizeof(v));
        if (put_line(f, name, "_sum", labels, n_labels, v) < 0)
                return -EIO;
        (void) snprintf(v, sizeof(v), "%" PRId64, count);
        return put_line(f, name, "_count", labels, n_labels, v);
}
