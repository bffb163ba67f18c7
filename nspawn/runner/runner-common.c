/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/b64.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/stream-frame.h"
#include "nspawn/runner-request.h"
#include "nspawn/runner/cgroup.h"
#include "nspawn/runner/runner-common.h"

#define PYTHON "/usr/bin/python3"

/* A snippet's environment, and LD_BIND_NOW for the zygote alone: every symbol bound before the first
 * fork, not once in every sandbox. The zygote drops it before the interpreter reads the environment.
 * matplotlib draws with Agg (no display). OpenBLAS starts no threads: the zygote's forks would not
 * have them (they skip the atfork handlers that OpenBLAS restarts its threads in), and a machine
 * has one CPU's quota by default. --setenv adds the operator's (OPENBLAS_CORETYPE). */
static const char *const default_env[] = {
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "HOME=" RUNNER_WORKDIR, /* NOLINT(bugprone-suspicious-missing-comma): one string on purpose */
        "LANG=C.UTF-8",
        "TMPDIR=/tmp",
        "MPLBACKEND=Agg",
        "OPENBLAS_NUM_THREADS=1",
        "OMP_NUM_THREADS=1",
        "LD_BIND_NOW=1",
};
_Static_assert(ELEMENTSOF(default_env) + RUNNER_SETENV_MAX == RUNNER_ENV_MAX, "room for every --setenv");

void runner_init(Runner *ret, const RunnerArgs *args, const void *filter, size_t filter_len) {
        Runner r = {
                .uid = args->uid,
                .zygote_path = args->zygote_path,
                .filter = filter,
                .filter_len = filter_len,
                .own_mnt = -1,
                .own_net = -1,
                .plain = ZYGOTE_NULL,
        };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(default_env); i++)
                r.env[n++] = (char *) default_env[i];
        for (size_t i = 0; i < args->n_setenv; i++)
                r.env[n++] = (char *) args->setenv[i];
        r.plain.config = (ZygoteConfig){
                .magic = ZYGOTE_MAGIC,
                .uid = args->uid,
                .workspace_bytes = args->workspace_bytes,
                .tmp_bytes = args->tmp_bytes,
        };
        _Static_assert(sizeof(r.plain.config.import_allow) == sizeof(args->import_allow), "the same room");
        memcpy(r.plain.config.import_allow, args->import_allow, sizeof(args->import_allow));
        *ret = r;
}

_Noreturn void runner_die(const char *what, int r) {
        (void) dprintf(STDERR_FILENO, "sandboxd-runner: %s: %s\n", what, strerror(r < 0 ? -r : r));
        _exit(EXIT_FAILURE);
}

static int spawn_zygote(Runner *r, int fd, pid_t *ret_pid) {
        static char python[] = PYTHON, dash_c[] = "-c", command[] = ZYGOTE_COMMAND;
        char *const argv[] = {python, dash_c, command, NULL};
        posix_spawn_file_actions_t fa;
        int e;

        if (posix_spawn_file_actions_init(&fa) != 0)
                return -ENOMEM;
        /* Standard output is not a terminal when the interpreter starts, as for a snippet's. */
        e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (e == 0)
                e = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        if (e == 0)
                e = posix_spawn_file_actions_adddup2(&fa, fd, ZYGOTE_FD);
        if (e == 0)
                e = posix_spawn(ret_pid, r->zygote_path, &fa, NULL, argv, r->env);
        (void) posix_spawn_file_actions_destroy(&fa);
        return -e;
}

int runner_zygote_start(Runner *r, Zygote *z) {
        int sp[2] = {-1, -1};
        pid_t pid;
        int k;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return -errno;
        k = spawn_zygote(r, sp[1], &pid);
        closep(&sp[1]);
        if (k < 0) {
                closep(&sp[0]);
                return k;
        }
        z->fd = sp[0];
        k = fd_send_one(z->fd, &z->config, sizeof(z->config), -1, 0);
        if (k >= 0)
                k = fd_send_one(z->fd, r->filter, r->filter_len, -1, 0);
        return k;
}

int runner_zygote_ready(Zygote *z) {
        ZygoteReply ready = {.pid = -1};

        if (z->ready)
                return 0;
        if (z->fd < 0 || fd_receive_one(z->fd, &ready, sizeof(ready), 0, NULL) != (ssize_t) sizeof(ready) || ready.pid != 0)
                return -EPROTO;
        z->ready = true;
        return 0;
}

int runner_zygote_fork(Runner *r, Zygote *z, uint32_t kind, const int *fds, size_t n_fds, unsigned *ret_cgroup) {
        int cg[CGROUP_FDS_MAX] = {-1, -1};
        ZygoteFork req = {.magic = ZYGOTE_MAGIC, .kind = kind};
        unsigned n_cg = 0;
        int k;

        *ret_cgroup = 0;
        /* A sandbox without cgroups is counted by its processes' resource usage instead. */
        if (r->have_cgroups && cgroup_sandbox_make(++r->last_cgroup, cg, &n_cg) >= 0)
                *ret_cgroup = r->last_cgroup;
        req.cgroups = n_cg;
        k = runner_zygote_ready(z);
        for (size_t i = 0; k >= 0 && i < n_fds; i++)
                k = fd_send_one(z->fd, &req, sizeof(req), fds[i], 0);
        for (unsigned i = 0; k >= 0 && i < n_cg; i++)
                k = fd_send_one(z->fd, &req, sizeof(req), cg[i], 0);
        for (unsigned i = 0; i < n_cg; i++)
                closep(&cg[i]);
        return k;
}

int runner_next_request(int *ret_conn, char **ret_data, size_t *ret_len) {
        for (;;) {
                cleanup_close int conn = accept4(STDIN_FILENO, NULL, NULL, SOCK_CLOEXEC);
                char *data = NULL;
                size_t len = 0;

                if (conn < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return -errno;
                }
                if (fd_write_all(conn, "ready\n", 6) < 0)
                        continue;
                /* What the worker sends until it shuts down its side; nothing at all is a probe. */
                if (fd_read_all(conn, SIZE_MAX, -1, &data, &len) < 0 || len == 0) {
                        free(data);
                        continue;
                }
                *ret_conn = TAKE_FD(conn);
                *ret_data = data;
                *ret_len = len;
                return 0;
        }
}

char *runner_reply_text(struct json_object *reply) {
        const char *text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

        return text ? strdup(text) : NULL;
}

bool runner_output_drain(int fd, Output *o, size_t cap, char *buf) {
        ssize_t n = read(fd, buf, RUNNER_CHUNK);
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
                if (o->stream)
                        runner_frame_send(o->stream, o->frame, buf, take);
        }
        return true;
}

void runner_frame_send(int *fd, char type, const void *data, size_t len) {
        char head[STREAM_FRAME_HEADER_MAX];
        struct iovec iov[2] = {{.iov_base = head}, {.iov_base = (void *) data, .iov_len = len}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = ELEMENTSOF(iov)};

        if (*fd < 0)
                return;
        iov[0].iov_len = stream_frame_header(type, len, head);
        /* The header and its data in one call: a frame is seldom split, and one that is, is finished
         * here, as the worker reads it whole. No SIGPIPE for a worker gone. */
        while (mh.msg_iovlen > 0) {
                ssize_t n = sendmsg(*fd, &mh, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        closep(fd);
                        return;
                }
                while (mh.msg_iovlen > 0 && (size_t) n >= mh.msg_iov->iov_len) {
                        n -= (ssize_t) mh.msg_iov->iov_len;
                        mh.msg_iov++;
                        mh.msg_iovlen--;
                }
                if (mh.msg_iovlen > 0) {
                        mh.msg_iov->iov_base = (char *) mh.msg_iov->iov_base + n;
                        mh.msg_iov->iov_len -= (size_t) n;
                }
        }
}

int runner_add_b64(struct json_object *reply, const char *key, const void *data, size_t len) {
        size_t n = 0;
        cleanup_free char *s = b64_encode(data, len, &n);

        if (!s)
                return -ENOMEM;
        return json_object_object_add(reply, key, json_object_new_string_len(s, (int) n));
}

int runner_egress_listen(const Runner *r, int netns, int *ret) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(RUNNER_EGRESS_PORT), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cleanup_close int fd = -1;
        int k = 0;

        if (setns(netns, CLONE_NEWNET) < 0)
                return -errno;
        /* Made in the namespace the thread is in, bound there; it stays there wherever it goes. */
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
                k = -errno;
        if (setns(r->own_net, CLONE_NEWNET) < 0)
                runner_die("returning to the machine's network namespace", -errno);
        if (k < 0)
                return k;
        *ret = TAKE_FD(fd);
        return 0;
}

int runner_egress_send(int conn, int listener) {
        char mark = RUNNER_EGRESS_MARK;

        return fd_send_one(conn, &mark, 1, listener, 0);
}
