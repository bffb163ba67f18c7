/* SPDX-License-Identifier: MIT */
#pragma once

/* The languages a snippet or a session's run may be in, the default first: one list for the workers'
 * checks, the metrics' labels and the runner's interpreters. */
#define LANGUAGES_N 3
extern const char *const language_names[LANGUAGES_N + 1]; /* NULL-terminated */
