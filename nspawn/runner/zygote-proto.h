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
 *                     an int32_t, the code's status (128 + N for death by signal N), once the code
 *                     ended. The init exits then, and its PID namespace (every process the code
 *                     started) dies with it; end of file before the status: it died itself. */

#include <stdint.h>

#define ZYGOTE_FD 3
/* The zygote's -c command: it runs the bootstrap the zygote defined, which reads the code from fd 3
 * (zygote.c). No name is bound in __main__, and nothing is left in sys. */
#define ZYGOTE_COMMAND "__import__('sys').__dict__.pop('_sandboxd_run')()"
#define ZYGOTE_MAGIC 0x7a79676fU /* "zygo": bump on any change of layout */

typedef struct ZygoteConfig {
        uint32_t magic;
        uint32_t uid;             /* the code's UID and GID inside the machine; never 0 */
        uint64_t workspace_bytes; /* size of the fresh /workspace (also $HOME) */
        uint64_t tmp_bytes;       /* size of each fresh /tmp, /var/tmp and /dev/shm */
} ZygoteConfig;

typedef struct ZygoteFork {
        uint32_t magic;
} ZygoteFork;

typedef struct ZygoteReply {
        int32_t pid;
} ZygoteReply;
