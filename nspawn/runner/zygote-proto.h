/* SPDX-License-Identifier: MIT */
#pragma once

/* The runner and its zygote, inside one machine. The zygote is a Python interpreter started as
 * `python3 -c BOOTSTRAP` and initialised, that never runs code of its own: for every execution it
 * forks a sandbox (fresh namespaces and filesystems) in which a copy of itself runs the snippet.
 *
 * Over one SOCK_SEQPACKET pair (the zygote's fd ZYGOTE_FD):
 *   runner -> zygote  ZygoteConfig, once, then the compiled system-call filter as one message;
 *   zygote -> runner  ZygoteReply {pid 0}: initialised, ready to fork;
 *   runner -> zygote  ZygoteFork {ZYGOTE_EXECUTION} with the code process's stdout (fd alongside),
 *                     then its stderr, the read end of its code pipe, and one end of a
 *                     SOCK_SEQPACKET pair for the sandbox's init, one message each;
 *                     or ZygoteFork {ZYGOTE_SESSION} with one end of a SOCK_SEQPACKET pair for a
 *                     session sandbox's init, alone (below); then, either way, the sandbox's
 *                     cgroup.procs files, if it has cgroups: the init joins them (writes "0")
 *                     before anything else, so that every process of the sandbox is counted there;
 *   zygote -> runner  ZygoteReply {pid of the sandbox's init, in the machine's PID namespace, or a
 *                     negative errno}.
 * Then over that pair, from the init:
 *   init -> runner    an int32_t 0 with the sandbox's mount namespace alongside, once it is made,
 *                     then an int32_t 1 with its network namespace alongside;
 *                     a ZygoteStatus once the code ended. The init exits then, and its PID
 *                     namespace (every process the code started) dies with it; end of file before
 *                     the status: it died itself.
 * On the code's fd 3, from the runner: "LANGUAGE POLICY\n", or "LANGUAGE POLICY egress\n" for
 * an execution whose environment names the egress proxy (ZYGOTE_HEADER_MAX at most; without egress
 * it may come ahead of the request, for node to start while the machine waits), then "LENGTH\n", LENGTH bytes
 * of code, then the bytes of its standard input (bootstrap.py, node-bootstrap.js).
 *
 * A session sandbox (the runner's --session) has the same namespaces and confinement, but the
 * machine's /workspace (the session's disk) instead of a fresh one, and its init lives on: it starts
 * the session's processes (interpreters, exec commands) on the runner's request and reports each
 * one's end. Over the init's pair:
 *   init -> runner    an int32_t 0 with the sandbox's mount namespace alongside, once it is made,
 *                     then an int32_t 1 with its network namespace alongside;
 *   runner -> init    SessionStart with the process's stdout alongside, then its stderr, its fd 3
 *                     (the read end of its input pipe) and its fd 4 (the write end of its done
 *                     pipe), one message each, all four with the same id;
 *   init -> runner    SessionEvent {SESSION_STARTED}: its PID in the sandbox's PID namespace, or a
 *                     negative errno;
 *                     SessionEvent {SESSION_ENDED}, whenever a process it started ends, in any
 *                     order with the runner's requests. End of file: the init died, and the whole
 *                     sandbox with it (the runner kills the init to end a session sandbox).
 * Its processes get on fd 3: "session-python none\n", "session-node none\n" or "session-bash none\n",
 * then one "LENGTH\n" and LENGTH bytes of code for every run, and they write its status on fd 4 as
 * one line of decimal digits once the code ended; or "exec none\n", "LENGTH\n" and a command for
 * `/bin/sh -c` (bootstrap.py). Their standard input is /dev/null. */

#include <stdint.h>

#define ZYGOTE_FD 3
/* The zygote's -c command: it runs the bootstrap the zygote defined, which reads the code from fd 3
 * (zygote.c). No name is bound in __main__, and nothing is left in sys. */
#define ZYGOTE_COMMAND "__import__('sys').__dict__.pop('_sandboxd_run')()"
#define ZYGOTE_MAGIC 0x7a796772U /* "zygr": bump on any change of layout */
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

enum {
        ZYGOTE_EXECUTION = 0, /* one execution's sandbox: four descriptors */
        ZYGOTE_SESSION = 1,   /* a session sandbox: its init's socket alone */
};

typedef struct ZygoteFork {
        uint32_t magic;
        uint32_t kind;    /* in the first message of a request */
        uint32_t cgroups; /* in the first message: how many cgroup.procs descriptors follow the
                           * request's own, one a message, for the init to join (cgroup.h) */
        uint32_t reserved;
} ZygoteFork;

typedef struct ZygoteReply {
        int32_t pid;
} ZygoteReply;

typedef struct SessionStart {
        uint32_t magic; /* ZYGOTE_MAGIC */
        uint32_t id;    /* the runner's name for the process, in the events about it */
} SessionStart;

enum {
        SESSION_STARTED = 1,
        SESSION_ENDED = 2,
};

typedef struct SessionEvent {
        uint32_t what; /* SESSION_STARTED or SESSION_ENDED */
        uint32_t id;
        int32_t pid;     /* STARTED: in the sandbox's PID namespace, or a negative errno */
        int32_t status;  /* ENDED: exit status, or 128 + N for death by signal N */
        uint32_t signal; /* ENDED: N when it died of signal N, else 0 */
        uint32_t reserved;
        uint64_t cpu_usec;     /* ENDED: user and system time of it and of what it waited for */
        uint64_t maxrss_bytes; /* ENDED: the largest resident set among them */
} SessionEvent;
