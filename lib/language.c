/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "lib/language.h"

const char *const language_names[LANGUAGES_N + 1] = {"python", "node", "bash", NULL};
