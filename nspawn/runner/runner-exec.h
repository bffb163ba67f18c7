/* SPDX-License-Identifier: MIT */
#pragma once

/* A pool machine's server: executions, one at a time, each in a sandbox of its own. */

#include <stdint.h>

typedef struct Error Error;
typedef struct Runner Runner;

/* Serves `executions` requests on the listening socket, each in a fresh sandbox of r's zygotes (a
 * second zygote importing preload, "" for none, started once an execution wants it), the next
 * sandbox made while the worker answers its client. 0 once they are served (the machine retires),
 * or a negative errno with reterr's words. */
int runner_exec_serve(Runner *r, const char *preload, uint64_t executions, Error *reterr);
