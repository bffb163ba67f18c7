/* SPDX-License-Identifier: MIT */
/* A pool machine's runner (runner.c without --session): executions, one at a time, each in a
 * sandbox of its own that is destroyed after it, --executions of them; then the runner exits and
 * the machine with it.
 *
 *   request: {"code", "language" ("python", "node", "bash"; python when absent), "import_policy"
 *             ("curated" or absent), "stdin", "files": [{"path", "content_b64"}],
 *             "return_files": [path], "output_cap", "return_cap"}
 *   reply:   {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
 *             "stderr_truncated", "duration_ms", "cpu_ms", "memory_peak_bytes",
 *             "files": [{"path", "content_b64"}], "prepared": the language the next sandbox is made
 *             ready for, when it is made ready for one}
 *         or {"status": 400, "error": "..."} when the request is refused.
 *
 * The next sandbox is made as soon as an execution is answered, so that the next one does not
 * wait for it. The runner writes an execution's files and reads back its returned files from
 * inside the sandbox's mount namespace, with the sandbox user's file-system identity. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/b64.h"
#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/stream-frame.h"
#include "lib/time-util.h"
#include "nspawn/runner-request.h"
#include "nspawn/runner/cgroup.h"
#include "nspawn/runner/runner-common.h"
#include "nspawn/runner/runner-exec.h"

DEFINE_JSON_CLEANUP

/* One sandbox, made before its execution arrives: its init (the zygote's child), our end of the
 * init's report socket (the code's status comes there), its mount namespace, and our ends of the
 * code process's pipes. */
typedef struct Sandbox {
        pid_t init;
        int report;
        int mnt;
        int net;    /* its network namespace */
        /* Its proxy port (runner_egress_listen()), bound while the machine waits: the execution
         * that asks for network is handed it without binding it on its way in; one that does not
         * has it closed before its code starts. -1 where it could not be made ahead. */
        int egress;
        int code_w; /* the code process's fd 3 */
        int out_r;
        int err_r;
        /* The language whose first line went ahead of the request (a node that starts while the
         * machine waits), or NULL. */
        const char *prepared;
        Zygote *zygote;  /* where it came from */
        unsigned cgroup; /* its cgroups' number (cgroup.h); 0: it has none */
} Sandbox;

#define SANDBOX_NULL ((Sandbox){.init = -1, .report = -1, .mnt = -1, .net = -1, .egress = -1, .code_w = -1, .out_r = -1, .err_r = -1})

/* The execution server's state, beyond the machine's (Runner). */
typedef struct ExecServer {
        Runner *runner;
        /* The data zygote has the --preload modules imported, and starts after the first execution
         * that imports one of them (most machines never need it: it costs their memory, and forking
         * a larger process costs every sandbox made from it). */
        Zygote data;
        /* An execution imported the data zygote's modules: it is started once that one is answered. */
        bool data_wanted;
        /* The language of the last execution: the next sandbox is made ready for it (next_prepared()). */
        const char *last_language;
        Sandbox sandbox; /* the next execution's, made ahead */
} ExecServer;

static void sandbox_done(Sandbox *sb) {
        closep(&sb->report);
        closep(&sb->mnt);
        closep(&sb->net);
        closep(&sb->egress);
        closep(&sb->code_w);
        closep(&sb->out_r);
        closep(&sb->err_r);
        /* An init whose code never ran (a refused request): its PID namespace dies with it. The
         * zygote reaps it. */
        if (sb->init > 0)
                (void) kill(sb->init, SIGKILL);
        if (sb->cgroup)
                cgroup_sandbox_remove(sb->cgroup);
        *sb = SANDBOX_NULL;
}

/* What the next sandbox is made ready for: node takes a few hundred milliseconds to start, so where
 * the last execution was node's, the next one's node starts while the machine waits; python and
 * bash need nothing ahead (NULL). */
static const char *next_prepared(const ExecServer *x) {
        return strcmp(x->last_language, "node") == 0 ? "node" : NULL;
}

/* The first line of the code's fd 3: what it is to become, and whether its environment names the
 * egress proxy. */
static int sandbox_start(Sandbox *sb, const char *language, const char *policy, bool egress) {
        char line[ZYGOTE_HEADER_MAX];

        (void) snprintf(line, sizeof(line), "%s %s%s\n", language, policy, egress ? " egress" : "");
        sb->prepared = language;
        return fd_write_all(sb->code_w, line, strlen(line));
}

static void zygote_data_failed(ExecServer *x) {
        (void) dprintf(STDERR_FILENO, "sandboxd-runner: the zygote with %s imported ended; the plain one serves in its place\n",
                       x->data.config.preload);
        closep(&x->data.fd);
        x->data.failed = true;
}

/* The data zygote, if it can fork a sandbox right now: an execution never waits for its import
 * (the plain zygote serves that one), nor fails for it (one that died is given up, and said). */
static Zygote *zygote_data_now(ExecServer *x) {
        struct pollfd p = {.fd = x->data.fd, .events = POLLIN};

        if (x->data.failed || x->data.fd < 0)
                return NULL;
        if (!x->data.ready && (poll(&p, 1, 0) <= 0 || runner_zygote_ready(&x->data) < 0)) {
                if (p.revents == 0)
                        return NULL; /* still importing */
                zygote_data_failed(x);
                return NULL;
        }
        return &x->data;
}

/* Whether python code imports one of the data zygote's modules: "import M" or "from M", M whole. A
 * guess that only decides where the sandbox comes from; code it misses imports the module itself. */
static bool imports_preloaded(const char *preload, const char *code, size_t len) {
        char list[RUNNER_ARG_TEXT_MAX], *save = NULL;

        (void) snprintf(list, sizeof(list), "%s", preload);
        for (char *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save))
                for (const char *kw = "import \0from \0"; *kw; kw += strlen(kw) + 1) {
                        size_t kl = strlen(kw), ml = strlen(m);

                        for (const char *p = memmem(code, len, kw, kl); p; p = memmem(p + 1, len - (size_t) (p + 1 - code), kw, kl)) {
                                size_t at = (size_t) (p - code) + kl, end = at + ml; /* M would be code[at, end) */

                                if (end <= len && memcmp(code + at, m, ml) == 0 &&
                                    (end == len || !(isalnum((unsigned char) code[end]) || code[end] == '_')))
                                        return true;
                        }
                }
        return false;
}

/* The next sandbox, from zygote z: made ahead, so that an execution does not wait for it (ahead:
 * its language started too, next_prepared()), or now, for the execution at hand. */
static int sandbox_prepare(ExecServer *x, Sandbox *ret, Zygote *z, bool ahead) {
        int code[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
        ZygoteReply rep = {.pid = -EPROTO};
        Sandbox sb = SANDBOX_NULL;
        int32_t hello = -1;
        int r = 0;

        if (pipe2(code, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) < 0)
                r = -errno;
        if (r >= 0) {
                /* One descriptor a message: stdout, stderr, the code's pipe, the init's socket. */
                const int fds[] = {out[1], err[1], code[0], report[1]};

                r = runner_zygote_fork(x->runner, z, ZYGOTE_EXECUTION, fds, ELEMENTSOF(fds), &sb.cgroup);
        }
        if (r >= 0 && fd_receive_one(z->fd, &rep, sizeof(rep), 0, NULL) != (ssize_t) sizeof(rep))
                r = -EPROTO;
        if (r >= 0 && rep.pid <= 0)
                r = rep.pid < 0 ? rep.pid : -EPROTO;
        closep(&out[1]);
        closep(&err[1]);
        closep(&code[0]);
        closep(&report[1]);
        sb.init = r >= 0 ? rep.pid : -1;
        sb.zygote = z;
        sb.report = report[0];
        sb.code_w = code[1];
        sb.out_r = out[0];
        sb.err_r = err[0];
        /* The init's first words: its filesystems are made, and here are its mount and network
         * namespaces. */
        if (r >= 0 && (fd_receive_one(sb.report, &hello, sizeof(hello), 0, &sb.mnt) != (ssize_t) sizeof(hello) || hello != 0 || sb.mnt < 0))
                r = -EPROTO;
        if (r >= 0 && (fd_receive_one(sb.report, &hello, sizeof(hello), 0, &sb.net) != (ssize_t) sizeof(hello) || hello != 1 || sb.net < 0))
                r = -EPROTO;
        if (r < 0) {
                sandbox_done(&sb);
                return r;
        }
        (void) runner_egress_listen(x->runner, sb.net, &sb.egress);
        if (ahead && next_prepared(x))
                (void) sandbox_start(&sb, next_prepared(x), "none", false);
        *ret = sb;
        return 0;
}

/* First on the worker's connection, before any output: the sandbox's socket (the one made ahead, or
 * one made now), or the mark alone if none could be made (the worker then gives up the execution).
 * The runner keeps none: the relay holds it for the execution's length. */
static int egress_hand_over(const Runner *r, Sandbox *sb, int conn, Error *reterr) {
        cleanup_close int lfd = TAKE_FD(sb->egress);
        int k = lfd >= 0 ? 0 : runner_egress_listen(r, sb->net, &lfd);

        if (runner_egress_send(conn, lfd) < 0)
                return -EPIPE;
        if (k < 0)
                return error_set(reterr, k, "the sandbox's proxy port could not be made: %s", strerror(-k));
        return 0;
}

/* The runner works on the sandbox's files from inside its mount namespace, with the sandbox user's
 * file-system identity: what the code left there (links included) gets no more than the code had. */
static int sandbox_fs_enter(const Runner *r, const Sandbox *sb) {
        if (setns(sb->mnt, CLONE_NEWNS) < 0)
                return -errno;
        (void) setfsgid(r->uid);
        (void) setfsuid(r->uid);
        return 0;
}

static void sandbox_fs_leave(const Runner *r) {
        (void) setfsuid(0);
        (void) setfsgid(0);
        if (setns(r->own_mnt, CLONE_NEWNS) < 0)
                runner_die("returning to the machine's mount namespace", -errno);
}

/* The absolute path of a client path into ret, or -EINVAL if it climbs out of the working directory
 * (or is empty, absolute, or holds a NUL): the check the workers made before, made again. */
static int resolve(struct json_object *p, char *ret, size_t size) {
        size_t len = strlen(RUNNER_WORKDIR "/");

        if (!json_object_is_type(p, json_type_string) || size <= len)
                return -EINVAL;
        memcpy(ret, RUNNER_WORKDIR "/", len);
        if (path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), ret + len, size - len) < 0)
                return -EINVAL;
        return 0;
}

static const char *path_text(struct json_object *p) {
        return json_object_is_type(p, json_type_string) ? json_object_get_string(p) : json_object_to_json_string(p);
}

/* mkdir -p of the directories above path (inside RUNNER_WORKDIR, which exists). */
static void make_parents(char *path) {
        for (char *p = path + strlen(RUNNER_WORKDIR) + 1; (p = strchr(p, '/')); p++) {
                *p = 0;
                (void) mkdir(path, 0777);
                *p = '/';
        }
}

static int write_files(struct json_object *files, Error *reterr) {
        size_t n;

        if (!files || json_object_is_type(files, json_type_null))
                return 0;
        if (!json_object_is_type(files, json_type_array))
                return error_set(reterr, -EINVAL, "files must be a list");
        n = json_object_array_length(files);
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL;
                cleanup_free uint8_t *content = NULL;
                cleanup_close int fd = -1;
                char target[8192];
                size_t len = 0;

                (void) json_object_object_get_ex(e, "path", &p);
                if (resolve(p, target, sizeof(target)) < 0)
                        return error_set(reterr, -EINVAL, "file path escapes working directory: '%s'", path_text(p));
                if (json_object_object_get_ex(e, "content_b64", &c) && !json_object_is_type(c, json_type_string))
                        return error_set(reterr, -EINVAL, "invalid base64 for '%s'", path_text(p));
                if (b64_decode(c ? json_object_get_string(c) : "", c ? (size_t) json_object_get_string_len(c) : 0, &content, &len) < 0)
                        return error_set(reterr, -EINVAL, "invalid base64 for '%s'", path_text(p));
                make_parents(target);
                /* O_NOFOLLOW: nothing in a fresh tmpfs is a link, and nothing should become one. */
                fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 || fd_write_all(fd, content, len) < 0)
                        return error_set(reterr, -EINVAL, "could not write '%s': %s", path_text(p), strerror(errno));
        }
        return 0;
}

/* Reads the child's stdout and stderr until it exits. A background process that keeps the pipes
 * open must not keep the reply waiting: once the child is gone, only what is already in the pipes
 * is read. */
static int collect(Sandbox *c, size_t cap, Output *out, Output *err, ZygoteStatus *ret_status) {
        cleanup_free char *buf = malloc(RUNNER_CHUNK);
        bool exited = false;
        ZygoteStatus st = {};

        out->data = malloc(cap + 1);
        err->data = malloc(cap + 1);
        if (!buf || !out->data || !err->data)
                return -ENOMEM; /* NOLINT(clang-analyzer-unix.Malloc): buf is cleanup_free, unseen by clang-analyzer 14 */
        out->open = err->open = true;
        (void) fcntl(c->out_r, F_SETFL, O_NONBLOCK);
        (void) fcntl(c->err_r, F_SETFL, O_NONBLOCK);

        while (!exited) {
                struct pollfd fds[] = {
                        {.fd = c->report, .events = POLLIN},
                        {.fd = out->open ? c->out_r : -1, .events = POLLIN},
                        {.fd = err->open ? c->err_r : -1, .events = POLLIN},
                };

                if (poll(fds, ELEMENTSOF(fds), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (fds[0].revents)
                        exited = true;
                if (fds[1].revents)
                        (void) runner_output_drain(c->out_r, out, cap, buf);
                if (fds[2].revents)
                        (void) runner_output_drain(c->err_r, err, cap, buf);
        }
        while (out->open && runner_output_drain(c->out_r, out, cap, buf))
                ;
        while (err->open && runner_output_drain(c->err_r, err, cap, buf))
                ;
        /* The code's status, from its init (which exits and takes the rest of the sandbox with it);
         * nothing means the init itself died. */
        if (fd_receive_one(c->report, &st, sizeof(st), 0, NULL) != (ssize_t) sizeof(st))
                return -ECHILD;
        c->init = -1;
        *ret_status = st;
        return 0;
}

static int return_files(struct json_object *paths, int64_t cap, struct json_object *ret, Error *reterr) {
        int64_t total = 0;
        size_t n;

        if (!paths || json_object_is_type(paths, json_type_null))
                return 0;
        if (!json_object_is_type(paths, json_type_array))
                return error_set(reterr, -EINVAL, "return_files must be a list");
        n = json_object_array_length(paths);
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(paths, i), *e;
                cleanup_free char *data = NULL;
                cleanup_close int fd = -1;
                char target[8192];
                struct stat st;
                size_t want, got = 0;

                if (resolve(p, target, sizeof(target)) < 0)
                        return error_set(reterr, -EINVAL, "file path escapes working directory: '%s'", path_text(p));
                fd = open(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                want = (size_t) (cap - total + 1);
                data = malloc(want ? want : 1);
                if (!data)
                        return -ENOMEM;
                while (got < want) {
                        ssize_t k = read(fd, data + got, want - got);

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0)
                                break;
                        got += (size_t) k;
                }
                total += (int64_t) got;
                if (total > cap)
                        return error_set(reterr, -EINVAL, "return_files are larger than %lld bytes", (long long) cap); /* NOLINT(clang-analyzer-unix.Malloc): data is cleanup_free, unseen by clang-analyzer 14 */
                e = json_object_new_object();
                if (!e || json_object_array_add(ret, e) < 0)
                        return -ENOMEM;
                if (json_object_object_add(e, "path", json_object_get(p)) < 0 || runner_add_b64(e, "content_b64", data, got) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Whether a request's list is there at all: most executions have no files to write or return, and
 * need not enter the sandbox's mount namespace for them. */
static bool present(struct json_object *list) {
        return list && !json_object_is_type(list, json_type_null);
}

/* The sandbox for this execution: the one made ahead, unless it is not this one's. Python that
 * imports what the data zygote holds runs in a sandbox of that zygote's, made now; the first such
 * execution of a machine imports the modules itself and has the data zygote started after it. A
 * sandbox made ready for another language (a started node), or one started ahead for an execution
 * that asks for network, is replaced by a fresh one. */
static int sandbox_choose(ExecServer *x, const char *language, struct json_object *code, bool egress) {
        Sandbox *c = &x->sandbox;
        Zygote *z = &x->runner->plain;
        int r;

        if (strcmp(language, "python") == 0 && x->data.config.preload[0] && !x->data.failed &&
            imports_preloaded(x->data.config.preload, json_object_get_string(code), (size_t) json_object_get_string_len(code))) {
                if (x->data.fd < 0)
                        x->data_wanted = true;
                else if (zygote_data_now(x))
                        z = &x->data;
        }
        /* A started node read its first line already: one that is to reach the network is made anew. */
        if (!(c->prepared && (strcmp(c->prepared, language) != 0 || egress)) && c->zygote == z)
                return 0;
        /* Made for this execution: started by run() as it asks (a node started ahead would have
         * neither its policy nor its network). */
        sandbox_done(c);
        r = sandbox_prepare(x, c, z, false);
        if (r < 0 && z == &x->data) {
                zygote_data_failed(x);
                r = sandbox_prepare(x, c, &x->runner->plain, false);
        }
        return r;
}

/* The sandbox's own counts where its cgroups have them, in place of its processes' resource usage:
 * the CPU time of every process of it (those it did not wait for too) over the execution, and the
 * peak of all the memory charged to it (page cache and tmpfs files included), not the largest
 * process's. */
static void usage_from_cgroup(const CgroupUsage *before, const CgroupUsage *after, ZygoteStatus *st) {
        if (after->has_cpu && before->has_cpu && after->cpu_usec >= before->cpu_usec)
                st->cpu_usec = after->cpu_usec - before->cpu_usec;
        if (after->has_memory)
                st->maxrss_bytes = after->memory_peak_bytes;
}

/* One execution in its sandbox, its request checked in full already: the reply. */
static int run(ExecServer *x, const RunnerRequest *rq, int *conn, struct json_object *reply, Error *reterr) {
        Sandbox *c = &x->sandbox;
        struct json_object *code = rq->code, *in = rq->stdin_text, *files = rq->files, *returned = rq->return_files;
        cleanup_free char *header = NULL;
        Output out = {.stream = rq->stream ? conn : NULL, .frame = STREAM_FRAME_STDOUT},
               err = {.stream = rq->stream ? conn : NULL, .frame = STREAM_FRAME_STDERR};
        int64_t cap = rq->output_cap, rcap = rq->return_cap;
        const char *language = rq->language, *policy = rq->policy;
        ZygoteStatus status = {};
        CgroupUsage before = {}, after = {};
        uint64_t start;
        int r;

        x->last_language = language;
        r = sandbox_choose(x, language, code, rq->egress);
        if (r < 0)
                return r;
        if (rq->egress) {
                r = egress_hand_over(x->runner, c, *conn, reterr);
                if (r < 0)
                        return r;
        } else
                closep(&c->egress); /* no port in its network namespace, before any of its code runs */
        if (present(files)) {
                r = sandbox_fs_enter(x->runner, c);
                if (r < 0)
                        return r;
                r = write_files(files, reterr);
                sandbox_fs_leave(x->runner);
                if (r < 0)
                        return r;
        }

        start = now_usec(CLOCK_MONOTONIC);
        /* What the sandbox used before (a node started ahead) is the machine's, not the request's. */
        if (c->cgroup)
                cgroup_sandbox_usage(c->cgroup, &before);
        if (asprintf(&header, "%d\n", json_object_get_string_len(code)) < 0)
                return -ENOMEM;
        /* A process gone already cannot take its code: its status says how. */
        if ((c->prepared || sandbox_start(c, language, policy, rq->egress) >= 0) && fd_write_all(c->code_w, header, strlen(header)) >= 0 &&
            fd_write_all(c->code_w, json_object_get_string(code), (size_t) json_object_get_string_len(code)) >= 0 && in)
                (void) fd_write_all(c->code_w, json_object_get_string(in), (size_t) json_object_get_string_len(in));
        closep(&c->code_w);

        /* status: as a shell has it, death by signal N reads 128 + N (the init encodes it). */
        r = collect(c, (size_t) cap, &out, &err, &status);
        if (r >= 0 && c->cgroup)
                cgroup_sandbox_usage(c->cgroup, &after);
        if (r >= 0) {
                struct json_object *list = json_object_new_array();

                usage_from_cgroup(&before, &after, &status);
                if (json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
                    json_object_object_add(reply, "exit_code", json_object_new_int(status.status)) < 0 ||
                    json_object_object_add(reply, "cpu_ms", json_object_new_int64((int64_t) (status.cpu_usec / 1000))) < 0 ||
                    /* Where the figures came from, for the records: the cgroup's, or the processes'. */
                    json_object_object_add(reply, "cpu_source", json_object_new_string(after.has_cpu && before.has_cpu ? "cgroup" : "rusage")) < 0 ||
                    json_object_object_add(reply, "memory_source", json_object_new_string(after.has_memory ? "cgroup" : "rusage")) < 0 ||
                    json_object_object_add(reply, "oom_kills", json_object_new_int64((int64_t) after.oom_kills)) < 0 ||
                    /* What the next sandbox is made ready for, if anything: the worker's next claim uses it. */
                    (next_prepared(x) && json_object_object_add(reply, "prepared", json_object_new_string(next_prepared(x))) < 0) ||
                    json_object_object_add(reply, "memory_peak_bytes", json_object_new_int64((int64_t) status.maxrss_bytes)) < 0 ||
                    runner_add_b64(reply, "stdout_b64", out.data, out.len) < 0 || runner_add_b64(reply, "stderr_b64", err.data, err.len) < 0 ||
                    json_object_object_add(reply, "stdout_truncated", json_object_new_boolean(out.cut)) < 0 ||
                    json_object_object_add(reply, "stderr_truncated", json_object_new_boolean(err.cut)) < 0 ||
                    json_object_object_add(reply, "duration_ms", json_object_new_int64((int64_t) ((now_usec(CLOCK_MONOTONIC) - start) / 1000))) < 0 ||
                    json_object_object_add(reply, "files", list) < 0)
                        r = -ENOMEM;
                else if (present(returned) && (r = sandbox_fs_enter(x->runner, c)) >= 0) {
                        r = return_files(returned, rcap, list, reterr);
                        sandbox_fs_leave(x->runner);
                }
        }
        free(out.data);
        free(err.data);
        return r;
}

/* The answer to one request's bytes on conn: its output as it comes if it is streamed, then the
 * reply, as JSON text (in a frame if streamed). -ENOMEM. */
static int answer(ExecServer *x, const char *data, size_t len, int *conn) {
        cleanup_json struct json_object *reply = json_object_new_object(), *req = NULL;
        RunnerRequest rq = {};
        Error error = {};
        cleanup_free char *text = NULL;
        int r;

        if (!reply)
                return -ENOMEM;
        r = runner_request_parse(data, len, &req, &rq, &error);
        if (r >= 0)
                r = run(x, &rq, conn, reply, &error);

        if (r < 0) {
                (void) json_object_put(reply);
                reply = json_object_new_object();
                if (!reply || json_object_object_add(reply, "status", json_object_new_int(400)) < 0 ||
                    json_object_object_add(reply, "error", json_object_new_string(error_message(&error, r))) < 0)
                        return -ENOMEM;
        }
        text = runner_reply_text(reply);
        if (!text)
                return -ENOMEM;
        if (rq.stream)
                runner_frame_send(conn, STREAM_FRAME_REPLY, text, strlen(text));
        else if (*conn >= 0)
                (void) fd_write_all(*conn, text, strlen(text));
        return 0;
}

int runner_exec_serve(Runner *r, const char *preload, uint64_t executions, Error *reterr) {
        ExecServer x = {.runner = r, .data = ZYGOTE_NULL, .last_language = "python", .sandbox = SANDBOX_NULL};
        int k;

        /* The data zygote: the plain one's configuration, and the modules. */
        x.data.config = r->plain.config;
        (void) snprintf(x.data.config.preload, sizeof(x.data.config.preload), "%s", preload);
        k = runner_zygote_start(r, &r->plain);
        if (k < 0)
                return error_set(reterr, k, "starting the zygote: %s", strerror(-k));
        k = sandbox_prepare(&x, &x.sandbox, &r->plain, true);
        if (k < 0)
                return error_set(reterr, k, "making the first sandbox: %s", strerror(-k));

        for (uint64_t served = 0;;) {
                cleanup_free char *data = NULL;
                cleanup_close int conn = -1;
                size_t len = 0;

                k = runner_next_request(&conn, &data, &len);
                if (k < 0)
                        return error_set(reterr, k, "accept: %s", strerror(-k));
                if (answer(&x, data, len, &conn) < 0)
                        return error_set(reterr, -ENOMEM, "reply: %s", strerror(ENOMEM));
                closep(&conn);
                sandbox_done(&x.sandbox);

                /* The machine retires after this many; until then, the next sandbox is made now,
                 * while the worker answers its client. */
                if (++served >= executions)
                        return 0;
                if (x.data_wanted && x.data.fd < 0 && !x.data.failed) {
                        k = runner_zygote_start(r, &x.data);
                        if (k < 0)
                                return error_set(reterr, k, "starting the zygote with %s imported: %s", preload, strerror(-k));
                }
                k = sandbox_prepare(&x, &x.sandbox, &r->plain, true);
                if (k < 0)
                        return error_set(reterr, k, "making a sandbox: %s", strerror(-k));
        }
}
