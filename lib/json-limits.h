/* SPDX-License-Identifier: MIT */
#pragma once

/* How deep any JSON document sandboxd parses may nest: a client's body in the worker, and the
 * worker's request in a machine's runner. One number for both, or a body the worker accepted could
 * be refused inside the machine (json-c's own default is 32), which answers 502 and costs the
 * machine. Deep enough for any sane request, shallow enough that a hostile body cannot exhaust a
 * parser's stack. */
#define JSON_MAX_DEPTH 64

/* How many values one document may hold, and how many of them may be arrays and objects: json-c
 * spends some 70 bytes on a number and 900 on an object (its hash table), so that 16 MiB of
 * "{},{},..." would take 2 GiB to build. Within these, what json-c builds of a body is at most
 * 16384 * 900 + 49152 * 72 bytes (18 MiB) besides its strings' bytes, which the body's size bounds.
 * Counted by json_syntax_scan() before json-c builds anything. A request's largest legitimate
 * document (1000 files of two fields each, 100 files to return, 32 network entries) holds some
 * 3200 values. */
#define JSON_MAX_VALUES 65536
#define JSON_MAX_CONTAINERS 16384
