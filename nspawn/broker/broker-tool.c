/* SPDX-License-Identifier: MIT */
/* A tool call (BROKER_RUN_TOOL): its sandbox runs for as long as the call takes, fed and followed by
 * a child of the broker with a bus connection of its own, so that the loop goes on serving meanwhile.
 * The child sends its reply to the broker, which passes it on once the child has exited. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "lib/config.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/broker/broker.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/unit-name.h"

static int read_input(int fd, char **ret, size_t *ret_len) {
        cleanup_free char *buf = NULL;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t) st.st_size > BROKER_INPUT_MAX)
                return -EBADF;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        if (fd_pread_exact(fd, buf, (size_t) st.st_size, 0) < 0)
                return -EBADF;
        buf[st.st_size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = (size_t) st.st_size;
        return 0;
}

/* Whether path, the image name's tree, is a tool image: a directory of its own (not a link, as
 * the runtime image's name is), not the runtime image, with the manifest sandboxd-image build
 * writes at its root (root's, outside what the tool's code can write), marked on its first line.
 * The worker checked the published copy first; this holds should that copy be stale or forged.
 * Any other tree of the store (machinectl's containers, the runtime's) is no image to a call. */
static bool tool_image(const Config *cfg, const char *name, const char *path) {
        static const char marker[] = "{\"sandboxd-tool-image\": 1,\n";
        char head[sizeof(marker) - 1], manifest[1100];
        cleanup_close int fd = -1;
        struct stat st;

        if (name[0] == '.' || strcmp(name, cfg->runtime_image) == 0 || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return false;
        if ((size_t) snprintf(manifest, sizeof(manifest), "%s/.sandboxd-tool.json", path) >= sizeof(manifest))
                return false;
        fd = open(manifest, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
                return false;
        return fd_pread_exact(fd, head, sizeof(head), 0) >= 0 && memcmp(head, marker, sizeof(head)) == 0;
}

/* In a child of the broker: the tool sandbox runs for as long as the call takes. */
static int run_tool(Broker *b, const BrokerRequest *req, int fd, BrokerReply *rep, int *ret_out, Error *err) {
        const Config *cfg = b->config;
        __attribute__((cleanup(sd_bus_flush_close_unrefp))) sd_bus *bus = NULL;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *input = NULL;
        cleanup_close int out = -1;
        SandboxResult res = {};
        char runner_bind[600], confine_bind[600], filter_bind[600], image[1024], python[1100];
        /* The image's interpreter, under the code's system-call filter from its first instruction. */
        const char *command[] = {TOOL_CONFINE_PATH, TOOL_FILTER_PATH, "/usr/bin/python3", "-I", TOOLRUNNER_PATH, NULL};
        const char *binds[] = {runner_bind, confine_bind, filter_bind, NULL};
        size_t input_len = 0;
        SandboxBase s;
        struct stat st;
        int r;

        r = read_input(fd, &input, &input_len);
        if (r < 0)
                return broker_fail(err, r, NULL);
        if ((size_t) snprintf(image, sizeof(image), "%s/%s", cfg->image_dir, req->image) >= sizeof(image) || !tool_image(cfg, req->image, image))
                return error_set(err, -ENOENT, "image '%s' not found in %s", req->image, cfg->image_dir);
        /* The tool runner is sandboxd's, but the interpreter must be the image's own. */
        if ((size_t) snprintf(python, sizeof(python), "%s/usr/bin/python3", image) >= sizeof(python) || lstat(python, &st) < 0)
                return error_set(err, -ENOEXEC, "image '%s' has no /usr/bin/python3", req->image);
        r = sandbox_base_machine(b, req->id, "REQUEST_ID", req->request_id, &s);
        if (r < 0)
                return broker_fail(err, r, NULL);
        if ((size_t) snprintf(runner_bind, sizeof(runner_bind), "%s/toolrunner.py:" TOOLRUNNER_PATH, cfg->lib_dir) >= sizeof(runner_bind))
                return error_set(err, -ENAMETOOLONG, "SANDBOXD_LIB_DIR is too long");
        (void) snprintf(confine_bind, sizeof(confine_bind), "%s/sandboxd-confine:" TOOL_CONFINE_PATH, cfg->lib_dir);
        (void) snprintf(filter_bind, sizeof(filter_bind), "%s/seccomp.bpf:" TOOL_FILTER_PATH, cfg->lib_dir);
        s.ns.user = "sandbox";
        s.ns.command = command;
        s.ns.image = image;
        s.ns.bind_ro = binds;
        s.spec.runtime_max_usec = (cfg->call_ready_timeout_s + req->timeout_s + 10) * USEC_PER_SEC;
        s.spec.max_reply_bytes = TOOL_MAX_REPLY_BYTES + strlen(TOOL_READY_MARKER);
        s.spec.ready_marker = TOOL_READY_MARKER;
        s.spec.ready_timeout_usec = cfg->call_ready_timeout_s * USEC_PER_SEC;
        s.spec.run_timeout_usec = req->timeout_s * USEC_PER_SEC;

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sandbox_run(bus, &s.spec, input, input_len, &res, &error);
        if (r < 0)
                return broker_fail(err, r, &error);

        out = memfd_create("sandboxd-tool-reply", MFD_CLOEXEC);
        if (out < 0)
                r = negative_errno();
        else
                r = fd_write_all(out, res.reply ? res.reply : "", res.reply_len);
        if (r >= 0)
                r = fd_write_all(out, res.diag ? res.diag : "", res.diag_len);
        if (r >= 0) {
                (void) snprintf(rep->result, sizeof(rep->result), "%s", res.result);
                rep->exit_code = res.exit_code;
                rep->exit_status = res.exit_status;
                rep->duration_usec = res.duration_usec;
                rep->cpu_usec = res.cpu_usec;
                rep->memory_peak_bytes = res.memory_peak_bytes;
                rep->reply_len = res.reply_len;
                rep->diag_len = res.diag_len;
                rep->reply_truncated = res.reply_truncated;
                rep->ready = res.ready;
                rep->killed_unready = res.killed_unready;
                rep->killed_timeout = res.killed_timeout;
                *ret_out = TAKE_FD(out);
        }
        sandbox_result_done(&res);
        return r < 0 ? broker_fail(err, r, NULL) : 0;
}

/* After a start that failed: the sandbox's range is given up once its unit is surely gone (its
 * ExecStopPost= did, if it ran); a unit still there keeps it until it ends. The child may wait. */
static void release_if_gone(Broker *b, const char *id) {
        __attribute__((cleanup(sd_bus_flush_close_unrefp))) sd_bus *bus = NULL;
        char unit[SANDBOX_ID_MAX + 16];

        (void) unit_name_from_id(id, unit, sizeof(unit));
        if (sd_bus_open_system(&bus) >= 0 && sandbox_wait_gone(bus, unit, 15 * USEC_PER_SEC) == 0)
                (void) uid_range_release(b->uid_dir_fd, id);
}

/* This process first, when its cgroup runs out of memory: what is lost is one call, not all. */
static void oom_first(void) {
        cleanup_close int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

        if (fd >= 0)
                (void) !write(fd, "1000", 4);
}

/* The child: whatever happens, one reply to the broker on fd, then the end. */
static _Noreturn void tool_child(Request *q, int fd) {
        Broker *b = q->broker;
        cleanup_close int out = -1;
        int r;

        broker_close_for_child(b);
        (void) sigprocmask(SIG_UNBLOCK, &b->signal_mask, NULL);
        /* Should the broker's unit meet its MemoryMax, the OOM killer takes a tool call's child (one
         * reply of up to TOOL_MAX_REPLY_BYTES, twice) rather than the broker itself. */
        oom_first();
        r = run_tool(b, &q->req, q->passed_fd, &q->rep, &out, &q->err);
        if (r < 0) {
                release_if_gone(b, q->req.id);
                q->rep.error = r;
                (void) snprintf(q->rep.message, sizeof(q->rep.message), "%s", error_message(&q->err, r));
        }
        (void) fd_send_one(fd, &q->rep, sizeof(q->rep), out, 0);
        _exit(0);
}

static int on_tool_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Request *q = userdata;
        cleanup_close int out = -1;
        ssize_t n;

        (void) s;
        /* Reaped here, as q (and this source with it) may be gone when the callback returns. */
        (void) waitid(P_PID, si->si_pid, &(siginfo_t){}, WEXITED | WNOHANG);
        n = fd_receive_one(q->child_fd, &q->rep, sizeof(q->rep), MSG_DONTWAIT, &out);
        if (n != (ssize_t) sizeof(q->rep)) {
                q->rep = (BrokerReply){};
                request_finish(q, error_set(&q->err, -EIO, "the tool call's process ended without a reply"));
                return 0;
        }
        q->rep.message[sizeof(q->rep.message) - 1] = 0;
        q->out_fd = TAKE_FD(out);
        /* The reply says how it went, error or not: passed on as it is. */
        request_finish(q, 0);
        return 0;
}

int machine_run_tool(Request *q) {
        int pair[2];
        pid_t pid;
        int r;

        /* A reply and its descriptor fit the socket's buffer: the child never waits to send it. */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return broker_fail(&q->err, negative_errno(), NULL);
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                (void) close(pair[0]);
                (void) close(pair[1]);
                return broker_fail(&q->err, r, NULL);
        }
        if (pid == 0) {
                (void) close(pair[0]);
                tool_child(q, pair[1]);
        }
        (void) close(pair[1]);
        q->child_fd = pair[0];
        closep(&q->passed_fd);
        r = sd_event_add_child(q->broker->event, &q->child, pid, WEXITED, on_tool_exit, q);
        if (r < 0) {
                /* Not followed, so not left running: its reply would never be read. */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return broker_fail(&q->err, r, NULL);
        }
        return 0;
}
