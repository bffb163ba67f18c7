/* SPDX-License-Identifier: MIT */
/* sandboxd's runner: the first process inside a machine, PID 1 of the machine's PID namespace.
 *
 * Standard input is a listening unix socket. Every connection is greeted with "ready\n"; one that
 * sends nothing (the pool's readiness probe) is closed and the next awaited; one that sends a
 * request (then shuts down its write side) gets the reply. A machine serves --executions of them,
 * one at a time, each in a sandbox of its own that is destroyed after it; then the runner exits and
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
 * The sandboxes come from the zygote (zygote.c), an interpreter the runner starts once as
 * `python3 -c ...` and that never runs user code: for each execution it forks a copy of itself into
 * new mount, PID, IPC, UTS and network namespaces with fresh filesystems, where the code runs as
 * the sandbox user with no capabilities, no_new_privs and the system-call filter compiled at build
 * time (seccomp-gen.c). The next sandbox is made as soon as an execution is answered, so that the
 * next one does not wait for it.
 *
 * nspawn starts the runner as root of the machine's user namespace with the capabilities that
 * making sandboxes takes there, and nothing else (nspawn-argv.c). It writes an execution's files
 * and reads back its returned files from inside the sandbox's mount namespace, with the sandbox
 * user's file-system identity. The code cannot see it (another PID namespace), signal it (another
 * UID) or trace it (not dumpable).
 *
 * With --session, the machine serves one session instead, until it is stopped: one long-lived
 * sandbox on the machine's /workspace (the session's disk), whose interpreters keep their state
 * between requests (session_serve() and what precedes it).
 *
 * The runner is not a security boundary: the kernel is (namespaces, no capabilities, cgroup
 * limits). All the code could spoil is its own sandbox's reply, which the worker reads with a size
 * cap and validates. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/b64.h"
#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/json-limits.h"
#include "lib/json-util.h"
#include "lib/language.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/time-util.h"
#include "nspawn/runner/cgroup.h"
#include "nspawn/runner/runner-request.h"
#include "nspawn/runner/session-files.h"
#include "nspawn/runner/zygote-proto.h"

DEFINE_JSON_CLEANUP

#define WORKDIR "/workspace"
#define PYTHON "/usr/bin/python3"
#define CHUNK (64U << 10)

#if defined(__SANITIZE_ADDRESS__)
/* Sanitized test builds: LeakSanitizer cannot stop the world here (no ptrace inside a sandbox). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "detect_leaks=0";
}
#endif

/* A snippet's environment, and LD_BIND_NOW for the zygote alone: every symbol bound before the first
 * fork, not once in every sandbox. The zygote drops it before the interpreter reads the environment.
 * matplotlib draws with Agg (no display). OpenBLAS starts no threads: the zygote's forks would not
 * have them (they skip the atfork handlers that OpenBLAS restarts its threads in), and a machine
 * has one CPU's quota by default. --setenv adds the operator's (OPENBLAS_CORETYPE). */
#define ENV_MAX 16
static char *zygote_env[ENV_MAX + 1] = {
        (char *) "PATH=/usr/local/bin:/usr/bin:/bin",
        (char *) "HOME=" WORKDIR,
        (char *) "LANG=C.UTF-8",
        (char *) "TMPDIR=/tmp",
        (char *) "MPLBACKEND=Agg",
        (char *) "OPENBLAS_NUM_THREADS=1",
        (char *) "OMP_NUM_THREADS=1",
        (char *) "LD_BIND_NOW=1",
};

/* A zygote (zygote.c): an initialised interpreter that forks sandboxes. Every machine has the plain
 * one, started with the machine; the data one has the --preload modules imported, and starts after
 * the first execution that imports one of them (most machines never need it: it costs their memory,
 * and forking a larger process costs every sandbox made from it). */
typedef struct Zygote {
        int fd; /* our end of its socket; -1: not started, or given up */
        bool ready;
        bool failed; /* the data one died or failed to start: the plain one serves in its place */
        ZygoteConfig config;
} Zygote;

static Zygote zygote_plain = {.fd = -1}, zygote_data = {.fd = -1};
static const char *arg_zygote_path;
static const void *arg_filter;
static size_t arg_filter_len;
static uid_t arg_uid = 1000;
static int arg_own_mnt = -1;

/* One sandbox, made before its execution arrives: its init (the zygote's child), our end of the
 * init's report socket (the code's status comes there), its mount namespace, and our ends of the
 * code process's pipes. */
typedef struct Sandbox {
        pid_t init;
        int report;
        int mnt;
        int code_w; /* the code process's fd 3 */
        int out_r;
        int err_r;
        /* The language whose first line went ahead of the request (a node that starts while the
         * machine waits), or NULL. */
        const char *prepared;
        Zygote *zygote;  /* where it came from */
        unsigned cgroup; /* its cgroups' number (cgroup.h); 0: it has none */
} Sandbox;

#define SANDBOX_NULL ((Sandbox){.init = -1, .report = -1, .mnt = -1, .code_w = -1, .out_r = -1, .err_r = -1})

/* Whether sandboxes get cgroups of their own (cgroup_setup()), and the last number given to one. */
static bool have_cgroups;
static unsigned last_cgroup;

/* The language of the last execution: the next sandbox is made ready for it (next_prepared()). */
static const char *last_language = "python";
/* An execution imported the data zygote's modules: it is started once that one is answered. */
static bool data_wanted;

static void die(const char *what) {
        (void) dprintf(STDERR_FILENO, "sandboxd-runner: %s: %s\n", what, strerror(errno));
        _exit(EXIT_FAILURE);
}

static void sandbox_done(Sandbox *sb) {
        closep(&sb->report);
        closep(&sb->mnt);
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
static const char *next_prepared(void) {
        return strcmp(last_language, "node") == 0 ? "node" : NULL;
}

/* The first line of the code's fd 3: what it is to become. */
static int sandbox_start(Sandbox *sb, const char *language, const char *policy) {
        char line[ZYGOTE_HEADER_MAX];

        (void) snprintf(line, sizeof(line), "%s %s\n", language, policy);
        sb->prepared = language;
        return fd_write_all(sb->code_w, line, strlen(line));
}

/* Starts a zygote: its interpreter initialises while the runner goes on; zygote_ready() waits for it. */
static void zygote_start(Zygote *z) {
        int sp[2];
        posix_spawn_file_actions_t fa;
        static char python[] = PYTHON, dash_c[] = "-c", command[] = ZYGOTE_COMMAND;
        char *const argv[] = {python, dash_c, command, NULL};
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                die("socketpair");
        /* Standard output is not a terminal when the interpreter starts, as for a snippet's. */
        if (posix_spawn_file_actions_init(&fa) != 0 || posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
            posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) != 0 ||
            posix_spawn_file_actions_adddup2(&fa, sp[1], ZYGOTE_FD) != 0)
                die("posix_spawn setup");
        errno = posix_spawn(&pid, arg_zygote_path, &fa, NULL, argv, zygote_env);
        if (errno != 0)
                die(arg_zygote_path);
        (void) posix_spawn_file_actions_destroy(&fa);
        (void) close(sp[1]);
        z->fd = sp[0];
        if (fd_send_one(z->fd, &z->config, sizeof(z->config), -1, 0) < 0 || fd_send_one(z->fd, arg_filter, arg_filter_len, -1, 0) < 0)
                die("starting the zygote");
}

static void zygote_data_failed(void) {
        (void) dprintf(STDERR_FILENO, "sandboxd-runner: the zygote with %s imported ended; the plain one serves in its place\n",
                       zygote_data.config.preload);
        closep(&zygote_data.fd);
        zygote_data.failed = true;
}

/* Waits until zygote z is ready: 0, or -EPROTO if it died first. */
static int zygote_ready(Zygote *z) {
        ZygoteReply ready = {.pid = -1};

        if (z->ready)
                return 0;
        if (z->fd < 0 || fd_receive_one(z->fd, &ready, sizeof(ready), 0, NULL) != (ssize_t) sizeof(ready) || ready.pid != 0)
                return -EPROTO;
        z->ready = true;
        return 0;
}

/* The data zygote, if it can fork a sandbox right now: an execution never waits for its import
 * (the plain zygote serves that one), nor fails for it (one that died is given up, and said). */
static Zygote *zygote_data_now(void) {
        struct pollfd p = {.fd = zygote_data.fd, .events = POLLIN};

        if (zygote_data.failed || zygote_data.fd < 0)
                return NULL;
        if (!zygote_data.ready && (poll(&p, 1, 0) <= 0 || zygote_ready(&zygote_data) < 0)) {
                if (p.revents == 0)
                        return NULL; /* still importing */
                zygote_data_failed();
                return NULL;
        }
        return &zygote_data;
}

/* Whether python code imports one of the data zygote's modules: "import M" or "from M", M whole. A
 * guess that only decides where the sandbox comes from; code it misses imports the module itself. */
static bool imports_preloaded(const char *code, size_t len) {
        char list[sizeof(zygote_data.config.preload)], *save = NULL;

        memcpy(list, zygote_data.config.preload, sizeof(list));
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

/* Asks zygote z for a sandbox: the request's descriptors (first ZygoteFork names the kind), then
 * the cgroup.procs of the sandbox's new cgroups, if sandboxes have them. The new cgroups' number
 * in *ret_cgroup (0: none); the caller removes them. */
static int zygote_fork(Zygote *z, uint32_t kind, const int *fds, size_t n_fds, unsigned *ret_cgroup) {
        int cg[CGROUP_FDS_MAX] = {-1, -1};
        ZygoteFork req = {.magic = ZYGOTE_MAGIC, .kind = kind};
        unsigned n_cg = 0;
        int r;

        *ret_cgroup = 0;
        /* A sandbox without cgroups is counted by its processes' resource usage instead. */
        if (have_cgroups && cgroup_sandbox_make(++last_cgroup, cg, &n_cg) >= 0)
                *ret_cgroup = last_cgroup;
        req.cgroups = n_cg;
        r = zygote_ready(z);
        for (size_t i = 0; r >= 0 && i < n_fds; i++)
                r = fd_send_one(z->fd, &req, sizeof(req), fds[i], 0);
        for (unsigned i = 0; r >= 0 && i < n_cg; i++)
                r = fd_send_one(z->fd, &req, sizeof(req), cg[i], 0);
        for (unsigned i = 0; i < n_cg; i++)
                closep(&cg[i]);
        return r;
}

/* The next sandbox, from zygote z: made ahead, so that an execution does not wait for it. */
static int sandbox_prepare(Sandbox *ret, Zygote *z) {
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

                r = zygote_fork(z, ZYGOTE_EXECUTION, fds, ELEMENTSOF(fds), &sb.cgroup);
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
        /* The init's first word: its filesystems are made, and here is its mount namespace. */
        if (r >= 0 && (fd_receive_one(sb.report, &hello, sizeof(hello), 0, &sb.mnt) != (ssize_t) sizeof(hello) || hello != 0 || sb.mnt < 0))
                r = -EPROTO;
        if (r < 0) {
                sandbox_done(&sb);
                return r;
        }
        if (next_prepared())
                (void) sandbox_start(&sb, next_prepared(), "none");
        *ret = sb;
        return 0;
}

/* The runner works on the sandbox's files from inside its mount namespace, with the sandbox user's
 * file-system identity: what the code left there (links included) gets no more than the code had. */
static int sandbox_fs_enter(const Sandbox *sb) {
        if (setns(sb->mnt, CLONE_NEWNS) < 0)
                return -errno;
        (void) setfsgid(arg_uid);
        (void) setfsuid(arg_uid);
        return 0;
}

static void sandbox_fs_leave(void) {
        (void) setfsuid(0);
        (void) setfsgid(0);
        if (setns(arg_own_mnt, CLONE_NEWNS) < 0)
                die("returning to the machine's mount namespace");
}

/* The absolute path of a client path into ret, or -EINVAL if it climbs out of the working directory
 * (or is empty, absolute, or holds a NUL): the check the workers made before, made again. */
static int resolve(struct json_object *p, char *ret, size_t size) {
        size_t len = strlen(WORKDIR "/");

        if (!json_object_is_type(p, json_type_string) || size <= len)
                return -EINVAL;
        memcpy(ret, WORKDIR "/", len);
        if (path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), ret + len, size - len) < 0)
                return -EINVAL;
        return 0;
}

static const char *path_text(struct json_object *p) {
        return json_object_is_type(p, json_type_string) ? json_object_get_string(p) : json_object_to_json_string(p);
}

/* mkdir -p of the directories above path (inside WORKDIR, which exists). */
static void make_parents(char *path) {
        for (char *p = path + strlen(WORKDIR) + 1; (p = strchr(p, '/')); p++) {
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

typedef struct Output {
        char *data;
        size_t len;
        bool cut;
        bool open;
} Output;

/* Reads one chunk of fd into o (at most cap kept); false once nothing is left right now. */
static bool drain(int fd, Output *o, size_t cap, char *buf) {
        ssize_t n = read(fd, buf, CHUNK);
        size_t room;

        if (n < 0)
                return false; /* EAGAIN: empty for now */
        if (n == 0) {
                o->open = false;
                return false;
        }
        room = cap > o->len ? cap - o->len : 0;
        if ((size_t) n > room)
                o->cut = true;
        if (room > 0) {
                size_t take = (size_t) n < room ? (size_t) n : room;

                memcpy(o->data + o->len, buf, take);
                o->len += take;
        }
        return true;
}

/* Reads the child's stdout and stderr until it exits. A background process that keeps the pipes
 * open must not keep the reply waiting: once the child is gone, only what is already in the pipes
 * is read. */
static int collect(Sandbox *c, size_t cap, Output *out, Output *err, ZygoteStatus *ret_status) {
        cleanup_free char *buf = malloc(CHUNK);
        bool exited = false;
        ZygoteStatus st = {};

        out->data = malloc(cap + 1);
        err->data = malloc(cap + 1);
        if (!buf || !out->data || !err->data)
                return -ENOMEM;
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
                        (void) drain(c->out_r, out, cap, buf);
                if (fds[2].revents)
                        (void) drain(c->err_r, err, cap, buf);
        }
        while (out->open && drain(c->out_r, out, cap, buf))
                ;
        while (err->open && drain(c->err_r, err, cap, buf))
                ;
        /* The code's status, from its init (which exits and takes the rest of the sandbox with it);
         * nothing means the init itself died. */
        if (fd_receive_one(c->report, &st, sizeof(st), 0, NULL) != (ssize_t) sizeof(st))
                return -ECHILD;
        c->init = -1;
        *ret_status = st;
        return 0;
}

static int add_b64(struct json_object *o, const char *key, const void *data, size_t len) {
        size_t n = 0;
        cleanup_free char *s = b64_encode(data, len, &n);

        if (!s)
                return -ENOMEM;
        return json_object_object_add(o, key, json_object_new_string_len(s, (int) n));
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
                        return error_set(reterr, -EINVAL, "return_files are larger than %lld bytes", (long long) cap);
                e = json_object_new_object();
                if (!e || json_object_array_add(ret, e) < 0)
                        return -ENOMEM;
                if (json_object_object_add(e, "path", json_object_get(p)) < 0 || add_b64(e, "content_b64", data, got) < 0)
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
 * sandbox made ready for another language (a started node) is replaced by a fresh one. */
static int sandbox_choose(Sandbox *c, const char *language, struct json_object *code) {
        Zygote *z = &zygote_plain;
        int r;

        if (strcmp(language, "python") == 0 && zygote_data.config.preload[0] && !zygote_data.failed &&
            imports_preloaded(json_object_get_string(code), (size_t) json_object_get_string_len(code))) {
                if (zygote_data.fd < 0)
                        data_wanted = true;
                else if (zygote_data_now())
                        z = &zygote_data;
        }
        if (!(c->prepared && strcmp(c->prepared, language) != 0) && c->zygote == z)
                return 0;
        sandbox_done(c);
        r = sandbox_prepare(c, z);
        if (r < 0 && z == &zygote_data) {
                zygote_data_failed();
                r = sandbox_prepare(c, &zygote_plain);
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
static int run(const RunnerRequest *rq, Sandbox *c, struct json_object *reply, Error *reterr) {
        struct json_object *code = rq->code, *in = rq->stdin_text, *files = rq->files, *returned = rq->return_files;
        cleanup_free char *header = NULL;
        Output out = {}, err = {};
        int64_t cap = rq->output_cap, rcap = rq->return_cap;
        const char *language = rq->language, *policy = rq->policy;
        ZygoteStatus status = {};
        CgroupUsage before = {}, after = {};
        uint64_t start;
        int r;

        last_language = language;
        r = sandbox_choose(c, language, code);
        if (r < 0)
                return r;
        if (present(files)) {
                r = sandbox_fs_enter(c);
                if (r < 0)
                        return r;
                r = write_files(files, reterr);
                sandbox_fs_leave();
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
        if ((c->prepared || sandbox_start(c, language, policy) >= 0) && fd_write_all(c->code_w, header, strlen(header)) >= 0 &&
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
                    (next_prepared() && json_object_object_add(reply, "prepared", json_object_new_string(next_prepared())) < 0) ||
                    json_object_object_add(reply, "memory_peak_bytes", json_object_new_int64((int64_t) status.maxrss_bytes)) < 0 ||
                    add_b64(reply, "stdout_b64", out.data, out.len) < 0 || add_b64(reply, "stderr_b64", err.data, err.len) < 0 ||
                    json_object_object_add(reply, "stdout_truncated", json_object_new_boolean(out.cut)) < 0 ||
                    json_object_object_add(reply, "stderr_truncated", json_object_new_boolean(err.cut)) < 0 ||
                    json_object_object_add(reply, "duration_ms", json_object_new_int64((int64_t) ((now_usec(CLOCK_MONOTONIC) - start) / 1000))) < 0 ||
                    json_object_object_add(reply, "files", list) < 0)
                        r = -ENOMEM;
                else if (present(returned) && (r = sandbox_fs_enter(c)) >= 0) {
                        r = return_files(returned, rcap, list, reterr);
                        sandbox_fs_leave();
                }
        }
        free(out.data);
        free(err.data);
        return r;
}

/* The reply to one request's bytes, as JSON text. */
static char *answer(const char *data, size_t len, Sandbox *c) {
        cleanup_json struct json_object *reply = json_object_new_object(), *req = NULL;
        RunnerRequest rq;
        Error error = {};
        const char *text;
        int r;

        if (!reply)
                return NULL;
        r = runner_request_parse(data, len, &req, &rq, &error);
        if (r >= 0)
                r = run(&rq, c, reply, &error);

        if (r < 0) {
                (void) json_object_put(reply);
                reply = json_object_new_object();
                if (!reply || json_object_object_add(reply, "status", json_object_new_int(400)) < 0 ||
                    json_object_object_add(reply, "error", json_object_new_string(error_message(&error, r))) < 0)
                        return NULL;
        }
        text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return text ? strdup(text) : NULL;
}

/* The filter seccomp-gen compiled, a raw struct sock_filter array, for the zygote to install in
 * every code process. Fails closed. */
static size_t read_filter(const char *path, struct sock_filter *insns, size_t max) {
        size_t n = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                die(path);
        for (;;) {
                ssize_t k = read(fd, (char *) insns + n, max * sizeof(insns[0]) - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        die(path);
                if (k == 0 || (n += (size_t) k) == max * sizeof(insns[0]))
                        break;
        }
        (void) close(fd);
        /* One more than the kernel takes fits: a longer file is refused, not cut short. */
        if (n == 0 || n % sizeof(insns[0]) != 0 || n / sizeof(insns[0]) >= max) {
                errno = EINVAL;
                die(path);
        }
        return n;
}

/* The machine's own filter (seccomp-gen --machine) on the runner, before it starts anything: the
 * zygote, every sandbox's init and every code process inherit it, and a code process adds the
 * code's narrower one. The runner is root of the machine's user namespace, with CAP_SYS_ADMIN there,
 * but no_new_privs first all the same: nothing it starts gains privileges by exec. */
static void confine_machine(const char *path) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        struct sock_fprog prog = {.filter = insns};

        prog.len = (unsigned short) (read_filter(path, insns, ELEMENTSOF(insns)) / sizeof(insns[0]));
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                die("installing the machine's system-call filter");
}

/* --session: one long-lived sandbox on the machine's /workspace, the session's disk (zygote-proto.h),
 * whose interpreters keep their state from one run to the next, until the machine is stopped. One
 * request per connection:
 *   {"op": "run", "language", "code", "timeout_ms", "output_cap"}, {"op": "exec", "command", ...}
 *       -> {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
 *           "stderr_truncated", "duration_ms", "cpu_ms", "memory_peak_bytes", "termination",
 *           "state_reset"}
 *   {"op": "put", "path"} followed by the file's bytes, {"op": "get", "path"}, {"op": "list", "dir"},
 *   {"op": "delete", "path"} (session-files.c); a successful get's reply is followed by "\n" and
 *   the bytes.
 *   {"op": "usage"} -> {"status": 200, "cpu_ms", "cpu_source"}: CPU no op reported yet.
 * A run's or an exec's cpu_ms is all the sandbox's cgroup used since the previous op reported: its
 * background processes between runs included. */

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
static void kill_as_sandbox_user(pid_t pid) {
        if (setresuid((uid_t) -1, arg_uid, (uid_t) -1) < 0)
                return;
        (void) kill(pid, SIGKILL);
        if (setresuid((uid_t) -1, 0, (uid_t) -1) < 0)
                die("returning to UID 0");
}

/* The session sandbox and all its processes gone: the interpreters that ran lost their state. */
static void session_kill(Session *s) {
        if (s->init > 0)
                kill_as_sandbox_user(s->init);
        s->init = -1;
        closep(&s->control);
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
        int sp[2] = {-1, -1}, mnt = -1;
        ZygoteReply rep = {.pid = -EPROTO};
        int32_t hello = -1;
        int r = 0;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                r = -errno;
        if (r >= 0)
                r = zygote_fork(&zygote_plain, ZYGOTE_SESSION, &sp[1], 1, &s->cgroup);
        closep(&sp[1]);
        if (r >= 0 && fd_receive_one(zygote_plain.fd, &rep, sizeof(rep), 0, NULL) != (ssize_t) sizeof(rep))
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
        if (fd_receive_one(s->control, &hello, sizeof(hello), 0, &mnt) != (ssize_t) sizeof(hello) || hello != 0) {
                session_kill(s);
                return -EPROTO;
        }
        closep(&mnt);
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

/* The PID in the machine's namespace of the init's child that is inner in the sandbox's: its
 * /proc/<pid>/stat and status are readable from here. -1 if not found. */
static pid_t outer_pid(pid_t init, pid_t inner) {
        char path[64], line[256];
        cleanup_free char *children = NULL;
        size_t len = 0;
        FILE *f;
        pid_t found = -1;

        (void) snprintf(path, sizeof(path), "/proc/%d/task/%d/children", init, init);
        f = fopen(path, "re");
        if (!f)
                return -1;
        if (getline(&children, &len, f) < 0) {
                (void) fclose(f);
                return -1;
        }
        (void) fclose(f);
        for (char *save = NULL, *w = strtok_r(children, " \n", &save); w && found < 0; w = strtok_r(NULL, " \n", &save)) {
                (void) snprintf(path, sizeof(path), "/proc/%s/status", w);
                f = fopen(path, "re");
                while (f && fgets(line, sizeof(line), f))
                        if (strncmp(line, "NSpid:", 6) == 0) {
                                const char *last = strrchr(line, '\t');

                                if (last && atoi(last + 1) == inner)
                                        found = atoi(w);
                                break;
                        }
                if (f)
                        (void) fclose(f);
        }
        return found;
}

/* The CPU time process pid used, with what it waited for (utime + stime + cutime + cstime of
 * /proc/<pid>/stat), in microseconds; -1 if unknown. */
static int64_t process_cpu_usec(pid_t pid) {
        char path[64], buf[1024];
        unsigned long long t[4];
        const char *p;
        ssize_t n;
        int fd;

        if (pid <= 0)
                return -1;
        (void) snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        (void) close(fd);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        /* After the command's ")": state is field 3, utime..cstime are fields 14 to 17. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &t[0], &t[1], &t[2], &t[3]) != 4)
                return -1;
        return (int64_t) ((t[0] + t[1] + t[2] + t[3]) * (USEC_PER_SEC / (uint64_t) sysconf(_SC_CLK_TCK)));
}

/* The largest resident set of process pid so far (VmHWM): an interpreter's, since it started. */
static int64_t process_peak_bytes(pid_t pid) {
        char path[64], line[256];
        long long kb = -1;
        FILE *f;

        if (pid <= 0)
                return 0;
        (void) snprintf(path, sizeof(path), "/proc/%d/status", pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
                        break;
        if (f)
                (void) fclose(f);
        return kb > 0 ? kb * 1024 : 0;
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
        p->pid = outer_pid(s->init, ev.pid);
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
        cleanup_free char *buf = malloc(CHUNK);
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
                };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r, status;

                if (now >= deadline) {
                        ret->termination = "timeout";
                        ret->exit_code = -1;
                        ret->sandbox_lost = true;
                        return 0;
                }
                r = poll(fds, ELEMENTSOF(fds), (int) ((deadline - now + 999) / 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r <= 0)
                        continue;
                if (fds[2].revents)
                        (void) drain(p->out_r, out, cap, buf);
                if (fds[3].revents)
                        (void) drain(p->err_r, err, cap, buf);
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
static int session_process_for(Session *s, int language, Process **ret, bool *ret_reset) {
        static const char *const headers[SESSION_LANGUAGES] = {"session-python none\n", "session-node none\n", "session-bash none\n"};
        Process *p = language < 0 ? &s->exec : &s->interpreter[language];
        int r;

        *ret = p;
        if (language < 0) {
                process_done(p);
                return session_spawn(s, p, "exec none\n");
        }
        *ret_reset = s->lost[language];
        s->lost[language] = false;
        if (p->id)
                return 0;
        r = session_spawn(s, p, headers[language]);
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
        o->cpu_usec = process_cpu_usec(p->pid);
        o->cpu_usec = o->cpu_usec >= 0 && cpu_before >= 0 && o->cpu_usec >= cpu_before ? o->cpu_usec - cpu_before : 0;
        o->peak_bytes = process_peak_bytes(p->pid);
}

static int session_reply(struct json_object *reply, const Outcome *o, const Output *out, const Output *err, uint64_t start) {
        uint64_t took = now_usec(CLOCK_MONOTONIC) - start;

        if (json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
            json_object_object_add(reply, "exit_code", json_object_new_int(o->exit_code)) < 0 ||
            add_b64(reply, "stdout_b64", out->data, out->len) < 0 || add_b64(reply, "stderr_b64", err->data, err->len) < 0 ||
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
        while (out->open && p->out_r >= 0 && drain(p->out_r, out, cap, buf))
                ;
        while (err->open && p->err_r >= 0 && drain(p->err_r, err, cap, buf))
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

/* A run or an exec: the reply. */
static int session_execute(Session *s, struct json_object *req, bool exec, struct json_object *reply, Error *reterr) {
        struct json_object *code = NULL;
        int64_t cap = json_int(req, "output_cap", 1 << 20), timeout = json_int(req, "timeout_ms", 30000), cpu_before;
        const char *language = exec ? NULL : json_word(req, "language", language_names);
        cleanup_free char *buf = malloc(CHUNK);
        Output out = {.open = true}, err = {.open = true}, junk = {.open = true};
        Outcome o = {.exit_code = -1};
        CgroupUsage before = {}, after = {};
        bool peak_reset = false;
        int index = -1;
        uint64_t start;
        Process *p;
        int r;

        if (!json_object_object_get_ex(req, exec ? "command" : "code", &code) || !json_object_is_type(code, json_type_string))
                return error_set(reterr, -EINVAL, exec ? "request has no command" : "request has no code");
        if (!exec && !language)
                return error_set(reterr, -EINVAL, "unknown language");
        if (cap < 0 || cap > (1LL << 30) || timeout <= 0 || timeout > 24LL * 3600 * 1000)
                return error_set(reterr, -EINVAL, "output_cap or timeout_ms out of range");
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
        if (r >= 0)
                r = session_process_for(s, index, &p, &o.state_reset);
        if (r >= 0) {
                /* What an interpreter wrote between ops (a thread, a timer, a background job) is no
                 * op's. */
                session_drain(p, 0, &junk, &junk, buf);
                cpu_before = process_cpu_usec(p->pid);
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

/* A file op, as the sandbox user, on the machine's /workspace: the session sandbox's, the same. */
static int session_file_op(const char *op, struct json_object *req, const char *content, size_t len, struct json_object *reply,
                           char **ret_body, size_t *ret_body_len, Error *reterr) {
        int ws, r;

        (void) setfsgid(arg_uid);
        (void) setfsuid(arg_uid);
        ws = open(WORKDIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ws < 0)
                r = -errno;
        else
                r = session_files(ws, op, req, content, len, reply, ret_body, ret_body_len, reterr);
        closep(&ws);
        (void) setfsuid(0);
        (void) setfsgid(0);
        return r;
}

/* The next request on the listening socket (stdin): a connection greeted, and all it sent until it
 * shut down its write side, into *ret_conn and the returned buffer (*ret_len bytes). A connection
 * that sends nothing (the pool's readiness probe) or goes away is closed, and the next awaited. */
static char *next_request(int *ret_conn, size_t *ret_len) {
        for (;;) {
                cleanup_close int conn = accept4(STDIN_FILENO, NULL, NULL, SOCK_CLOEXEC);
                char *data = NULL;

                if (conn < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        die("accept");
                }
                if (fd_write_all(conn, "ready\n", 6) < 0)
                        continue;
                /* What the worker sends until it shuts down its side; nothing at all is a probe. */
                if (fd_read_all(conn, SIZE_MAX, -1, &data, ret_len) < 0 || *ret_len == 0) {
                        free(data);
                        continue;
                }
                *ret_conn = TAKE_FD(conn);
                return data;
        }
}

/* The reply to one request's bytes, as JSON text; a get's file in *ret_body. */
static char *session_answer(const char *data, size_t len, Session *s, char **ret_body, size_t *ret_body_len) {
        static const char *const ops[] = {"run", "exec", "put", "get", "list", "delete", "usage", NULL};
        cleanup_json struct json_object *reply = json_object_new_object();
        struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
        struct json_object *req = NULL;
        const char *op = NULL, *text, *nl;
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
        if (!json_object_is_type(req, json_type_object))
                (void) error_set(&error, -EINVAL, "request is not JSON");
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
                r = session_file_op(op, req, data + end, len - end, reply, ret_body, ret_body_len, &error);
        (void) json_object_put(req);

        if (r < 0) {
                /* The request's fault, unless the runner failed (a sandbox it could not make). */
                int status = r == -EINVAL ? 400 : 500;

                if (error.status)
                        status = error.status;
                free(*ret_body);
                *ret_body = NULL;
                (void) json_object_put(reply);
                reply = json_object_new_object();
                if (!reply || json_object_object_add(reply, "status", json_object_new_int(status)) < 0 ||
                    json_object_object_add(reply, "error", json_object_new_string(error_message(&error, r))) < 0)
                        return NULL;
        }
        text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return text ? strdup(text) : NULL;
}

/* The session's disk is the sandbox user's: owned by it, or, where the runner may not give it away
 * (no CAP_CHOWN), open to it as a fresh workspace is, sticky and world-writable. Never emptied. */
static void workspace_own(void) {
        struct stat st;

        if (chown(WORKDIR, arg_uid, arg_uid) == 0)
                return;
        if (stat(WORKDIR, &st) < 0 || (st.st_uid != arg_uid && chmod(WORKDIR, 01777) < 0))
                die("giving " WORKDIR " to the sandbox user");
}

static _Noreturn void session_serve(void) {
        Session s = {.init = -1, .control = -1};

        for (size_t l = 0; l < SESSION_LANGUAGES; l++)
                s.interpreter[l] = PROCESS_NULL;
        s.exec = PROCESS_NULL;
        workspace_own();
        zygote_start(&zygote_plain);
        if (session_make(&s) < 0)
                die("making the session sandbox");

        for (;;) {
                cleanup_free char *reply = NULL, *body = NULL;
                cleanup_close int conn = -1;
                size_t len = 0, body_len = 0;
                cleanup_free char *data = next_request(&conn, &len);

                reply = session_answer(data, len, &s, &body, &body_len);
                if (!reply)
                        die("reply");
                if (fd_write_all(conn, reply, strlen(reply)) >= 0 && body)
                        (void) (fd_write_all(conn, "\n", 1) >= 0 && fd_write_all(conn, body, body_len) >= 0);
                closep(&conn);
                /* A sandbox that ended with the op (a timeout) is made again now, while the worker
                 * answers its client; failing that, at the next op. */
                if (s.init < 0)
                        (void) session_make(&s);
        }
}

static uint64_t parse_size(const char *s) {
        char *end = NULL;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        return errno || !end || *end || v == 0 ? 0 : (uint64_t) v;
}

/* Where the sandboxes mount their own filesystems must exist before the zygote makes the machine's
 * root read-only for them. */
static void make_mount_points(void) {
        const char *dirs[] = {"/var", "/var/tmp", WORKDIR, "/dev/shm", "/dev/mqueue"};

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST)
                        die(dirs[i]);
}

int main(int argc, char **argv) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        ZygoteConfig config = {.magic = ZYGOTE_MAGIC, .uid = 1000, .workspace_bytes = 128U << 20, .tmp_bytes = 64U << 20};
        char preload[sizeof(config.preload)] = "";
        const char *filter = NULL, *machine_filter = NULL;
        size_t n_env = 0;
        uint64_t executions = 1, served = 0;
        bool session = false;
        Sandbox sandbox = SANDBOX_NULL;
        int r;

        /* On the host, before a machine starts (cgroup.h). */
        if (argc == 2 && strncmp(argv[1], "--delegate=", 11) == 0) {
                uid_t uid = (uid_t) parse_size(argv[1] + 11);

                r = uid > 0 ? cgroup_delegate_v1(uid) : -EINVAL;
                if (r < 0)
                        (void) fprintf(stderr, "sandboxd-runner: handing the machine's memory cgroup over: %s\n", strerror(-r));
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        for (int i = 2; i < argc; i++) {
                if (strncmp(argv[i], "--uid=", 6) == 0)
                        config.uid = (uint32_t) parse_size(argv[i] + 6);
                else if (strncmp(argv[i], "--zygote=", 9) == 0)
                        arg_zygote_path = argv[i] + 9;
                else if (strncmp(argv[i], "--seccomp=", 10) == 0)
                        filter = argv[i] + 10;
                else if (strncmp(argv[i], "--machine-seccomp=", 18) == 0)
                        machine_filter = argv[i] + 18;
                else if (strncmp(argv[i], "--workspace-bytes=", 18) == 0)
                        config.workspace_bytes = parse_size(argv[i] + 18);
                else if (strncmp(argv[i], "--tmp-bytes=", 12) == 0)
                        config.tmp_bytes = parse_size(argv[i] + 12);
                else if (strcmp(argv[i], "--session") == 0)
                        session = true;
                else if (strncmp(argv[i], "--executions=", 13) == 0)
                        executions = parse_size(argv[i] + 13);
                else if (strncmp(argv[i], "--preload=", 10) == 0 && strlen(argv[i] + 10) < sizeof(preload))
                        strcpy(preload, argv[i] + 10);
                else if (strncmp(argv[i], "--import-allow=", 15) == 0 && strlen(argv[i] + 15) < sizeof(config.import_allow))
                        strcpy(config.import_allow, argv[i] + 15);
                else if (strncmp(argv[i], "--setenv=", 9) == 0 && argv[i][9] && argv[i][9] != '=' && strchr(argv[i] + 9, '=')) {
                        while (n_env < ENV_MAX && zygote_env[n_env])
                                n_env++;
                        if (n_env == ENV_MAX)
                                argc = 0;
                        else
                                zygote_env[n_env] = argv[i] + 9;
                } else
                        argc = 0;
        }
        if (argc < 2 || strcmp(argv[1], "--listen") != 0 || !filter || !machine_filter || !arg_zygote_path || arg_zygote_path[0] != '/' || config.uid == 0 || config.uid > 65535 ||
            config.workspace_bytes == 0 || config.tmp_bytes == 0 || executions == 0) {
                (void) fprintf(stderr, "usage: sandboxd-runner --listen --zygote=PATH --seccomp=FILTER --machine-seccomp=FILTER [--uid=UID] [--workspace-bytes=N] "
                                       "[--tmp-bytes=N] [--executions=N | --session] [--preload=MODULE,...] [--import-allow=FILE] "
                                       "[--setenv=NAME=VALUE]...  (standard input: a listening unix socket)\n");
                return EXIT_FAILURE;
        }
        arg_uid = config.uid;
        arg_filter_len = read_filter(filter, insns, ELEMENTSOF(insns));
        arg_filter = insns;
        confine_machine(machine_filter);
        /* Not dumpable: nothing in the machine but root may open /proc/<runner>/fd or trace it. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* A client or a child gone is an error on write, not a signal. */
        (void) signal(SIGPIPE, SIG_IGN);
        arg_own_mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (arg_own_mnt < 0)
                die("/proc/self/ns/mnt");
        make_mount_points();
        /* Before the first zygote: on a cgroup v2 host the runner may move into a leaf of its own. */
        have_cgroups = cgroup_setup();
        zygote_plain.config = zygote_data.config = config;
        if (session)
                session_serve();
        memcpy(zygote_data.config.preload, preload, sizeof(preload));
        zygote_start(&zygote_plain);
        if (sandbox_prepare(&sandbox, &zygote_plain) < 0)
                die("making the first sandbox");

        for (;;) {
                cleanup_free char *reply = NULL;
                cleanup_close int conn = -1;
                size_t len = 0;
                cleanup_free char *data = next_request(&conn, &len);

                reply = answer(data, len, &sandbox);
                if (!reply)
                        die("reply");
                (void) fd_write_all(conn, reply, strlen(reply));
                closep(&conn);
                sandbox_done(&sandbox);

                /* The machine retires after this many; until then, the next sandbox is made now,
                 * while the worker answers its client. */
                if (++served >= executions)
                        return EXIT_SUCCESS;
                if (data_wanted && zygote_data.fd < 0 && !zygote_data.failed)
                        zygote_start(&zygote_data);
                r = sandbox_prepare(&sandbox, &zygote_plain);
                if (r < 0) {
                        errno = -r;
                        die("making a sandbox");
                }
        }
}
