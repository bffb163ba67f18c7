/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/env-file.h"
#include "tests/unit/tap.h"

int main(void) {
        static const char text[] = "# sandboxd's settings\n"
                                   "SANDBOXD_DB=/srv/a.db\n"
                                   "  SANDBOXD_WORKERS = 8  \n"
                                   ";SANDBOXD_USER=commented\n"
                                   "#SANDBOXD_API_KEYS=on\n"
                                   "\n"
                                   "SANDBOXD_PRELOAD=\"numpy, pandas\"\n"
                                   "SANDBOXD_SLICE='x.slice'\r\n"
                                   "SANDBOXD_EMPTY=\n"
                                   "not an assignment\n"
                                   "1BAD=x\n"
                                   "BAD-NAME=x\n"
                                   "=nameless\n"
                                   "SANDBOXD_HALF=\"open\n"
                                   "SANDBOXD_DB=/srv/b.db\n"
                                   "SANDBOXD_LAST=no newline";
        EnvVar *vars = NULL;
        size_t n = 0;

        tap_is_int(env_file_parse(text, &vars, &n), 0, "a settings file parses");
        tap_is_int((long long) n, 8, "8 assignments in it (comments, blanks and bad lines skipped)");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_DB"), "/srv/b.db", "a name set twice: the last counts");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_WORKERS"), "8", "blanks around the name and the value are dropped");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_USER"), NULL, "a ';' comment is no assignment");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_API_KEYS"), NULL, "nor a '#' one");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_PRELOAD"), "numpy, pandas", "double quotes are removed");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_SLICE"), "x.slice", "single quotes too, and a CR at the end");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_EMPTY"), "", "an empty value is a value");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_HALF"), "\"open", "a quote that is not closed is kept");
        tap_is_str(env_file_get(vars, n, "SANDBOXD_LAST"), "no newline", "the last line needs no newline");
        tap_is_str(env_file_get(vars, n, "1BAD"), NULL, "a name starting with a digit is skipped");
        tap_is_str(env_file_get(vars, n, "BAD-NAME"), NULL, "a name with '-' is skipped");
        vars = env_file_free(vars, n);

        tap_ok(env_file_parse("", &vars, &n) == 0 && n == 0, "an empty file: nothing");
        vars = env_file_free(vars, n);
        tap_ok(env_file_parse(NULL, &vars, &n) == 0 && n == 0, "no file (NULL): nothing");
        vars = env_file_free(vars, n);
        tap_ok(env_file_free(NULL, 0) == NULL, "free(NULL) is a no-op");
        return tap_done();
}
