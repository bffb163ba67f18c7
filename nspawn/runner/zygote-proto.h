/* SPDX-License-Identifier: MIT */
#pragma once

/* The runner and its zygote, inside one machine. The zygote is a Python interpreter started as
 * `python3 -c BOOTSTRAP` and initialised, that never runs code of its own: for every execution it
 * forks a sandbox (fresh namespaces and filesystems) in which a copy of itself runs the snippet.
 *
 * Over one SOCK_SEQPACKET pair (the zygote's fd ZYGOTE_FD):
 *   runner -> zygote  ZygoteConfig, once, then the compiled system-call filter as one message;
 *   zygote -> runner  ZygoteReply {pid 0}: initialised, ready to fork;
 *   runner -> zygote  ZygoteFork with the code process's stdout (fd alongside), then its stderr, the
 *                     read end of its code pipe, and one end of a SOCK_SEQPACKET pair for the
 *                     sandbox's init, one message each;
 *   zygote -> runner  ZygoteReply {pid of the sandbox's init, in the machine's PID namespace, or a
 *                     negative errno}.
 * Then over that pair, from the init:
 *   init -> runner    an int32_t 0 with the sandbox's mount namespace alongside, once it is made;
 *                     a ZygoteStatus once the code ended. The init exits then, and its PID
 *                     namespace (every process the code started) dies with it; end of file before
 *                     the status: it died itself.
 * On the code's fd 3, from the runner: "LANGUAGE POLICY\n" (ZYGOTE_HEADER_MAX at most; it may come
 * ahead of the request, for node to start while the machine waits), then "LENGTH\n", LENGTH bytes
 * of code, then the bytes of its standard input (bootstrap.py, node-bootstrap.js). */

#include <stdint.h>

#define ZYGOTE_FD 3
/* The zygote's -c command: it runs the bootstrap the zygote defined, which reads the code from fd 3
 * (zygote.c). No name is bound in __main__, and nothing is left in sys. */
#define ZYGOTE_COMMAND "__import__('sys').__dict__.pop('_sandboxd_run')()"
#define ZYGOTE_MAGIC 0x7a796770U /* "zygp": bump on any change of layout */
#define ZYGOTE_HEADER_MAX 64

typedef struct ZygoteConfig {
        uint32_t magic;
        uint32_t uid;             /* the code's UID and GID inside the machine; never 0 */
        uint64_t workspace_bytes; /* size of the fresh /workspace (also $HOME) */
        uint64_t tmp_bytes;       /* size of each fresh /tmp, /var/tmp and /dev/shm */
        /* Modules the zygote imports once, before its first fork, comma-separated; "" for none. */
        char preload[256];
        /* The path of the import policy's allow-list (import-allow.list); "" for none. */
        char import_allow[256];
} ZygoteConfig;

/* The code's end, from its sandbox's init: its status, and what it and every process it waited for
 * used (getrusage(RUSAGE_CHILDREN) of the init, which reaps them all). */
typedef struct ZygoteStatus {
        int32_t status; /* exit status, or 128 + N for death by signal N */
        uint32_t reserved;
        uint64_t cpu_usec;     /* user and system time */
        uint64_t maxrss_bytes; /* the largest resident set of any of them */
} ZygoteStatus;

typedef struct ZygoteFork {
        uint32_t magic;
} ZygoteFork;

typedef struct ZygoteReply {
        int32_t pid;
} ZygoteReply;
