/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's machine's server (--session): runs, execs and file ops in one long-lived sandbox. */

typedef struct Error Error;
typedef struct Runner Runner;

/* Serves the session's requests on the listening socket until the machine is stopped: returns
 * only when it cannot go on, with a negative errno and reterr's words. */
int runner_session_serve(Runner *r, Error *reterr);
