/* SPDX-License-Identifier: MIT */
#pragma once

/* The language sandboxctl run sends for a file when --language names none: from the file's
 * extension (.py python, .js .mjs .cjs node, .sh .bash bash, any case), else python, the API's own
 * default. Pure; returns a static string. */
const char *language_from_path(const char *path);
