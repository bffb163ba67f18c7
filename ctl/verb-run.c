/* SPDX-License-Identifier: MIT */
/* sandboxctl run FILE: POST /v1/execute with the file's content, then the snippet's output on our
 * own streams, byte for byte, and its exit code as ours: a snippet run from a shell as if it were
 * a local program. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ctl/api.h"
#include "ctl/ctl.h"
#include "ctl/language.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/utf8.h"

DEFINE_JSON_CLEANUP

/* The API's own cap on a body (SANDBOXD_MAX_BODY_BYTES, 16 MiB): a larger file could not go. */
#define RUN_FILE_MAX ((size_t) 16 << 20)
/* What run exits with when the snippet did not end by itself (timed out), as timeout(1) does. */
#define RUN_EXIT_TIMEOUT 124

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl run [--language L] [--timeout S] [-v] [--json] FILE\n"
                     "\n"
                     "Runs FILE (or standard input, for -) in a sandbox: POST /v1/execute. Prints the\n"
                     "snippet's stdout and stderr as they are, on stdout and stderr, and exits with its\n"
                     "exit code (124 if it timed out, 1 if the service refused it).\n"
                     "\n"
                     "Options:\n"
                     "  -l, --language L  python, node or bash (default: from the extension, .py .js .sh,\n"
                     "                    else python)\n"
                     "  -t, --timeout S   seconds the snippet may run (1-60; default: the service's, 20)\n"
                     "  -v, --verbose     then say the request's id (for sandboxctl logs), sandbox and time\n"
                     "      --json        print the service's answer as JSON instead, with request_id\n"
                     "  -h, --help        this text\n",
                     f);
}

static int read_code(const char *path, char **ret, size_t *ret_len) {
        cleanup_close int fd = -1;
        int r;

        if (strcmp(path, "-") != 0) {
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return ctl_fail("cannot open '%s': %s", path, strerror(errno));
        }
        r = fd_read_all(fd >= 0 ? fd : STDIN_FILENO, RUN_FILE_MAX, -1, ret, ret_len);
        if (r == -EFBIG)
                return ctl_fail("'%s' is larger than the service takes (%zu MiB)", path, RUN_FILE_MAX >> 20);
        if (r < 0)
                return ctl_fail("cannot read '%s': %s", path, strerror(-r));
        if (!utf8_valid((const uint8_t *) *ret, *ret_len))
                return ctl_fail("'%s' is not UTF-8 text: the API takes code as a JSON string", path);
        return EXIT_SUCCESS;
}

static char *request_body(const char *code, size_t len, const char *language, int timeout_s) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o ||
            json_object_object_add(o, "code", json_object_new_string_len(code, (int) len)) < 0 ||
            json_object_object_add(o, "language", json_object_new_string(language)) < 0 ||
            (timeout_s > 0 && json_object_object_add(o, "timeout_s", json_object_new_int(timeout_s)) < 0))
                return NULL;
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void write_stream(struct json_object *answer, const char *field, FILE *f) {
        struct json_object *v;

        if (json_object_object_get_ex(answer, field, &v) && json_object_is_type(v, json_type_string))
                (void) fwrite(json_object_get_string(v), 1, (size_t) json_object_get_string_len(v), f);
        (void) fflush(f);
}

static bool flag(struct json_object *answer, const char *field) {
        struct json_object *v;

        return json_object_object_get_ex(answer, field, &v) && json_object_get_boolean(v);
}

/* The snippet's streams on ours and its exit code; what the service says besides, on stderr. */
static int show_result(struct json_object *answer, const char *request_id, bool verbose) {
        struct json_object *v;
        int code;

        if (!json_object_object_get_ex(answer, "exit_code", &v) || !json_object_is_type(v, json_type_int))
                return ctl_fail("the answer has no exit_code: %s", json_object_to_json_string(answer));
        code = json_object_get_int(v);

        write_stream(answer, "stdout", stdout);
        if (code == -1) {
                /* Not the snippet's stderr: the service's word that it was stopped. */
                (void) ctl_fail("%s", json_object_get_string(json_object_object_get(answer, "stderr")));
                code = RUN_EXIT_TIMEOUT;
        } else
                write_stream(answer, "stderr", stderr);
        if (flag(answer, "stdout_truncated"))
                (void) ctl_fail("stdout was cut at the service's output cap");
        if (flag(answer, "stderr_truncated"))
                (void) ctl_fail("stderr was cut at the service's output cap");
        if (verbose) {
                struct json_object *sid = NULL, *ms = NULL;

                json_object_object_get_ex(answer, "sandbox_id", &sid);
                json_object_object_get_ex(answer, "duration_ms", &ms);
                (void) ctl_fail("request %s: sandbox %s, %s ms, exit %s", request_id, json_object_get_string(sid),
                                json_object_get_string(ms), json_object_get_string(json_object_object_get(answer, "exit_code")));
        }
        return code < 0 || code > 255 ? EXIT_FAILURE : code;
}

static int parse_timeout(const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < 1 || v > 3600)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int verb_run(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"language", required_argument, NULL, 'l'},
                {"timeout", required_argument, NULL, 't'},
                {"verbose", no_argument, NULL, 'v'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        cleanup_json struct json_object *answer = NULL;
        cleanup_free char *code = NULL, *body = NULL;
        const char *language = NULL;
        bool json = o->json, verbose = false;
        char request_id[64] = "";
        int timeout_s = 0, c, r;
        size_t len = 0;

        while ((c = getopt_long(argc, argv, "l:t:vh", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        language = optarg;
                        break;
                case 't':
                        if (parse_timeout(optarg, &timeout_s) < 0)
                                return ctl_usage("run", "--timeout takes a number of seconds, not '%s'", optarg);
                        break;
                case 'v':
                        verbose = true;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage("run", "bad option");
                }
        if (argc - optind != 1)
                return ctl_usage("run", "one FILE (or - for standard input)");

        r = read_code(argv[optind], &code, &len);
        if (r != EXIT_SUCCESS)
                return r;
        body = request_body(code, len, language ? language : language_from_path(argv[optind]), timeout_s);
        if (!body)
                return ctl_fail("out of memory");
        /* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): body is cleanup_free, unseen by clang-analyzer 14 */
        r = ctl_api(o, "POST", "/v1/execute", body, strlen(body), &answer, request_id);
        if (r < 0)
                return EXIT_FAILURE;
        if (!json_object_is_type(answer, json_type_object))
                return ctl_fail("the answer is not a JSON object");
        if (json) {
                (void) json_object_object_add(answer, "request_id", json_object_new_string(request_id));
                puts(json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                r = json_object_get_int(json_object_object_get(answer, "exit_code"));
                if (r == -1)
                        return RUN_EXIT_TIMEOUT;
                return r < 0 || r > 255 ? EXIT_FAILURE : r;
        }
        return show_result(answer, request_id, verbose);
}
