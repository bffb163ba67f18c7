/* SPDX-License-Identifier: MIT */
#pragma once

/* How deep any JSON document sandboxd parses may nest: a client's body in the worker, and the
 * worker's request in a machine's runner. One number for both, or a body the worker accepted could
 * be refused inside the machine (json-c's own default is 32), which answers 502 and costs the
 * machine. Deep enough for any sane request, shallow enough that a hostile body cannot exhaust a
 * parser's stack. */
#define JSON_MAX_DEPTH 64
