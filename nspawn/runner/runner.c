/* SPDX-License-Identifier: MIT */
/* sandboxd's runner: the first process inside a warm sandbox, PID 1 of its PID namespace.
 *
 * Standard input is a listening unix socket. Every connection is greeted with "ready\n"; one that
 * sends nothing (the pool's readiness probe) is closed and the next awaited; the first that sends a
 * request (then shuts down its write side) gets the reply, and the runner exits: a sandbox serves
 * one execution.
 *
 *   request: {"code", "stdin", "files": [{"path", "content_b64"}], "return_files": [path],
 *             "output_cap", "return_cap"}
 *   reply:   {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
 *             "stderr_truncated", "duration_ms", "files": [{"path", "content_b64"}]}
 *         or {"status": 400, "error": "..."} when the request is refused.
 *
 * The code runs with the semantics of `python3 -c CODE` in a fresh process: an interpreter started
 * as `python3 -c BOOTSTRAP` before the code arrives, so that an execution does not wait for one.
 * The runner itself is C, not Python: one interpreter per sandbox, not two.
 *
 * With --uid, nspawn starts it as root of the sandbox's user namespace holding CAP_SETUID,
 * CAP_SETGID and CAP_SETPCAP only; before it starts anything the runner becomes that UID, with no
 * capability left in any set, and with --seccomp installs the system-call filter compiled at build
 * time (seccomp-gen.c): nspawn then neither looks the user up nor compiles its own filter, which
 * cost it a process and a third of its CPU time for every sandbox.
 *
 * As init of the namespace it gets no signal from the code that it has no handler for (kill(-1)
 * spares it), and when it exits the kernel kills whatever the code left running. It reaps only
 * the code's process: other orphans stay zombies until the sandbox ends, moments later.
 *
 * The runner is not a security boundary: the kernel is (namespaces, no capabilities, cgroup
 * limits). It runs with the snippet's own UID; all it could spoil is its own sandbox's reply, which
 * the worker reads with a size cap and validates. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/b64.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/time-util.h"

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

/* What the code's process runs: a fresh interpreter started as `python3 -c BOOTSTRAP` (so argv,
 * sys.path, sys.flags and __main__ are those of `python3 -c CODE`), which waits for
 * "<length of code>\n<code><stdin>" on fd 3, makes the stdin bytes its fd 0, and runs the code with
 * exec() in __main__, at module level. From there on the interpreter itself does what it does for
 * `python3 -c`: uncaught exceptions, SystemExit and KeyboardInterrupt, joining threads, atexit,
 * flushing and closing files, finalizers, the exit status. The bootstrap keeps out of sight: its
 * function is gone from __main__ before the code runs, sys.orig_argv names the code, and the
 * excepthook it installs (while the code does not install its own) drops its two frames from
 * tracebacks. What is left: one frame above the code's (sys._getframe(1)). */
static char BOOTSTRAP[] =
        "\n"
        "def _sandboxd_begin():\n"
        "    import os, sys\n"
        "    del globals()[\"_sandboxd_begin\"]\n"
        "    mine = (sys._getframe(1).f_code, sys._getframe(0).f_code)\n"
        "\n"
        "    def excepthook(t, v, tb):\n"
        "        while tb is not None and tb.tb_frame.f_code in mine:\n"
        "            tb = tb.tb_next\n"
        "        if v is not None:\n"
        "            v.__traceback__ = tb\n"
        "        if getattr(sys, \"last_value\", None) is v:\n"
        "            sys.last_traceback = tb\n"
        "        sys.__excepthook__(t, v, tb)\n"
        "    # Not a function of __main__'s: its globals would keep __main__'s dict alive past the module's\n"
        "    # end, and what the code left there would never be finalized (__del__, generators, files).\n"
        "    sys.excepthook = type(excepthook)(excepthook.__code__, {\"__builtins__\": __builtins__}, None, None, excepthook.__closure__)\n"
        "\n"
        "    with os.fdopen(3, \"rb\") as f:\n"
        "        data = f.read()\n"
        "    if not data:\n"
        "        os._exit(0)\n"
        "    n, _, rest = data.partition(b\"\\n\")\n"
        "    src, stdin = rest[:int(n)], rest[int(n):]\n"
        "    fd = os.open(\"/tmp\", os.O_TMPFILE | os.O_RDWR, 0o600)\n"
        "    view = memoryview(stdin)\n"
        "    while view:\n"
        "        view = view[os.write(fd, view):]\n"
        "    os.lseek(fd, 0, os.SEEK_SET)\n"
        "    os.dup2(fd, 0)\n"
        "    os.close(fd)\n"
        "    text = src.decode(\"utf-8\", \"surrogateescape\")\n"
        "    sys.orig_argv[2:] = [text]\n"
        "    return compile(text, \"<string>\", \"exec\")\n"
        "exec(_sandboxd_begin())\n";

static char env_path[] = "PATH=/usr/local/bin:/usr/bin:/bin", env_home[] = "HOME=" WORKDIR, env_lang[] = "LANG=C.UTF-8",
            env_tmpdir[] = "TMPDIR=/tmp";
static char *const child_env[] = {env_path, env_home, env_lang, env_tmpdir, NULL};

typedef struct Child {
        pid_t pid;
        int code_w; /* its fd 3 */
        int out_r;
        int err_r;
} Child;

/* A refusal: the reply is {"status": 400, "error": message}. */
typedef struct Refusal {
        char message[512];
} Refusal;

__attribute__((format(printf, 2, 3))) static int refuse(Refusal *why, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(why->message, sizeof(why->message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static void die(const char *what) {
        (void) dprintf(STDERR_FILENO, "sandboxd-runner: %s: %s\n", what, strerror(errno));
        _exit(EXIT_FAILURE);
}

/* Starts the process that will run the code before the code arrives: starting an interpreter is
 * the slow part, so it happens while the sandbox waits. */
static void prefork(Child *c) {
        int code[2], out[2], err[2];
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        static char python[] = PYTHON, dash_c[] = "-c";
        char *const argv[] = {python, dash_c, BOOTSTRAP, NULL};

        if (pipe2(code, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                die("pipe");
        if (chdir(WORKDIR) < 0)
                die("chdir " WORKDIR);
        /* Same session and process group as the runner: as a program started from a shell, the code
         * may call setsid() itself. */
        if (posix_spawn_file_actions_init(&fa) != 0 || posix_spawnattr_init(&attr) != 0 ||
            posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
            posix_spawn_file_actions_adddup2(&fa, out[1], 1) != 0 || posix_spawn_file_actions_adddup2(&fa, err[1], 2) != 0 ||
            posix_spawn_file_actions_adddup2(&fa, code[0], 3) != 0)
                die("posix_spawn setup");
        errno = posix_spawn(&c->pid, PYTHON, &fa, &attr, argv, child_env);
        if (errno != 0)
                die("posix_spawn " PYTHON);
        (void) posix_spawn_file_actions_destroy(&fa);
        (void) posix_spawnattr_destroy(&attr);
        (void) close(code[0]);
        (void) close(out[1]);
        (void) close(err[1]);
        c->code_w = code[1];
        c->out_r = out[0];
        c->err_r = err[0];
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

static int write_files(struct json_object *files, Refusal *why) {
        size_t n;

        if (!files || json_object_is_type(files, json_type_null))
                return 0;
        if (!json_object_is_type(files, json_type_array))
                return refuse(why, "files must be a list");
        n = json_object_array_length(files);
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(files, i), *p = NULL, *c = NULL;
                cleanup_free uint8_t *content = NULL;
                cleanup_close int fd = -1;
                char target[8192];
                size_t len = 0;

                (void) json_object_object_get_ex(e, "path", &p);
                if (resolve(p, target, sizeof(target)) < 0)
                        return refuse(why, "file path escapes working directory: '%s'", path_text(p));
                if (json_object_object_get_ex(e, "content_b64", &c) && !json_object_is_type(c, json_type_string))
                        return refuse(why, "invalid base64 for '%s'", path_text(p));
                if (b64_decode(c ? json_object_get_string(c) : "", c ? (size_t) json_object_get_string_len(c) : 0, &content, &len) < 0)
                        return refuse(why, "invalid base64 for '%s'", path_text(p));
                make_parents(target);
                /* O_NOFOLLOW: nothing in a fresh tmpfs is a link, and nothing should become one. */
                fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 || fd_write_all(fd, content, len) < 0)
                        return refuse(why, "could not write '%s': %s", path_text(p), strerror(errno));
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
static int collect(const Child *c, size_t cap, Output *out, Output *err, int *ret_status) {
        cleanup_close int pidfd = (int) syscall(SYS_pidfd_open, c->pid, 0);
        cleanup_free char *buf = malloc(CHUNK);
        bool exited = false;

        out->data = malloc(cap + 1);
        err->data = malloc(cap + 1);
        if (!buf || !out->data || !err->data)
                return -ENOMEM;
        if (pidfd < 0)
                return -errno;
        out->open = err->open = true;
        (void) fcntl(c->out_r, F_SETFL, O_NONBLOCK);
        (void) fcntl(c->err_r, F_SETFL, O_NONBLOCK);

        while (!exited) {
                struct pollfd fds[] = {
                        {.fd = pidfd, .events = POLLIN},
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
        while (waitpid(c->pid, ret_status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/* Like a shell: death by signal N reads 128 + N. -1 is reserved for the timeout. */
static int exit_status(int status) {
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int add_b64(struct json_object *o, const char *key, const void *data, size_t len) {
        size_t n = 0;
        cleanup_free char *s = b64_encode(data, len, &n);

        if (!s)
                return -ENOMEM;
        return json_object_object_add(o, key, json_object_new_string_len(s, (int) n));
}

static int return_files(struct json_object *paths, int64_t cap, struct json_object *ret, Refusal *why) {
        int64_t total = 0;
        size_t n;

        if (!paths || json_object_is_type(paths, json_type_null))
                return 0;
        if (!json_object_is_type(paths, json_type_array))
                return refuse(why, "return_files must be a list");
        n = json_object_array_length(paths);
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(paths, i), *e;
                cleanup_free char *data = NULL;
                cleanup_close int fd = -1;
                char target[8192];
                struct stat st;
                size_t want, got = 0;

                if (resolve(p, target, sizeof(target)) < 0)
                        return refuse(why, "file path escapes working directory: '%s'", path_text(p));
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
                        return refuse(why, "return_files are larger than %lld bytes", (long long) cap);
                e = json_object_new_object();
                if (!e || json_object_array_add(ret, e) < 0)
                        return -ENOMEM;
                if (json_object_object_add(e, "path", json_object_get(p)) < 0 || add_b64(e, "content_b64", data, got) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int64_t get_int(struct json_object *req, const char *key, int64_t def) {
        struct json_object *v = NULL;

        return json_object_object_get_ex(req, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

/* One execution in the preforked child: the reply. */
static int run(struct json_object *req, Child *c, struct json_object *reply, Refusal *why) {
        struct json_object *code = NULL, *in = NULL, *files = NULL;
        cleanup_free char *header = NULL;
        Output out = {}, err = {};
        int64_t cap = get_int(req, "output_cap", 1 << 20), rcap = get_int(req, "return_cap", 8 << 20);
        uint64_t start;
        int status = 0, r;

        if (!json_object_is_type(req, json_type_object) || !json_object_object_get_ex(req, "code", &code) ||
            !json_object_is_type(code, json_type_string))
                return refuse(why, "request has no code");
        if (json_object_object_get_ex(req, "stdin", &in) && in && !json_object_is_type(in, json_type_string))
                return refuse(why, "stdin must be a string");
        if (cap < 0 || cap > (1LL << 30) || rcap < 0 || rcap > (1LL << 30))
                return refuse(why, "caps out of range");
        (void) json_object_object_get_ex(req, "files", &files);
        r = write_files(files, why);
        if (r < 0)
                return r;

        start = now_usec(CLOCK_MONOTONIC);
        if (asprintf(&header, "%d\n", json_object_get_string_len(code)) < 0)
                return -ENOMEM;
        /* A process gone already cannot take its code: its status says how. */
        if (fd_write_all(c->code_w, header, strlen(header)) >= 0 &&
            fd_write_all(c->code_w, json_object_get_string(code), (size_t) json_object_get_string_len(code)) >= 0 && in)
                (void) fd_write_all(c->code_w, json_object_get_string(in), (size_t) json_object_get_string_len(in));
        closep(&c->code_w);
        c->code_w = -1;

        r = collect(c, (size_t) cap, &out, &err, &status);
        if (r >= 0) {
                struct json_object *list = json_object_new_array();

                if (json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
                    json_object_object_add(reply, "exit_code", json_object_new_int(exit_status(status))) < 0 ||
                    add_b64(reply, "stdout_b64", out.data, out.len) < 0 || add_b64(reply, "stderr_b64", err.data, err.len) < 0 ||
                    json_object_object_add(reply, "stdout_truncated", json_object_new_boolean(out.cut)) < 0 ||
                    json_object_object_add(reply, "stderr_truncated", json_object_new_boolean(err.cut)) < 0 ||
                    json_object_object_add(reply, "duration_ms", json_object_new_int64((int64_t) ((now_usec(CLOCK_MONOTONIC) - start) / 1000))) < 0 ||
                    json_object_object_add(reply, "files", list) < 0)
                        r = -ENOMEM;
                else
                        r = return_files(json_object_object_get(req, "return_files"), rcap, list, why);
        }
        free(out.data);
        free(err.data);
        return r;
}

/* The reply to one request's bytes, as JSON text. */
static char *answer(const char *data, size_t len, Child *c) {
        cleanup_json struct json_object *reply = json_object_new_object();
        struct json_tokener *tok = json_tokener_new();
        struct json_object *req = NULL;
        Refusal why = {};
        const char *text;
        int r = -EINVAL;

        if (!reply || !tok)
                return NULL;
        req = json_tokener_parse_ex(tok, data, (int) len);
        if (!req || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
                (void) refuse(&why, "request is not JSON");
        } else
                r = run(req, c, reply, &why);
        json_tokener_free(tok);
        (void) json_object_put(req);

        if (r < 0) {
                (void) json_object_put(reply);
                reply = json_object_new_object();
                if (!reply || json_object_object_add(reply, "status", json_object_new_int(400)) < 0 ||
                    json_object_object_add(reply, "error", json_object_new_string(why.message[0] ? why.message : strerror(-r))) < 0)
                        return NULL;
        }
        text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return text ? strdup(text) : NULL;
}

static char *read_all(int fd, size_t *ret_len) {
        size_t len = 0, cap = CHUNK;
        char *buf = malloc(cap + 1);

        while (buf) {
                ssize_t n;

                if (len == cap) {
                        char *bigger = realloc(buf, cap * 2 + 1);

                        if (!bigger)
                                break;
                        buf = bigger;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        break;
                if (n == 0) {
                        buf[len] = 0;
                        *ret_len = len;
                        return buf;
                }
                len += (size_t) n;
        }
        free(buf);
        return NULL;
}

/* Every capability out of the bounding set, then the IDs: permitted and effective sets empty too. */
static void become(uid_t uid) {
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {};

        for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        die("dropping the capability bounding set");
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                die("clearing ambient capabilities");
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                die("changing to the sandbox user");
        /* The inheritable set too: nothing for a program with file capabilities to pick up. */
        if (syscall(SYS_capset, &h, d) < 0)
                die("clearing inheritable capabilities");
        if (syscall(SYS_capget, &h, d) < 0 || d[0].inheritable || d[1].inheritable)
                abort();
        if (getuid() != uid || geteuid() != uid || getgid() != uid || setresuid(0, 0, 0) == 0 ||
            syscall(SYS_capget, &h, d) < 0 || d[0].permitted || d[0].effective || d[1].permitted || d[1].effective ||
            prctl(PR_CAPBSET_READ, CAP_SETUID, 0, 0, 0) != 0)
                abort();
}

/* The filter seccomp-gen compiled: a raw struct sock_filter array. Fails closed. */
static void load_filter(const char *path) {
        /* One more than the kernel takes: a longer file is refused, not cut short. */
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        struct sock_fprog prog = {.filter = insns};
        size_t n = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                die(path);
        for (;;) {
                ssize_t k = read(fd, (char *) insns + n, sizeof(insns) - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        die(path);
                if (k == 0 || (n += (size_t) k) == sizeof(insns))
                        break;
        }
        (void) close(fd);
        if (n == 0 || n % sizeof(insns[0]) != 0 || n / sizeof(insns[0]) > BPF_MAXINSNS) {
                errno = EINVAL;
                die(path);
        }
        prog.len = (unsigned short) (n / sizeof(insns[0]));
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                die("installing the system-call filter");
}

int main(int argc, char **argv) {
        const char *filter = NULL;
        long uid = -1;
        Child child;

        for (int i = 2; i < argc; i++) {
                if (strncmp(argv[i], "--uid=", 6) == 0)
                        uid = strtol(argv[i] + 6, NULL, 10);
                else if (strncmp(argv[i], "--seccomp=", 10) == 0)
                        filter = argv[i] + 10;
                else
                        argc = 0;
        }
        if (argc < 2 || strcmp(argv[1], "--listen") != 0 || uid == 0 || uid > 65535) {
                (void) fprintf(stderr, "usage: sandboxd-runner --listen [--uid=UID] [--seccomp=FILTER]  (standard input: a listening unix socket)\n");
                return EXIT_FAILURE;
        }
        if (uid > 0)
                become((uid_t) uid);
        if (filter)
                load_filter(filter);
        /* Not dumpable: the code (same UID) cannot open /proc/<runner>/fd or ptrace the runner. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        prefork(&child);
        /* A client or a child gone is an error on write, not a signal. */
        (void) signal(SIGPIPE, SIG_IGN);

        for (;;) {
                cleanup_close int conn = accept4(STDIN_FILENO, NULL, NULL, SOCK_CLOEXEC);
                cleanup_free char *data = NULL, *reply = NULL;
                size_t len = 0;

                if (conn < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        die("accept");
                }
                if (fd_write_all(conn, "ready\n", 6) < 0)
                        continue;
                data = read_all(conn, &len);
                if (!data || len == 0)
                        continue;
                reply = answer(data, len, &child);
                if (!reply)
                        die("reply");
                (void) fd_write_all(conn, reply, strlen(reply));
                return EXIT_SUCCESS;
        }
}
