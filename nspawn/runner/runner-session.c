/* SPDX-License-Identifier: MIT */
/* A session's machine's runner (runner.c --session): one long-lived sandbox on the machine's
 * /workspace, the session's disk (zygote-proto.h), whose interpreters keep their state from one
 * run to the next, until the machine is stopped. One request per connection:
 *   {"op": "run", "language", "code", "timeout_ms", "output_cap"}, {"op": "exec", "command", ...}
 *       -> {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
 *           "stderr_truncated", "duration_ms", "cpu_ms", "memory_peak_bytes", "termination",
 *           "state_reset"}
 *   {"op": "put", "path"} followed by the file's bytes, {"op": "get", "path"}, {"op": "list", "dir"},
 *   {"op": "delete", "path"} (session-files.c); a get may carry "max_bytes", past which it is
 *   refused (413) unread; a successful get's reply is followed by "\n" and "size" bytes, sent from
 *   the file as they are read (a shorter stream: the file was shortened meanwhile).
 *   {"op": "usage"} -> {"status": 200, "cpu_ms", "cpu_source"}: CPU no op reported yet.
 * A run or an exec with "egress": true (the session was made with network) first gets the
 * sandbox's proxy port (runner_egress_send()), ahead of its reply or frames.
 * A run's or an exec's cpu_ms is all the sandbox's cgroup used since the previous op reported: its
 * background processes between runs included. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/json-limits.h"
#include "lib/json-util.h"
#include "lib/language.h"
#include "lib/macro.h"
#include "lib/stream-frame.h"
#include "lib/time-util.h"
#include "nspawn/runner/cgroup.h"
#include "nspawn/runner/proc-stat.h"
#include "nspawn/runner/runner-common.h"
#include "nspawn/runner/runner-session.h"
#include "nspawn/runner/session-files.h"

DEFINE_JSON_CLEANUP

enum {
        SESSION_PYTHON,
        SESSION_NODE,
        SESSION_BASH,
        SESSION_LANGUAGES,
};
_Static_assert(SESSION_LANGUAGES == LANGUAGES_N, "a session keeps one interpreter of each language, in language_names' order");

/* A process of the session sandbox, started by its init: an interpreter, or an exec command. */
typedef struct Process {
        uint32_t id; /* 0: none */
        pid_t pid;   /* in the machine's PID namespace, for /proc; -1 when not found */
        int in_w;    /* its fd 3 */
        int done_r;  /* its fd 4 */
        int out_r;
        int err_r;
        bool ended; /* end holds how */
        SessionEvent end;
} Process;

#define PROCESS_NULL ((Process){.pid = -1, .in_w = -1, .done_r = -1, .out_r = -1, .err_r = -1})

typedef struct Session {
        pid_t init; /* -1: none; one is made for the next op */
        int control;
        uint32_t last_id;
        Process interpreter[SESSION_LANGUAGES];
        Process exec; /* the command of the exec under way */
        /* That language's interpreter lost its state: its next run starts afresh and says so. */
        bool lost[SESSION_LANGUAGES];
        unsigned cgroup; /* the sandbox's cgroups' number (cgroup.h); 0: none */
        int net;         /* the sandbox's network namespace; -1: none */
        /* Its proxy port (runner_egress_listen()), bound at the first op that asks for network,
         * before any of the op's code runs, and kept while the sandbox lives: each such op hands
         * it to the egress relay for the op's length. What code connects between ops waits in its
         * backlog for the next. -1: none. */
        int egress;
        Runner *runner;
        /* The connection of the op under way: a worker that closes it has no client waiting any
         * more (nginx closed the request), and the run ends. -1 between ops, and once a streamed
         * op's worker could not be written to. */
        int client;
        bool streamed; /* the op under way is answered in frames (lib/stream-frame.h) */
        /* Its cgroup's CPU time already reported (by the last run, exec or usage op): what a
         * background process burns between runs is the next one's to report. */
        uint64_t billed_usec;
} Session;

static void process_done(Process *p) {
        closep(&p->in_w);
        closep(&p->done_r);
        closep(&p->out_r);
        closep(&p->err_r);
        *p = PROCESS_NULL;
}

/* The runner keeps no CAP_KILL (nspawn-argv.c): the init is the sandbox user's, and so is the signal,
 * sent with that effective UID for the moment (the capabilities come back with UID 0). SIGKILL from
 * outside its PID namespace kills the init, and with it every process of the sandbox. */
static void kill_as_sandbox_user(uid_t uid, pid_t pid) {
        if (setresuid((uid_t) -1, uid, (uid_t) -1) < 0)
                return;
        (void) kill(pid, SIGKILL);
        if (setresuid((uid_t) -1, 0, (uid_t) -1) < 0)
                runner_die("returning to UID 0", -errno);
}

/* The session sandbox and all its processes gone: the interpreters that ran lost their state. */
static void session_kill(Session *s) {
        if (s->init > 0)
                kill_as_sandbox_user(s->runner->uid, s->init);
        s->init = -1;
        closep(&s->control);
        closep(&s->net);
        closep(&s->egress);
        if (s->cgroup)
                cgroup_sandbox_remove(s->cgroup);
        s->cgroup = 0;
        for (size_t l = 0; l < SESSION_LANGUAGES; l++) {
                if (s->interpreter[l].id)
                        s->lost[l] = true;
                process_done(&s->interpreter[l]);
        }
        process_done(&s->exec);
}

/* A new session sandbox from the plain zygote: its init, ready once it says hello. */
static int session_make(Session *s) {
        int sp[2] = {-1, -1}, mnt = -1, net = -1;
        ZygoteReply rep = {.pid = -EPROTO};
        int32_t hello = -1;
        int r = 0;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                r = -errno;
        if (r >= 0)
                r = runner_zygote_fork(s->runner, &s->runner->plain, ZYGOTE_SESSION, &sp[1], 1, &s->cgroup);
        closep(&sp[1]);
        if (r >= 0 && fd_receive_one(s->runner->plain.fd, &rep, sizeof(rep), 0, NULL) != (ssize_t) sizeof(rep))
                r = -EPROTO;
        if (r >= 0 && rep.pid <= 0)
                r = rep.pid < 0 ? rep.pid : -EPROTO;
        if (r < 0) {
                closep(&sp[0]);
                if (s->cgroup)
                        cgroup_sandbox_remove(s->cgroup);
                s->cgroup = 0;
                return r;
        }
        s->init = rep.pid;
        s->control = sp[0];
        s->billed_usec = 0; /* a new cgroup, counting from nothing */
        /* Its first word: its filesystems are made. The files are worked on in the machine's own
         * namespace (the same /workspace), not in this one. */
        if (fd_receive_one(s->control, &hello, sizeof(hello), 0, &mnt) != (ssize_t) sizeof(hello) || hello != 0 ||
            fd_receive_one(s->control, &hello, sizeof(hello), 0, &net) != (ssize_t) sizeof(hello) || hello != 1) {
                closep(&mnt);
                closep(&net);
                session_kill(s);
                return -EPROTO;
        }
        closep(&mnt);
        s->net = net;
        return 0;
}

static Process *session_process(Session *s, uint32_t id) {
        for (size_t l = 0; l < SESSION_LANGUAGES; l++)
                if (s->interpreter[l].id == id)
                        return &s->interpreter[l];
        return s->exec.id == id ? &s->exec : NULL;
}

/* One event from the init into *ret (an end is also noted on its process): 1, 0 if none is there
 * (MSG_DONTWAIT), -EPIPE if the init is gone. */
static int session_receive(Session *s, int flags, SessionEvent *ret) {
        SessionEvent ev = {};
        ssize_t n = fd_receive_one(s->control, &ev, sizeof(ev), flags, NULL);
        Process *p;

        if (n == -EAGAIN)
                return 0;
        if (n != (ssize_t) sizeof(ev))
                return -EPIPE;
        p = ev.what == SESSION_ENDED ? session_process(s, ev.id) : NULL;
        if (p) {
                p->ended = true;
                p->end = ev;
        }
        *ret = ev;
        return 1;
}

/* What happened since the last op: interpreters that ended (a thread's os._exit, a timer's uncaught
 * error, the OOM killer), or the whole sandbox gone. */
static void session_catch_up(Session *s) {
        SessionEvent ev;
        int r;

        while ((r = session_receive(s, MSG_DONTWAIT, &ev)) > 0)
                ;
        if (r < 0) {
                session_kill(s);
                return;
        }
        for (size_t l = 0; l < SESSION_LANGUAGES; l++)
                if (s->interpreter[l].ended) {
                        s->lost[l] = true;
                        process_done(&s->interpreter[l]);
                }
}

/* A process started in the session sandbox, its pipes ours, header its first line on fd 3. */
static int session_spawn(Session *s, Process *p, const char *header) {
        int in[2] = {-1, -1}, done[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
        SessionStart st = {.magic = ZYGOTE_MAGIC, .id = ++s->last_id};
        SessionEvent ev = {};
        int r = 0;

        if (st.id == 0) /* 0 is no process's */
                st.id = ++s->last_id;
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                r = -errno;
        if (r >= 0) {
                /* One descriptor a message, in the order the init puts them at 1, 2, 3 and 4. */
                const int fds[] = {out[1], err[1], in[0], done[1]};

                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(fds); i++)
                        r = fd_send_one(s->control, &st, sizeof(st), fds[i], 0);
        }
        closep(&in[0]);
        closep(&done[1]);
        closep(&out[1]);
        closep(&err[1]);
        *p = PROCESS_NULL;
        p->id = st.id;
        p->in_w = in[1];
        p->done_r = done[0];
        p->out_r = out[0];
        p->err_r = err[0];
        while (r >= 0 && !(ev.what == SESSION_STARTED && ev.id == st.id))
                r = session_receive(s, 0, &ev);
        if (r >= 0 && ev.pid < 0)
                r = ev.pid;
        if (r < 0) {
                process_done(p);
                return r;
        }
        p->pid = proc_outer_pid(s->init, ev.pid);
        (void) fcntl(p->out_r, F_SETFL, O_NONBLOCK);
        (void) fcntl(p->err_r, F_SETFL, O_NONBLOCK);
        (void) fcntl(p->done_r, F_SETFL, O_NONBLOCK);
        /* One that died already cannot take it: its end comes from the init. */
        (void) fd_write_all(p->in_w, header, strlen(header));
        return 0;
}

/* How an op ended. */
typedef struct Outcome {
        const char *termination; /* "exit", "timeout", "killed" */
        int exit_code;
        bool state_reset;
        bool sandbox_lost; /* the whole session sandbox ends with this op */
        int64_t cpu_usec;
        int64_t peak_bytes;
        uint64_t oom_kills; /* by the OOM killer in the sandbox's cgroup during the op */
} Outcome;

/* The code's status line on done_r: 1 with *ret, 0 if not all there yet, -EPIPE at its end. */
static int read_done(int fd, int *ret) {
        char buf[32];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -EPIPE;
        if (n == 0)
                return -EPIPE;
        buf[n] = 0;
        *ret = atoi(buf);
        return 1;
}

/* Waits for p's op to end: its status line (an interpreter's run), its end, the init's, or the
 * deadline; gathers its output meanwhile. */
static int session_wait(Session *s, Process *p, uint64_t deadline, size_t cap, Output *out, Output *err, Outcome *ret) {
        cleanup_free char *buf = malloc(RUNNER_CHUNK);
        bool done_open = p->done_r >= 0;
        SessionEvent ev;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                struct pollfd fds[] = {
                        {.fd = s->control, .events = POLLIN},
                        {.fd = done_open ? p->done_r : -1, .events = POLLIN},
                        {.fd = out->open ? p->out_r : -1, .events = POLLIN},
                        {.fd = err->open ? p->err_r : -1, .events = POLLIN},
                        /* The worker shut its side for writing once it sent the op: only its
                         * close (POLLHUP, both ways shut) says it is gone. */
                        {.fd = s->client, .events = 0},
                };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r, status;

                /* A streamed op's worker that could not be written to is gone: nobody waits. */
                if (s->streamed && s->client < 0) {
                        ret->termination = "killed";
                        ret->exit_code = -1;
                        ret->sandbox_lost = true;
                        return 0;
                }
                if (now >= deadline) {
                        ret->termination = "timeout"; /* NOLINT(clang-analyzer-unix.Malloc): buf is cleanup_free, unseen by clang-analyzer 14 */
                        ret->exit_code = -1;
                        ret->sandbox_lost = true;
                        return 0;
                }
                r = poll(fds, ELEMENTSOF(fds), (int) ((deadline - now + 999) / 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                if (fds[4].revents & (POLLHUP | POLLERR)) {
                        /* Nobody waits for the run: it ends as a timeout does, with everything
                         * it started. */
                        ret->termination = "killed";
                        ret->exit_code = -1;
                        ret->sandbox_lost = true;
                        return 0;
                }
                if (fds[2].revents)
                        (void) runner_output_drain(p->out_r, out, cap, buf);
                if (fds[3].revents)
                        (void) runner_output_drain(p->err_r, err, cap, buf);
                if (fds[1].revents) {
                        r = read_done(p->done_r, &status);
                        if (r > 0) {
                                ret->termination = "exit";
                                ret->exit_code = status;
                                return 0;
                        }
                        if (r < 0)
                                done_open = false; /* it closed fd 4: its end comes from the init */
                }
                if (fds[0].revents) {
                        if (session_receive(s, 0, &ev) < 0) {
                                /* The init died (the OOM killer's first choice), and every process with it. */
                                ret->termination = "killed";
                                ret->exit_code = 128 + SIGKILL;
                                ret->sandbox_lost = true;
                                return 0;
                        }
                        if (p->ended) {
                                ret->termination = p->end.signal ? "killed" : "exit";
                                ret->exit_code = p->end.status;
                                return 0;
                        }
                }
        }
}

/* The process an op runs in: the language's interpreter, started if it is not running (the state
 * it lost said once), or a new exec command. */
static int session_process_for(Session *s, int language, bool egress, Process **ret, bool *ret_reset) {
        static const char *const kinds[SESSION_LANGUAGES] = {"session-python", "session-node", "session-bash"};
        Process *p = language < 0 ? &s->exec : &s->interpreter[language];
        char header[ZYGOTE_HEADER_MAX];
        int r;

        /* A session's network is its own from its creation on: every op of it asks for it, or none
         * does, so an interpreter's environment (the proxy's variables) holds for all its runs. */
        (void) snprintf(header, sizeof(header), "%s none%s\n", language < 0 ? "exec" : kinds[language], egress ? " egress" : "");
        *ret = p;
        if (language < 0) {
                process_done(p);
                return session_spawn(s, p, header);
        }
        *ret_reset = s->lost[language];
        s->lost[language] = false;
        if (p->id)
                return 0;
        r = session_spawn(s, p, header);
        if (r < 0)
                s->lost[language] = *ret_reset; /* not started: still to say */
        return r;
}

/* What an op used, best effort: an interpreter's CPU time (with what it waited for) from its
 * /proc/<pid>/stat before and after, and its own peak resident set since it started (VmHWM); for a
 * process that ended, what its init's wait4() said of it and what it waited for (CPU over its whole
 * life, less what it had used before the op). */
static void session_usage(const Process *p, int64_t cpu_before, Outcome *o) {
        if (p->ended) {
                o->cpu_usec = (int64_t) p->end.cpu_usec;
                if (cpu_before >= 0 && o->cpu_usec >= cpu_before)
                        o->cpu_usec -= cpu_before;
                o->peak_bytes = (int64_t) p->end.maxrss_bytes;
                return;
        }
        o->cpu_usec = proc_cpu_usec(p->pid);
        o->cpu_usec = o->cpu_usec >= 0 && cpu_before >= 0 && o->cpu_usec >= cpu_before ? o->cpu_usec - cpu_before : 0;
        o->peak_bytes = proc_peak_bytes(p->pid);
}

static int session_reply(struct json_object *reply, const Outcome *o, const Output *out, const Output *err, uint64_t start) {
        uint64_t took = now_usec(CLOCK_MONOTONIC) - start;

        if (json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
            json_object_object_add(reply, "exit_code", json_object_new_int(o->exit_code)) < 0 ||
            runner_add_b64(reply, "stdout_b64", out->data, out->len) < 0 || runner_add_b64(reply, "stderr_b64", err->data, err->len) < 0 ||
            json_object_object_add(reply, "stdout_truncated", json_object_new_boolean(out->cut)) < 0 ||
            json_object_object_add(reply, "stderr_truncated", json_object_new_boolean(err->cut)) < 0 ||
            json_object_object_add(reply, "duration_ms", json_object_new_int64((int64_t) (took / 1000))) < 0 ||
            /* Reference 002 gives the run's time inside to a tenth of a millisecond. */
            json_object_object_add(reply, "duration_us", json_object_new_int64((int64_t) took)) < 0 ||
            json_object_object_add(reply, "cpu_ms", json_object_new_int64(o->cpu_usec / 1000)) < 0 ||
            json_object_object_add(reply, "memory_peak_bytes", json_object_new_int64(o->peak_bytes)) < 0 ||
            json_object_object_add(reply, "oom_kills", json_object_new_int64((int64_t) o->oom_kills)) < 0 ||
            json_object_object_add(reply, "termination", json_object_new_string(o->termination)) < 0 ||
            json_object_object_add(reply, "state_reset", json_object_new_boolean(o->state_reset)) < 0)
                return -ENOMEM;
        return 0;
}

/* The bytes of a run's code or an exec's command, on the process's fd 3. One that died already
 * cannot take them: its end comes from the init. */
static void session_send(Process *p, struct json_object *code, bool last) {
        char header[32];

        (void) snprintf(header, sizeof(header), "%d\n", json_object_get_string_len(code));
        if (fd_write_all(p->in_w, header, strlen(header)) >= 0)
                (void) fd_write_all(p->in_w, json_object_get_string(code), (size_t) json_object_get_string_len(code));
        if (last)
                closep(&p->in_w);
}

/* Everything in p's pipes now into out and err; what a background process of it still writes is
 * not waited for. */
static void session_drain(Process *p, size_t cap, Output *out, Output *err, char *buf) {
        while (out->open && p->out_r >= 0 && runner_output_drain(p->out_r, out, cap, buf))
                ;
        while (err->open && p->err_r >= 0 && runner_output_drain(p->err_r, err, cap, buf))
                ;
}

/* After the op: what is left of the sandbox and of its processes. */
static void session_settle(Session *s, Process *p, int language, Outcome *o) {
        if (o->sandbox_lost) {
                o->state_reset = true;
                session_kill(s);
        } else if (p->ended) {
                if (language >= 0) {
                        o->state_reset = true;
                        s->lost[language] = true;
                }
                process_done(p);
        } else if (language < 0)
                process_done(p);
}

/* A run's CPU time: all its sandbox's cgroup used since the last op reported (the run, and what
 * its background processes burned since), so that nothing it used between runs goes unbilled. */
static void session_bill(Session *s, const CgroupUsage *before, const CgroupUsage *after, Outcome *o) {
        if (!before->has_cpu || !after->has_cpu)
                return;
        if (after->cpu_usec >= s->billed_usec)
                o->cpu_usec = (int64_t) (after->cpu_usec - s->billed_usec);
        else if (after->cpu_usec >= before->cpu_usec)
                o->cpu_usec = (int64_t) (after->cpu_usec - before->cpu_usec);
        s->billed_usec = after->cpu_usec;
}

/* {"op": "usage"}: the CPU time its sandbox's cgroup used since the last op reported, now
 * reported: asked before the session is paused or deleted, whose next run would never say it. */
static int session_usage_op(Session *s, struct json_object *reply) {
        CgroupUsage now = {};
        int64_t cpu_usec = 0;

        if (s->cgroup && s->init >= 0) {
                cgroup_sandbox_usage(s->cgroup, &now);
                if (now.has_cpu && now.cpu_usec >= s->billed_usec) {
                        cpu_usec = (int64_t) (now.cpu_usec - s->billed_usec);
                        s->billed_usec = now.cpu_usec;
                }
        }
        if (json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
            json_object_object_add(reply, "cpu_ms", json_object_new_int64(cpu_usec / 1000)) < 0 ||
            json_object_object_add(reply, "cpu_source", json_object_new_string(now.has_cpu ? "cgroup" : "none")) < 0)
                return -ENOMEM;
        return 0;
}

/* For an op that asks for network, first on the worker's connection: the sandbox's proxy port
 * (made now if it has none yet), or the mark alone when it cannot be made, and the op fails. */
static int session_egress(Session *s, Error *reterr) {
        int k = 0;

        if (s->egress < 0)
                k = runner_egress_listen(s->runner, s->net, &s->egress);
        if (s->client < 0 || runner_egress_send(s->client, s->egress) < 0)
                return error_set(reterr, -EPIPE, "the worker went before the proxy port was handed over");
        if (k < 0)
                return error_set(reterr, k, "the sandbox's proxy port could not be made: %s", strerror(-k));
        return 0;
}

/* A run or an exec: the reply. */
static int session_execute(Session *s, struct json_object *req, bool exec, struct json_object *reply, Error *reterr) {
        struct json_object *code = NULL;
        int64_t cap = json_int(req, "output_cap", 1 << 20), timeout = json_int(req, "timeout_ms", 30000), cpu_before;
        const char *language = exec ? NULL : json_word(req, "language", language_names);
        cleanup_free char *buf = malloc(RUNNER_CHUNK);
        Output out = {.open = true, .frame = STREAM_FRAME_STDOUT}, err = {.open = true, .frame = STREAM_FRAME_STDERR}, junk = {.open = true};
        Outcome o = {.exit_code = -1};
        CgroupUsage before = {}, after = {};
        bool peak_reset = false, egress;
        int index = -1;
        uint64_t start;
        Process *p;
        int r;

        if (!json_object_object_get_ex(req, exec ? "command" : "code", &code) || !json_object_is_type(code, json_type_string))
                return error_set(reterr, -EINVAL, exec ? "request has no command" : "request has no code"); /* NOLINT(clang-analyzer-unix.Malloc): buf is cleanup_free, unseen by clang-analyzer 14 */
        if (!exec && !language)
                return error_set(reterr, -EINVAL, "unknown language");
        if (cap < 0 || cap > (1LL << 30) || timeout <= 0 || timeout > 24LL * 3600 * 1000)
                return error_set(reterr, -EINVAL, "output_cap or timeout_ms out of range");
        if (json_object_object_get_ex(req, "stream", NULL) && !json_object_is_type(json_field(req, "stream"), json_type_boolean))
                return error_set(reterr, -EINVAL, "stream must be a boolean");
        if (json_object_object_get_ex(req, "egress", NULL) && !json_object_is_type(json_field(req, "egress"), json_type_boolean))
                return error_set(reterr, -EINVAL, "egress must be a boolean");
        egress = json_object_get_boolean(json_field(req, "egress"));
        /* Streamed: what the op writes goes to the worker as it comes, and so does the reply. */
        s->streamed = json_object_get_boolean(json_field(req, "stream"));
        if (s->streamed)
                out.stream = err.stream = &s->client;
        for (size_t l = 0; language && l < SESSION_LANGUAGES; l++)
                if (language == language_names[l])
                        index = (int) l;
        out.data = malloc((size_t) cap + 1);
        err.data = malloc((size_t) cap + 1);
        r = buf && out.data && err.data ? 0 : -ENOMEM;

        start = now_usec(CLOCK_MONOTONIC);
        if (r >= 0 && s->init >= 0)
                session_catch_up(s);
        if (r >= 0 && s->init < 0)
                r = session_make(s);
        if (r >= 0 && egress)
                r = session_egress(s, reterr);
        if (r >= 0)
                r = session_process_for(s, index, egress, &p, &o.state_reset);
        if (r >= 0) {
                /* What an interpreter wrote between ops (a thread, a timer, a background job) is no
                 * op's. */
                session_drain(p, 0, &junk, &junk, buf);
                cpu_before = proc_cpu_usec(p->pid);
                if (s->cgroup) {
                        peak_reset = cgroup_sandbox_reset_peak(s->cgroup) >= 0;
                        cgroup_sandbox_usage(s->cgroup, &before);
                }
                session_send(p, code, exec);
                r = session_wait(s, p, start + (uint64_t) timeout * USEC_PER_MSEC, (size_t) cap, &out, &err, &o);
        }
        if (r >= 0) {
                session_usage(p, cpu_before, &o);
                if (s->cgroup) {
                        /* The sandbox's counts where its cgroups have them: every process of it,
                         * over this op (the peak, only where it could be set back before it). */
                        cgroup_sandbox_usage(s->cgroup, &after);
                        session_bill(s, &before, &after, &o);
                        if (peak_reset && after.has_memory)
                                o.peak_bytes = (int64_t) after.memory_peak_bytes;
                        o.oom_kills = after.oom_kills >= before.oom_kills ? after.oom_kills - before.oom_kills : 0;
                }
                session_drain(p, (size_t) cap, &out, &err, buf);
                session_settle(s, p, index, &o);
                r = session_reply(reply, &o, &out, &err, start);
        }
        free(out.data);
        free(err.data);
        return r;
}

/* A get's file: open, read only as it is sent (session_file_send()). */
typedef struct FileBody {
        int fd; /* -1: none */
        uint64_t size;
} FileBody;

/* A file op, as the sandbox user, on the machine's /workspace: the session sandbox's, the same. */
static int session_file_op(uid_t uid, const char *op, struct json_object *req, const char *content, size_t len, struct json_object *reply,
                           FileBody *ret_body, Error *reterr) {
        int ws, r;

        (void) setfsgid(uid);
        (void) setfsuid(uid);
        ws = open(RUNNER_WORKDIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ws < 0)
                r = -errno;
        else
                r = session_files(ws, op, req, content, len, reply, &ret_body->fd, &ret_body->size, reterr);
        closep(&ws);
        (void) setfsuid(0);
        (void) setfsgid(0);
        return r;
}

/* The reply to one request's bytes, as JSON text; a get's file, open, in *ret_body. */
static char *session_answer(Session *s, const char *data, size_t len, FileBody *ret_body) {
        static const char *const ops[] = {"run", "exec", "put", "get", "list", "delete", "usage", NULL};
        cleanup_json struct json_object *reply = json_object_new_object();
        struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        struct json_object *req = NULL;
        const char *op = NULL, *nl;
        Error error = {};
        size_t end = 0;
        int r = -EINVAL;

        if (!reply || !tok) {
                json_tokener_free(tok);
                return NULL;
        }
        /* The object is the first line (the worker writes it plain, a newline in a string escaped);
         * a put's file is every byte after that newline, as it is: json-c would have skipped the
         * file's leading blanks and comments as its own. */
        nl = memchr(data, '\n', len);
        end = nl ? (size_t) (nl - data) : len;
        req = json_tokener_parse_ex(tok, data, (int) end);
        if (req && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != end)) {
                (void) json_object_put(req);
                req = NULL;
        }
        json_tokener_free(tok);
        if (nl)
                end++;
        /* Two faults answer "request is not JSON": the second is tested apart as it needs op. */
        if (!json_object_is_type(req, json_type_object))
                (void) error_set(&error, -EINVAL, "request is not JSON"); /* NOLINT(bugprone-branch-clone) */
        else if (!(op = json_word(req, "op", ops)) || !json_object_object_get_ex(req, "op", NULL))
                (void) error_set(&error, -EINVAL, "unknown op");
        /* Bytes after the object: a put's file, and nothing else's. */
        else if (strcmp(op, "put") != 0 && end != len)
                (void) error_set(&error, -EINVAL, "request is not JSON");
        else if (strcmp(op, "run") == 0 || strcmp(op, "exec") == 0)
                r = session_execute(s, req, strcmp(op, "exec") == 0, reply, &error);
        else if (strcmp(op, "usage") == 0)
                r = session_usage_op(s, reply);
        else
                r = session_file_op(s->runner->uid, op, req, data + end, len - end, reply, ret_body, &error);
        (void) json_object_put(req);

        if (r < 0) {
                /* The request's fault, unless the runner failed (a sandbox it could not make). */
                int status = r == -EINVAL ? 400 : 500;

                if (error.status)
                        status = error.status;
                closep(&ret_body->fd);
                (void) json_object_put(reply);
                reply = json_object_new_object();
                if (!reply || json_object_object_add(reply, "status", json_object_new_int(status)) < 0 ||
                    json_object_object_add(reply, "error", json_object_new_string(error_message(&error, r))) < 0)
                        return NULL;
        }
        return runner_reply_text(reply);
}

/* The session's disk is the sandbox user's: owned by it, or, where the runner may not give it away
 * (no CAP_CHOWN), open to it as a fresh workspace is, sticky and world-writable. Never emptied. */
static int workspace_own(uid_t uid) {
        struct stat st;

        if (chown(RUNNER_WORKDIR, uid, uid) == 0)
                return 0;
        if (stat(RUNNER_WORKDIR, &st) < 0 || (st.st_uid != uid && chmod(RUNNER_WORKDIR, 01777) < 0))
                return -errno;
        return 0;
}

int runner_session_serve(Runner *r, Error *reterr) {
        Session s = {.init = -1, .control = -1, .net = -1, .egress = -1, .runner = r, .client = -1};
        int k;

        for (size_t l = 0; l < SESSION_LANGUAGES; l++)
                s.interpreter[l] = PROCESS_NULL;
        s.exec = PROCESS_NULL;
        k = workspace_own(r->uid);
        if (k < 0)
                return error_set(reterr, k, "giving " RUNNER_WORKDIR " to the sandbox user: %s", strerror(-k));
        k = runner_zygote_start(r, &r->plain);
        if (k < 0)
                return error_set(reterr, k, "starting the zygote: %s", strerror(-k));
        k = session_make(&s);
        if (k < 0)
                return error_set(reterr, k, "making the session sandbox: %s", strerror(-k));

        for (;;) {
                cleanup_free char *data = NULL, *reply = NULL;
                cleanup_close int conn = -1;
                FileBody body = {.fd = -1};
                size_t len = 0;

                k = runner_next_request(&conn, &data, &len);
                if (k < 0)
                        return error_set(reterr, k, "accept: %s", strerror(-k));
                /* The session holds the connection while the op runs: a streamed op's frames may
                 * find the worker gone and close it. */
                s.client = TAKE_FD(conn);
                s.streamed = false;
                reply = session_answer(&s, data, len, &body);
                conn = s.client;
                s.client = -1;
                if (!reply)
                        return error_set(reterr, -ENOMEM, "reply: %s", strerror(ENOMEM));
                if (s.streamed)
                        runner_frame_send(&conn, STREAM_FRAME_REPLY, reply, strlen(reply));
                else if (conn >= 0 && fd_write_all(conn, reply, strlen(reply)) >= 0 && body.fd >= 0 && fd_write_all(conn, "\n", 1) >= 0)
                        /* Whatever ends it (the worker gone, the file shortened), the worker sees the
                         * bytes end before the size it was told, and nothing waits here. */
                        (void) session_file_send(conn, body.fd, body.size);
                closep(&body.fd);
                closep(&conn);
                /* A sandbox that ended with the op (a timeout) is made again now, while the worker
                 * answers its client; failing that, at the next op. */
                if (s.init < 0)
                        (void) session_make(&s);
        }
}
