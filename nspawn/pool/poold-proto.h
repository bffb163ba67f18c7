/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* What the workers and the pool manager say to each other on POOLD_SOCKET: one line each way at a
 * time, words separated by one space, "\n" at the end.
 *
 *   worker                               pool manager
 *   claim LANGUAGE                   ->  (once a machine is the worker's, in arrival order)
 *                                    <-  machine ID SOCKET EXECUTIONS | full | failing REASON
 *   release RETIRE PREPARED          ->  (RETIRE "none": put back; PREPARED the next language)
 *   turn SESSION MOST                ->  (once no earlier operation of the session is left)
 *                                    <-  turn | busy (MOST operations wait already)
 *   done                             ->  (the turn is over)
 *   sweep                            ->  (a worker died: sweep what no row owns soon)
 *   sessions                         ->  (a key was revoked, a session deleted: look at them now)
 *   watch                            ->  (the cluster's member, sandboxd-member: its counts)
 *                                    <-  pool READY CLAIMED STARTING WAITING MAX SESSIONS, now and
 *                                        after every change (a line per turn of the loop at most);
 *                                        SESSIONS moves on whenever a session may have changed
 *
 * The connection is the claim, or the turn: when it closes without "release" the machine is
 * retired, its state in doubt; without "done" the turn passes on. A worker that stops waiting
 * (its deadline, its client gone) closes it, and leaves the queue with it. */

#define POOLD_SOCKET "/run/sandboxd/poold.sock"
#define POOLD_LINE_MAX 512
#define POOLD_WORD_MAX 64

typedef enum PooldOp {
        POOLD_CLAIM,
        POOLD_RELEASE,
        POOLD_TURN,
        POOLD_DONE,
        POOLD_SWEEP,
        POOLD_SESSIONS,
        POOLD_WATCH,
        _POOLD_OP_MAX,
} PooldOp;

typedef struct PooldMsg {
        PooldOp op;
        char word[POOLD_WORD_MAX];  /* claim: the language; release: the retire label or "none"; turn: the session */
        char word2[POOLD_WORD_MAX]; /* release: the language prepared */
        unsigned number;            /* turn: how many may wait at most */
} PooldMsg;

/* One worker's line (without its "\n") into *ret: 0, or -EBADMSG for anything else: an unknown
 * verb, a missing or extra word, a word that is not plain ([a-z0-9_-], at most POOLD_WORD_MAX - 1),
 * a number out of range. Pure. */
int poold_msg_parse(const char *line, size_t len, PooldMsg *ret);

/* The pool manager's answer to a claim, without its "\n": 0 and the machine's id and socket (into
 * buffers of id_size and socket_size) and its executions so far; -ENOSPC for "full"; -EHOSTDOWN for
 * "failing", its reason into reason (size bytes); -EBADMSG otherwise. Pure. */
int poold_claim_reply_parse(const char *line, char *ret_id, size_t id_size, char *ret_socket, size_t socket_size, int64_t *ret_executions,
                            char *reason, size_t size);

/* The machines' counts, as "watch" tells them. */
typedef struct PoolCountsLine {
        unsigned ready, claimed, starting, waiting, max;
        unsigned sessions; /* a count of the pool manager's looks at the sessions (wraps) */
} PoolCountsLine;

/* The line that tells c, without its "\n", into buf (size bytes, POOLD_LINE_MAX is plenty). Pure. */
void poold_pool_line_format(const PoolCountsLine *c, char *buf, size_t size);

/* A "pool ..." line (without its "\n") into *ret: 0, or -EBADMSG. Pure. */
int poold_pool_line_parse(const char *line, PoolCountsLine *ret);
