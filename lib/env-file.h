/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* One KEY=VALUE of a settings file as systemd's EnvironmentFile= reads it (sandboxd.conf). */
typedef struct EnvVar {
        char *name;
        char *value;
} EnvVar;

/* The assignments of text, in order (a name set twice: the last one counts, env_file_get()): lines
 * "KEY=VALUE", blanks around both ignored, a value in matching single or double quotes taken
 * without them; empty lines and those starting with '#' or ';' are comments; a line without '=' or
 * with a name that is not [A-Za-z_][A-Za-z0-9_]* is skipped. *ret (the caller's: env_file_free())
 * gets *ret_n. 0 or -ENOMEM. Pure. */
int env_file_parse(const char *text, EnvVar **ret, size_t *ret_n);

/* The value of name in vars (the last assignment), or NULL. */
const char *env_file_get(const EnvVar *vars, size_t n, const char *name);

EnvVar *env_file_free(EnvVar *vars, size_t n);

/* The environment's value of name, or def when it is unset or empty (as systemd's Environment=NAME=
 * unsets in effect). */
const char *env_get_or(const char *name, const char *def);
