/* SPDX-License-Identifier: MIT */
#pragma once

/* What the runner's two servers share: the machine's settings and cgroups, the plain zygote and
 * how sandboxes are asked of a zygote, the listening socket, and reading a sandbox's output.
 * runner-exec.c serves executions with them, runner-session.c a session. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nspawn/runner/runner-args.h"
#include "nspawn/runner/zygote-proto.h"

struct json_object;

#define RUNNER_WORKDIR "/workspace"
/* How much of a pipe one read takes. */
#define RUNNER_CHUNK (64U << 10)
/* The snippets' environment (runner-common.c) and the operator's --setenv. */
#define RUNNER_ENV_MAX (8 + RUNNER_SETENV_MAX)

/* A zygote (zygote.c): an initialised interpreter that forks sandboxes. Every machine has the plain
 * one, started with the machine; an execution machine may have a data one too (runner-exec.c). */
typedef struct Zygote {
        int fd; /* our end of its socket; -1: not started, or given up */
        bool ready;
        bool failed; /* the data one died or failed to start: the plain one serves in its place */
        ZygoteConfig config;
} Zygote;

#define ZYGOTE_NULL ((Zygote){.fd = -1})

/* The machine, as both servers see it: set up once by main() and passed to each. */
typedef struct Runner {
        uid_t uid;               /* the sandbox user */
        const char *zygote_path; /* borrowed from argv */
        const void *filter;      /* the code's compiled filter, for every zygote; borrowed */
        size_t filter_len;
        int own_mnt;                   /* the machine's mount namespace */
        int own_net;                   /* the machine's network namespace */
        char *env[RUNNER_ENV_MAX + 1]; /* the zygotes' environment; the strings borrowed */
        bool have_cgroups;             /* sandboxes get cgroups of their own (cgroup.h) */
        unsigned last_cgroup;          /* the last number given to one */
        Zygote plain;
} Runner;

/* *ret set up from args: the settings, the environment with the --setenv ones added, the plain
 * zygote's configuration (not started). args and filter must outlive *ret. */
void runner_init(Runner *ret, const RunnerArgs *args, const void *filter, size_t filter_len);

/* The runner cannot go on safely (a UID or a namespace it could not return to): says what and
 * exits, and the machine with it. */
_Noreturn void runner_die(const char *what, int r);

/* Starts zygote z with z->config: its interpreter initialises while the runner goes on;
 * runner_zygote_ready() waits for it. 0 or a negative errno. */
int runner_zygote_start(Runner *r, Zygote *z);

/* Waits until zygote z is ready: 0, or -EPROTO if it died first. */
int runner_zygote_ready(Zygote *z);

/* Asks zygote z for a sandbox of kind (ZygoteFork): fds, one a message, then the cgroup.procs of
 * the sandbox's new cgroups, if sandboxes have them. Their number in *ret_cgroup (0: none), which
 * the caller removes. 0 or a negative errno; the reply is the caller's to read. */
int runner_zygote_fork(Runner *r, Zygote *z, uint32_t kind, const int *fds, size_t n_fds, unsigned *ret_cgroup);

/* The next request on the listening socket (standard input): a connection greeted with "ready\n",
 * and all it sent until it shut down its write side, into *ret_conn and *ret_data (the caller's,
 * NUL-terminated, *ret_len bytes). A connection that sends nothing (the pool's readiness probe) or
 * goes away is closed and the next awaited, with no timeout: an idle machine sleeps here. 0 or a
 * negative errno. */
int runner_next_request(int *ret_conn, char **ret_data, size_t *ret_len);

/* The reply as JSON text, the caller's to free; NULL if out of memory. */
char *runner_reply_text(struct json_object *reply);

/* One of a sandbox's output pipes, as kept for the reply. */
typedef struct Output {
        char *data; /* cap + 1 bytes, the caller's */
        size_t len;
        bool cut;  /* more came than cap */
        bool open; /* no end of file yet */
        /* A streamed request's connection (NULL or -1: not streamed), and the frame type the kept
         * bytes go to it in as they come (lib/stream-frame.h). */
        int *stream;
        char frame;
} Output;

/* Reads one chunk of fd (non-blocking) into o, at most cap kept, through buf (RUNNER_CHUNK bytes),
 * and sends what it kept on o's stream: false once nothing is left right now, or at the end
 * (o->open turns false). */
bool runner_output_drain(int fd, Output *o, size_t cap, char *buf);

/* One frame of len bytes on *fd, whole, waiting as long as the worker takes to read it. A worker
 * gone (or any failure) closes *fd and sets it -1: nothing more is streamed, the code runs on. */
void runner_frame_send(int *fd, char type, const void *data, size_t len);

/* data, base64-encoded, as reply's key. 0 or -ENOMEM. */
int runner_add_b64(struct json_object *reply, const char *key, const void *data, size_t len);

/* The code's way out, for code that asks for network: a listening socket at
 * 127.0.0.1:RUNNER_EGRESS_PORT in the sandbox's network namespace netns, made from the runner (the
 * code holds no capability to make one, nor any other way out), into *ret. The worker hands it to
 * the egress relay, which accepts what the code connects there. 0 or -errno. */
int runner_egress_listen(const Runner *r, int netns, int *ret);

/* First on the worker's connection, before any output: RUNNER_EGRESS_MARK with the listening
 * socket alongside, or alone (listener -1) when none could be made. 0 or -errno. */
int runner_egress_send(int conn, int listener);
