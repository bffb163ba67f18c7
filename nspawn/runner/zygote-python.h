/* SPDX-License-Identifier: MIT */
#pragma once

/* The zygote's interpreter: the image's own libpython, loaded at run time rather than linked, so that
 * one build of the zygote serves a runtime image of any Python 3 from 3.8 on (Debian 12's 3.11,
 * Debian 13's 3.13), whichever Python the host that built it has. Only functions whose signature
 * every such version shares are called; nothing reads a structure of the interpreter's. */

#include <stddef.h>

/* Loads the libpython of /usr/bin/python3's version. Says why on stderr when it cannot. */
int python_load(void);

/* Initialises the interpreter as python3's own main() does, with the same arguments; exits as
 * python3 would when that fails. */
void python_initialize(int argc, char **argv);

/* Defines what every sandbox runs (bootstrap.py), imports the modules of PRELOAD (comma-separated)
 * and freezes the collector's generations: zygote-setup.py. ALLOW_PATH is the import policy's
 * allow-list. Returns -1 when the bootstrap could not be defined (said on stderr). */
int python_setup(const char *allow_path, const char *preload);

/* Around every fork: the interpreter's locks, and its state in the child. */
void python_before_fork(void);
void python_after_fork_child(void);
void python_after_fork_parent(void);

/* What python3's main() does after initialising: runs the -c command; its exit status. */
int python_run_main(void);
