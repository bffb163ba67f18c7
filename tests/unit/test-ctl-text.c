/* SPDX-License-Identifier: MIT */
/* sandboxctl's pure pieces of text: a file's language, a journal field's kind, a setting's line,
 * sizes and spans. */
#include <stdbool.h>
#include <string.h>

#include "ctl/format.h"
#include "ctl/language.h"
#include "ctl/usage.h"
#include "lib/env-file.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "tests/unit/tap.h"

static void test_language(void) {
        static const struct {
                const char *path, *language;
        } cases[] = {
                {"hello.py", "python"},
                {"hello.js", "node"},
                {"x.mjs", "node"},
                {"x.cjs", "node"},
                {"build.sh", "bash"},
                {"build.bash", "bash"},
                {"SCRIPT.SH", "bash"},
                {"dir.js/script", "python"},
                {"/tmp/a.b/c.js", "node"},
                {"notes.txt", "python"},
                {"Makefile", "python"},
                {".sh", "python"},
                {"dir/.js", "python"},
                {"-", "python"},
                {"", "python"},
                {"trailing.", "python"},
                {"x.py.sh", "bash"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_is_str(language_from_path(cases[i].path), cases[i].language, "language of '%s'", cases[i].path);
}

static void test_usage_field(void) {
        static const struct {
                const char *name;
                bool usage;
        } cases[] = {
                {"DURATION_MS", true},
                {"CPU_USEC", true},
                {"CPU_MS", true},
                {"MEMORY_PEAK_BYTES", true},
                {"QUEUE_WAIT_MS", true},
                {"IO_READ_OPS", true},
                {"TASKS_PEAK", true},
                {"WALL_NSEC", true},
                {"EXIT_CODE", false},
                {"STATUS", false},
                {"REQUEST_ID", false},
                {"MACHINE_ID", false},
                {"MESSAGE", false},
                {"_MS", false},
                {"CPU_", false},
                {"_SOURCE_REALTIME_TIMESTAMP_USEC", false},
                {"__MONOTONIC_MS", false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(usage_field(cases[i].name) == cases[i].usage, "%s is %sa usage field", cases[i].name, cases[i].usage ? "" : "not ");
}

static void test_setting_line(void) {
        static const struct {
                const char *line, *value; /* value NULL: the line does not set it */
        } cases[] = {
                {"SANDBOXD_DB=/srv/db.sqlite\n", "/srv/db.sqlite"},
                {"  SANDBOXD_DB=/srv/x  \n", "/srv/x"},
                {"SANDBOXD_DB=\"/srv/quoted\"\n", "/srv/quoted"},
                {"SANDBOXD_DB='/srv/single'", "/srv/single"},
                {"SANDBOXD_DB=\n", ""},
                {"# SANDBOXD_DB=/commented\n", NULL},
                {"SANDBOXD_DB_X=/other\n", NULL},
                {"XSANDBOXD_DB=/other\n", NULL},
                {"SANDBOXD_DB /no-equals\n", NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                EnvVar *vars = NULL;
                size_t n = 0;
                const char *v;

                tap_ok(env_file_parse(cases[i].line, &vars, &n) == 0, "line %zu parses", i);
                v = env_file_get(vars, n, "SANDBOXD_DB");
                if (cases[i].value)
                        tap_ok(v && strcmp(v, cases[i].value) == 0, "line %zu sets '%s' (got '%s')", i, cases[i].value, v ? v : "(nothing)");
                else
                        tap_ok(!v, "line %zu sets nothing", i);
                env_file_free(vars, n);
        }
}

static void test_format(void) {
        static const struct {
                unsigned long long bytes;
                const char *text;
        } sizes[] = {{0, "0B"}, {1023, "1023B"}, {1024, "1.0K"}, {1536, "1.5K"}, {47u << 20, "47.0M"}, {3ULL << 30, "3.0G"}};
        static const struct {
                unsigned long long usec;
                const char *text;
        } spans[] = {{0, "0ms"}, {850000, "850ms"}, {42000000, "42s"}, {420000000, "7m"}, {3 * 3600000000ULL, "3h"}, {2 * 86400000000ULL, "2d"}};
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                format_bytes(sizes[i].bytes, buf, sizeof(buf));
                tap_is_str(buf, sizes[i].text, "%llu bytes", sizes[i].bytes);
        }
        for (size_t i = 0; i < ELEMENTSOF(spans); i++) {
                format_span(spans[i].usec, buf, sizeof(buf));
                tap_is_str(buf, spans[i].text, "%llu µs", spans[i].usec);
        }
        format_time_iso(1764541444123456ULL, buf, sizeof(buf));
        tap_is_str(buf, "2025-11-30T22:24:04.123456Z", "ISO time in UTC with microseconds");
}

int main(void) {
        test_language();
        test_usage_field();
        test_setting_line();
        test_format();
        return tap_done();
}
