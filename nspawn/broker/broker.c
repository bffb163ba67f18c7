/* SPDX-License-Identifier: MIT */
/* sandboxd-broker: the only sandboxd process that keeps root, and the only one that talks to systemd.
 * It starts, kills, lists and collects sandboxd's own units, built from its own configuration, for
 * the unprivileged workers and pool manager, and parses no HTTP input: it takes fixed-layout
 * requests (broker-proto.h) on the socket systemd passes it (sandboxd-broker.socket) from peers
 * running as the workers' user, and hangs up on everyone else. What a sandbox is (command, mounts,
 * limits, users) comes from the broker's own configuration; a request only says which of sandboxd's
 * units to act on. Linked with libc and libsystemd only. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <pwd.h>
#include <sys/un.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "lib/alloc-util.h"
#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/signal-util.h"
#include "nspawn/broker/broker-proto.h"
#include "nspawn/broker/session-list.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/nspawn-argv.h"
#include "nspawn/sandbox.h"

#define CLIENTS_MAX 64
/* The sandbox user of nspawn/runner/passwd, whom the code becomes. */
#define RUNNER_UID_OPTION "--uid=1000"
/* Where an execution machine finds sandboxd's runner, zygote, filter and import allow-list: the
 * host's lib_dir, bound read-only at a place the runtime image has (sandboxd-image makes it). */
#define MACHINE_LIB_DIR "/usr/lib/sandboxd"

typedef struct Broker {
        const Config *config;
        uid_t uid; /* the workers' user: with root, the only peers served */
        sd_bus *bus;
        int uid_dir_fd; /* the UID range reservations (uid-range.h) */
        char uid_dir[512];
        int listen_fd;
        int signal_fd;
        sigset_t signal_mask;
        bool stop;
        int clients[CLIENTS_MAX];
        size_t n_clients;
} Broker;

static sd_bus *broker_bus(Broker *b) {
        int r;

        if (b->bus && sd_bus_is_open(b->bus) > 0)
                return b->bus;
        b->bus = sd_bus_flush_close_unref(b->bus);
        r = sd_bus_open_system(&b->bus);
        /* Finish authentication now, or the bus drops a connection left idle past its auth timeout. */
        if (r >= 0)
                r = sd_bus_get_unique_name(b->bus, &(const char *){NULL});
        if (r < 0) {
                b->bus = sd_bus_flush_close_unref(b->bus);
                (void) log_error_errno(r, "Broker: failed to connect to the system bus");
        }
        return b->bus;
}

/* A UID range no running machine and no session holds, reserved for id; the search starts at random,
 * so that ranges are not reused in order. -EUSERS when every range is held. */
static int reserve_uid_range(Broker *b, const char *id, uint32_t *ret) {
        uint32_t rnd;

        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        return uid_range_reserve(b->uid_dir_fd, id, rnd, false, ret);
}

/* A client that does not read its replies is dropped, not waited for. */
static int send_reply(int fd, const BrokerReply *rep, int pass_fd) {
        return fd_send_one(fd, rep, sizeof(*rep), pass_fd, MSG_DONTWAIT);
}

/* A failure r, in words: systemd's when the bus said why, else the errno's. */
static int fail(Error *err, int r, const sd_bus_error *error) {
        r = r < 0 ? r : -EIO;
        return error_set(err, r, "%s", error && sd_bus_error_is_set(error) ? error->message : strerror(-r));
}

/* The one place an Error becomes the reply's fixed-size words on the wire. */
static void reply_fail(BrokerReply *rep, int r, const Error *err) {
        rep->error = r < 0 ? r : -EIO;
        (void) snprintf(rep->message, sizeof(rep->message), "%s", error_message(err, rep->error));
}

/* Only a listening unix stream socket may become a warm sandbox's stdin. */
static int check_listener(int fd) {
        int v = 0;
        socklen_t len = sizeof(v);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                return -EBADF;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 || v != AF_UNIX)
                return -EBADF;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0 || v != SOCK_STREAM)
                return -EBADF;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || v != 1)
                return -EBADF;
        return 0;
}

/* What every sandbox of sandboxd's has, whatever runs in it: its unit, its journal tag, a UID range
 * of its own, and the limits of the configuration. The caller adds the command and what is its own. */
typedef struct SandboxBase {
        char unit[SANDBOX_ID_MAX + 16];
        char etc[512];
        char field[128];
        NspawnSpec ns;
        SandboxSpec spec;
        char delegate_path[600];
        char delegate_uid[32];
        const char *delegate[3];
        char release_path[600];
        const char *release[4];
} SandboxBase;

/* A machine whose runner gives each sandbox cgroups of its own (nspawn/runner/cgroup.h): on a host
 * with the cgroup v1 memory hierarchy, the machine's cgroup there is handed to the machine's root
 * before nspawn starts, by the runner's binary as root on the host (ExecStartPre=). A cgroup v2 host
 * needs nothing: nspawn hands over the machine's payload cgroup itself. */
static void delegate_cgroups(const Config *cfg, SandboxBase *s) {
        struct statfs sf;

        if (statfs("/sys/fs/cgroup/memory", &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC)
                return;
        (void) snprintf(s->delegate_path, sizeof(s->delegate_path), "%s/sandboxd-runner", cfg->lib_dir);
        (void) snprintf(s->delegate_uid, sizeof(s->delegate_uid), "--delegate=%" PRIu32, s->ns.uid_base);
        s->delegate[0] = s->delegate_path;
        s->delegate[1] = s->delegate_uid;
        s->delegate[2] = NULL;
        s->spec.exec_start_pre = s->delegate;
}

/* A machine's range (not a session's: that one is kept while the session is) is given up by its
 * unit once every process of it is gone, however it ends; the broker need not be there then. */
static void release_on_stop(const Broker *b, uint32_t uid_base, SandboxBase *s) {
        (void) snprintf(s->release_path, sizeof(s->release_path), "%s/%08" PRIx32, b->uid_dir, uid_base);
        s->release[0] = "/bin/rm";
        s->release[1] = "-f";
        s->release[2] = s->release_path;
        s->release[3] = NULL;
        s->spec.exec_stop_post = s->release;
}

/* uid_base: the range the machine runs with, reserved for it by the caller. */
static int sandbox_base(const Config *cfg, const char *id, uint32_t uid_base, const char *field_name, const char *field_value,
                        SandboxBase *ret) {
        (void) unit_name_from_id(id, ret->unit, sizeof(ret->unit));
        (void) snprintf(ret->etc, sizeof(ret->etc), "%s/etc", cfg->lib_dir);
        (void) snprintf(ret->field, sizeof(ret->field), "%s=%s", field_name, field_value);
        ret->ns = (NspawnSpec){.machine = id, .uid_base = uid_base, .workspace_bytes = cfg->workspace_bytes,
                               .tmp_bytes = cfg->tmp_bytes, .nofile = cfg->nofile, .etc_dir = ret->etc};
        ret->spec = (SandboxSpec){.unit = ret->unit, .slice = cfg->slice, .log_field = ret->field, .nspawn = &ret->ns,
                                  .memory_max = cfg->memory_max, .tasks_max = cfg->tasks_max,
                                  .cpu_quota_per_sec_usec = cfg->cpu_quota_percent * USEC_PER_SEC / 100};
        return 0;
}

/* A machine's or a tool sandbox's base, with a range of its own for as long as its unit runs. */
static int machine_base(Broker *b, const char *id, const char *field_name, const char *field_value, SandboxBase *ret) {
        uint32_t uid_base = 0;
        int r = reserve_uid_range(b, id, &uid_base);

        if (r < 0)
                return r;
        r = sandbox_base(b->config, id, uid_base, field_name, field_value, ret);
        if (r < 0) {
                (void) uid_range_release(b->uid_dir_fd, id);
                return r;
        }
        release_on_stop(b, uid_base, ret);
        return 0;
}

/* The runtime image's tree a machine started now gets: what its name in the image store points to
 * at this moment. A machine keeps the tree it started with when the image is rebuilt. */
static int runtime_tree(const Config *cfg, char **ret, Error *err) {
        cleanup_free char *link = NULL;
        char *tree;
        struct stat st;

        if (asprintf(&link, "%s/%s", cfg->image_dir, cfg->runtime_image) < 0)
                return -ENOMEM;
        tree = realpath(link, NULL);
        if (!tree || stat(tree, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(tree);
                return error_set(err, -ENOENT, "the runtime image '%s' is not built in %s (run: sandboxd-image runtime)",
                                 cfg->runtime_image, cfg->image_dir);
        }
        *ret = tree;
        return 0;
}

static int start_warm(Broker *b, const BrokerRequest *req, int fd, Error *err) {
        const Config *cfg = b->config;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *tree = NULL;
        char lib_bind[600], workspace[64], tmp[64], executions[64], preload[300], openblas[64];
        const char *command[] = {MACHINE_LIB_DIR "/sandboxd-runner", "--listen", RUNNER_UID_OPTION,
                                 "--zygote=" MACHINE_LIB_DIR "/sandboxd-zygote", "--seccomp=" MACHINE_LIB_DIR "/seccomp.bpf", "--machine-seccomp=" MACHINE_LIB_DIR "/seccomp-machine.bpf",
                                 "--import-allow=" MACHINE_LIB_DIR "/import-allow.list", workspace, tmp, executions, preload,
                                 cfg->openblas_coretype[0] ? openblas : NULL, NULL};
        const char *binds[] = {lib_bind, NULL};
        SandboxBase s;
        int r = check_listener(fd);

        if (r >= 0)
                r = machine_base(b, req->id, "SANDBOX_ID", req->id, &s);
        if (r < 0)
                return fail(err, r, NULL);
        r = runtime_tree(cfg, &tree, err);
        if (r < 0)
                return r;
        /* The runtime image is the machine's root, as it is; sandboxd's own binaries come from the
         * host, at a fixed place inside. */
        s.ns.image = tree;
        s.ns.image_read_only = true;
        s.ns.bind_ro = binds;
        if ((size_t) snprintf(lib_bind, sizeof(lib_bind), "%s:" MACHINE_LIB_DIR, cfg->lib_dir) >= sizeof(lib_bind))
                return error_set(err, -ENAMETOOLONG, "SANDBOXD_LIB_DIR is too long");
        (void) snprintf(preload, sizeof(preload), "--preload=%s", cfg->preload);
        (void) snprintf(openblas, sizeof(openblas), "--setenv=OPENBLAS_CORETYPE=%s", cfg->openblas_coretype);
        /* Each execution's sandbox gets fresh filesystems of these sizes; the machine serves this
         * many executions, one at a time, then its runner exits and the unit ends. */
        (void) snprintf(workspace, sizeof(workspace), "--workspace-bytes=%" PRIu64, cfg->workspace_bytes);
        (void) snprintf(tmp, sizeof(tmp), "--tmp-bytes=%" PRIu64, cfg->tmp_bytes);
        (void) snprintf(executions, sizeof(executions), "--executions=%u", cfg->executions_per_machine);
        s.ns.runner_confines = true;
        s.ns.command = command;
        /* Idle warm sandboxes are replaced before the TTL; this only bounds a forgotten one. */
        s.spec.runtime_max_usec = (cfg->pool_ttl_s + 60 + 60) * USEC_PER_SEC;
        delegate_cgroups(cfg, &s);

        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        r = sandbox_start_detached(b->bus, &s.spec, fd, &error);
        return r < 0 ? fail(err, r, &error) : 0;
}

/* A session keeps its UID range from its creation to its deletion, paused or not: the files on its
 * disk stay its own, and no other machine gets the range meanwhile. A session made before ranges
 * were reserved has the one its id hashed to, which it takes now if nobody else holds it. */
static int session_uid_base(Broker *b, const BrokerRequest *req, uint32_t *ret) {
        int r;

        r = uid_range_find(b->uid_dir_fd, req->id, ret);
        /* A create for an id that holds a range already is refused before a second one is taken:
         * a resume would start with either, and its disk's files belong to one. */
        if (req->op == BROKER_SESSION_CREATE) {
                if (r == -ENOENT)
                        return reserve_uid_range(b, req->id, ret);
                return r < 0 ? r : -EEXIST;
        }
        if (r != -ENOENT)
                return r;
        return uid_range_reserve(b->uid_dir_fd, req->id, uid_range_of_id(req->id), true, ret);
}

typedef struct SessionPaths {
        char image[512];      /* its disk: <session_dir>/<id>.img */
        char where[64];       /* SESSION_DISK_DIR/<12 characters> while mounted */
        char format_unit[64]; /* the unit that formats a new disk */
        char mount_unit[64];  /* systemd's name of where's mount */
        char unit[SANDBOX_ID_MAX + 16];
} SessionPaths;

static int session_paths(const Config *cfg, const char *id, SessionPaths *ret) {
        const char *suffix = strchr(id, '-') + 1; /* broker_request_check() made sure of the form */

        if ((size_t) snprintf(ret->image, sizeof(ret->image), "%s/%s.img", cfg->session_dir, id) >= sizeof(ret->image))
                return -ENAMETOOLONG;
        (void) snprintf(ret->where, sizeof(ret->where), SESSION_DISK_DIR "/%s", suffix);
        (void) snprintf(ret->format_unit, sizeof(ret->format_unit), "sandboxd-disk-%s.service", suffix);
        (void) snprintf(ret->mount_unit, sizeof(ret->mount_unit), "run-sandboxd-disks-%s.mount", suffix);
        return unit_name_from_id(id, ret->unit, sizeof(ret->unit));
}

/* A session's machine: a warm machine's runner in --session mode, working in the session's own disk
 * (formatted on the first start), with no time limit of its own: each run has one, and the session
 * is paused when idle. */
static int session_start(Broker *b, const BrokerRequest *req, int fd, Error *err) {
        const Config *cfg = b->config;
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *tree = NULL;
        char lib_bind[600], workspace[64], tmp[64], preload[300], openblas[64];
        const char *command[] = {MACHINE_LIB_DIR "/sandboxd-runner", "--listen", "--session", RUNNER_UID_OPTION,
                                 "--zygote=" MACHINE_LIB_DIR "/sandboxd-zygote", "--seccomp=" MACHINE_LIB_DIR "/seccomp.bpf", "--machine-seccomp=" MACHINE_LIB_DIR "/seccomp-machine.bpf",
                                 workspace, tmp, preload, cfg->openblas_coretype[0] ? openblas : NULL, NULL};
        const char *binds[] = {lib_bind, NULL};
        SessionPaths sp;
        SandboxBase s;
        struct stat st;
        uint32_t uid_base = 0;
        int r = check_listener(fd);

        if (r >= 0)
                r = session_paths(cfg, req->id, &sp);
        if (r >= 0)
                r = session_uid_base(b, req, &uid_base);
        if (r >= 0)
                r = sandbox_base(cfg, req->id, uid_base, "SESSION_ID", req->id, &s);
        if (r < 0)
                return fail(err, r, NULL);
        r = runtime_tree(cfg, &tree, err);
        if (r < 0)
                return r;
        s.ns.image = tree;
        s.ns.image_read_only = true;
        s.ns.bind_ro = binds;
        s.ns.workspace_dir = sp.where;
        if ((size_t) snprintf(lib_bind, sizeof(lib_bind), "%s:" MACHINE_LIB_DIR, cfg->lib_dir) >= sizeof(lib_bind))
                return error_set(err, -ENAMETOOLONG, "SANDBOXD_LIB_DIR is too long");
        (void) snprintf(preload, sizeof(preload), "--preload=%s", cfg->preload);
        (void) snprintf(openblas, sizeof(openblas), "--setenv=OPENBLAS_CORETYPE=%s", cfg->openblas_coretype);
        (void) snprintf(workspace, sizeof(workspace), "--workspace-bytes=%" PRIu64, cfg->session_disk_bytes);
        (void) snprintf(tmp, sizeof(tmp), "--tmp-bytes=%" PRIu64, cfg->tmp_bytes);
        s.ns.runner_confines = true;
        s.ns.command = command;
        s.spec.runtime_max_usec = UINT64_MAX;
        delegate_cgroups(cfg, &s);

        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        /* Only a new session gets a new disk: one whose disk is gone (deleted while it was being
         * resumed, or lost) is not brought back empty. */
        if (stat(sp.image, &st) < 0 && (errno != ENOENT || req->op != BROKER_SESSION_CREATE))
                return error_set(err, -errno, "the session's disk %s: %s", sp.image, strerror(errno));
        if (req->op == BROKER_SESSION_CREATE) {
                SandboxSpec format = s.spec;

                if (stat(sp.image, &st) == 0)
                        return error_set(err, -EEXIST, "the session's disk %s exists already", sp.image);
                format.unit = sp.format_unit;
                /* The sandbox user (nspawn/runner/passwd) inside the session's UID range. */
                r = sandbox_disk_format(b->bus, &format, sp.image, cfg->session_disk_bytes, s.ns.uid_base + 1000, &error);
                if (r < 0) {
                        (void) unlink(sp.image); /* never a half-made disk taken for a made one */
                        return fail(err, r, &error);
                }
        }
        s.spec.disk_image = sp.image;
        s.spec.disk_where = sp.where;
        r = sandbox_start_detached(b->bus, &s.spec, fd, &error);
        return r < 0 ? fail(err, r, &error) : 0;
}

/* The session's machine killed and gone, then its disk unmounted, which systemd does once nothing
 * needs it: waited for, as two mounts of one ext4 at once (a start right after) would corrupt it.
 * With delete, the disk is removed. */
static int session_stop(Broker *b, const BrokerRequest *req, Error *err) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        SessionPaths sp;
        int r = session_paths(b->config, req->id, &sp);

        if (r < 0)
                return fail(err, r, NULL);
        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        (void) sandbox_kill(b->bus, sp.unit, NULL);
        r = sandbox_wait_gone(b->bus, sp.unit, 15 * USEC_PER_SEC);
        if (r < 0)
                return error_set(err, r, "the session's machine did not stop");
        r = sandbox_wait_gone(b->bus, sp.mount_unit, 10 * USEC_PER_SEC);
        if (r < 0)
                r = sandbox_disk_unmount(b->bus, sp.where, &error);
        if (r < 0)
                return fail(err, r, &error);
        if (req->op == BROKER_SESSION_DELETE && unlink(sp.image) < 0 && errno != ENOENT)
                return error_set(err, -errno, "could not remove %s: %s", sp.image, strerror(errno));
        /* Its disk gone, its range is free: nothing of the host is owned by it any more. */
        if (req->op == BROKER_SESSION_DELETE)
                (void) uid_range_release(b->uid_dir_fd, req->id);
        return 0;
}

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
                return fail(err, r, NULL);
        if ((size_t) snprintf(image, sizeof(image), "%s/%s", cfg->image_dir, req->image) >= sizeof(image) || !tool_image(cfg, req->image, image))
                return error_set(err, -ENOENT, "image '%s' not found in %s", req->image, cfg->image_dir);
        /* The tool runner is sandboxd's, but the interpreter must be the image's own. */
        if ((size_t) snprintf(python, sizeof(python), "%s/usr/bin/python3", image) >= sizeof(python) || lstat(python, &st) < 0)
                return error_set(err, -ENOEXEC, "image '%s' has no /usr/bin/python3", req->image);
        r = machine_base(b, req->id, "REQUEST_ID", req->request_id, &s);
        if (r < 0)
                return fail(err, r, NULL);
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

        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        r = sandbox_run(b->bus, &s.spec, input, input_len, &res, &error);
        if (r < 0)
                return fail(err, r, &error);

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
        return r < 0 ? fail(err, r, NULL) : 0;
}

typedef struct UnitList {
        BrokerUnit *units;
        size_t n, cap;
        int error;
} UnitList;

static void list_unit(const char *unit, const char *active, void *userdata) {
        UnitList *l = userdata;
        BrokerUnit u = {};
        const char *dot = strrchr(unit, '.');

        if (l->error < 0 || !dot || strcmp(dot, ".service") != 0 || (size_t) (dot - unit) >= sizeof(u.id))
                return;
        memcpy(u.id, unit, (size_t) (dot - unit));
        if (!broker_id_valid(u.id, NULL))
                return;
        (void) snprintf(u.state, sizeof(u.state), "%s", active);
        if (ARRAY_GROW(l->units, l->cap, l->n, 64) < 0) {
                l->error = -ENOMEM;
                return;
        }
        l->units[l->n++] = u;
}

/* Every one of sandboxd's units, into a memfd: a reply of fixed size holds no list of any length. */
static int list(Broker *b, BrokerReply *rep, int *ret_fd, Error *err) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        UnitList l = {};
        cleanup_close int fd = -1;
        int r;

        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        r = sandbox_list(b->bus, "machine-*.service", list_unit, &l, &error);
        if (r >= 0)
                r = sandbox_list(b->bus, "tool-*.service", list_unit, &l, &error);
        if (r >= 0)
                r = l.error;
        if (r >= 0 && l.n > UINT32_MAX)
                r = -E2BIG;
        if (r >= 0) {
                fd = memfd_create("sandboxd-units", MFD_CLOEXEC);
                r = fd < 0 ? negative_errno() : fd_write_all(fd, l.units, l.n * sizeof(*l.units));
        }
        free(l.units);
        if (r < 0)
                return fail(err, r, &error);
        rep->n_units = (uint32_t) l.n;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int unit_op(Broker *b, const BrokerRequest *req, Error *err) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        char unit[SANDBOX_ID_MAX + 16];
        int r;

        (void) unit_name_from_id(req->id, unit, sizeof(unit));
        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        if (req->op == BROKER_KILL)
                r = sandbox_kill(b->bus, unit, &error);
        else
                r = sandbox_reset_failed(b->bus, unit);
        return r < 0 ? fail(err, r, &error) : 0;
}

/* After a start that failed: the machine's range is given up once its unit is surely gone (its
 * ExecStopPost= did, if it ran); a unit still there keeps it until it ends. */
static void release_if_gone(Broker *b, const char *id) {
        char unit[SANDBOX_ID_MAX + 16];

        (void) unit_name_from_id(id, unit, sizeof(unit));
        if (broker_bus(b) && sandbox_wait_gone(b->bus, unit, 15 * USEC_PER_SEC) == 0)
                (void) uid_range_release(b->uid_dir_fd, id);
}

static int sessions(Broker *b, BrokerReply *rep, int *ret_fd, Error *err) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (!broker_bus(b))
                return fail(err, -ENOTCONN, NULL);
        r = session_list_memfd(b->bus, b->config->session_dir, b->uid_dir_fd, &rep->n_units, ret_fd, &error);
        return r < 0 ? fail(err, r, &error) : 0;
}

static void client_remove(Broker *b, size_t i, bool close_it) {
        if (close_it)
                (void) close(b->clients[i]);
        b->clients[i] = b->clients[--b->n_clients];
}

/* Handles what client i sent. Long operations (a tool call) go to a child that takes the connection. */
static void serve(Broker *b, size_t i) {
        int fd = b->clients[i];
        static BrokerRequest req;
        static BrokerReply rep;
        Error err = {};
        cleanup_close int passed = -1, out = -1;
        ssize_t n;
        int r;

        memset(&req, 0, sizeof(req));
        /* Whatever descriptors come with a message are closed unless it is a request that uses one. */
        n = fd_receive_one(fd, &req, sizeof(req), MSG_DONTWAIT, &passed);
        if (n == -EAGAIN)
                return;
        /* The end of the connection, an empty message or a broken socket: none is a request. */
        if (n == 0 || (n < 0 && n != -EMSGSIZE && n != -EXFULL)) {
                client_remove(b, i, true);
                return;
        }
        memset(&rep, 0, sizeof(rep));
        r = n < 0 ? -EPROTO : broker_request_check(&req, (size_t) n);
        if (r < 0) {
                (void) log_warning_errno(r, "Broker: refused a malformed request (op %u)", n >= 8 ? req.op : 0);
                reply_fail(&rep, r, NULL);
                (void) send_reply(fd, &rep, -1);
                if (r == -EPROTO)
                        client_remove(b, i, true);
                return;
        }

        switch (req.op) {
        case BROKER_START_WARM:
                r = start_warm(b, &req, passed, &err);
                if (r < 0)
                        release_if_gone(b, req.id);
                break;
        case BROKER_KILL:
        case BROKER_RESET_FAILED:
                r = unit_op(b, &req, &err);
                break;
        case BROKER_LIST:
                r = list(b, &rep, &out, &err);
                break;
        case BROKER_SESSION_LIST:
                r = sessions(b, &rep, &out, &err);
                break;
        case BROKER_SESSION_START:
        case BROKER_SESSION_CREATE:
                r = session_start(b, &req, passed, &err);
                break;
        case BROKER_SESSION_STOP:
        case BROKER_SESSION_DELETE:
                r = session_stop(b, &req, &err);
                break;
        case BROKER_RUN_TOOL: {
                pid_t pid = fork();

                if (pid < 0) {
                        r = negative_errno();
                        break;
                }
                if (pid > 0) {
                        client_remove(b, i, true);
                        return;
                }
                /* The child: the bus connection is the parent's, the other clients too. */
                b->bus = NULL;
                (void) close(b->listen_fd);
                (void) close(b->signal_fd);
                for (size_t j = 0; j < b->n_clients; j++)
                        if (b->clients[j] != fd)
                                (void) close(b->clients[j]);
                (void) sigprocmask(SIG_UNBLOCK, &b->signal_mask, NULL);
                r = run_tool(b, &req, passed, &rep, &out, &err);
                if (r < 0) {
                        release_if_gone(b, req.id);
                        reply_fail(&rep, r, &err);
                }
                (void) send_reply(fd, &rep, out);
                _exit(0);
        }
        /* not reached */
        default:
                r = -EINVAL;
                break;
        }
        if (r < 0)
                reply_fail(&rep, r, &err);
        if (send_reply(fd, &rep, out) < 0)
                client_remove(b, i, true);
}

static int peer_allowed(const Broker *b, int fd) {
        struct ucred cred;
        socklen_t len = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return 0;
        return cred.uid == b->uid || cred.uid == 0;
}

static void accept_client(Broker *b) {
        int fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);

        if (fd < 0)
                return;
        if (!peer_allowed(b, fd)) {
                (void) log_warning_errno(EPERM, "Broker: refused a connection from a process not of sandboxd");
                (void) close(fd);
                return;
        }
        b->clients[b->n_clients++] = fd;
}

static int serve_all(Broker *b) {
        while (!b->stop) {
                struct pollfd fds[CLIENTS_MAX + 2];
                int r;

                fds[0] = (struct pollfd){.fd = b->signal_fd, .events = POLLIN};
                fds[1] = (struct pollfd){.fd = b->listen_fd, .events = b->n_clients < CLIENTS_MAX ? POLLIN : 0};
                for (size_t i = 0; i < b->n_clients; i++)
                        fds[i + 2] = (struct pollfd){.fd = b->clients[i], .events = POLLIN};
                if (poll(fds, b->n_clients + 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(errno, "Broker: poll failed");
                }
                if (fds[0].revents) {
                        r = signal_fd_read(b->signal_fd);
                        if (r < 0)
                                return log_error_errno(r, "Broker: failed to read a signal");
                        if (r == SIGTERM || r == SIGINT)
                                b->stop = true;
                }
                for (size_t i = b->n_clients; i > 0; i--)
                        if (fds[i + 1].revents)
                                serve(b, i - 1);
                if (fds[1].revents & POLLIN)
                        accept_client(b);
        }
        return 0;
}

/* The socket systemd passes (sandboxd-broker.socket); without socket activation (development), one
 * of our own. Anyone may connect: peers are checked with SO_PEERCRED. */
static int open_listener(void) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = BROKER_SOCKET};
        cleanup_close int fd = -1;
        int n = sd_listen_fds(1);

        if (n == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) > 0)
                return SD_LISTEN_FDS_START;
        if (n != 0)
                return log_error_errno(EINVAL, "Broker: expected one listening SOCK_SEQPACKET socket from systemd, got %d socket(s)", n);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(errno, "Broker: failed to create its socket");
        (void) unlink(BROKER_SOCKET);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(BROKER_SOCKET, 0666) < 0 || listen(fd, 64) < 0)
                return log_error_errno(errno, "Broker: failed to listen on %s", BROKER_SOCKET);
        return TAKE_FD(fd);
}

static int lookup_user(const char *name, uid_t *ret) {
        struct passwd *pw;

        errno = 0;
        pw = getpwnam(name);
        if (!pw)
                return log_error_errno(errno ? errno : ESRCH, "User '%s' (SANDBOXD_USER) does not exist", name);
        if (pw->pw_uid == 0)
                return log_error_errno(EPERM, "SANDBOXD_USER must not be root");
        *ret = pw->pw_uid;
        return 0;
}

/* The reservations, beside the sessions' disks (root's only, kept across reboots as sessions are).
 * Ranges of machines whose units are gone without their ExecStopPost= (the host or its systemd went
 * down with them) are given up now, before any start. */
static int open_uid_ranges(Broker *b) {
        (void) snprintf(b->uid_dir, sizeof(b->uid_dir), "%s/uid-ranges", b->config->session_dir);
        if (mkdir(b->uid_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Broker: failed to make %s", b->uid_dir);
        b->uid_dir_fd = open(b->uid_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->uid_dir_fd < 0)
                return log_error_errno(errno, "Broker: failed to open %s", b->uid_dir);
        if (broker_bus(b)) {
                session_list_release_stale_ranges(b->bus, b->uid_dir_fd);
                session_list_ask_sweep(b->bus);
        }
        return 0;
}

int main(void) {
        Config config;
        Broker b = {.config = &config, .uid_dir_fd = -1, .listen_fd = -1, .signal_fd = -1};
        int r;

        if (daemon_start("sandboxd-broker", true, &config) < 0 || lookup_user(config.user, &b.uid) < 0 || open_uid_ranges(&b) < 0)
                return EXIT_FAILURE;
        b.signal_fd = signal_fd_open(false, &b.signal_mask);
        if (b.signal_fd < 0) {
                (void) log_error_errno(b.signal_fd, "Broker: failed to set up signal handling");
                return EXIT_FAILURE;
        }
        (void) signal(SIGCHLD, SIG_IGN); /* tool-call children reap themselves */
        (void) signal(SIGPIPE, SIG_IGN);
        b.listen_fd = open_listener();
        if (b.listen_fd < 0)
                return EXIT_FAILURE;
        (void) broker_bus(&b);
        (void) sd_notify(0, "READY=1");

        r = serve_all(&b);
        (void) sd_notify(0, "STOPPING=1");
        for (size_t i = 0; i < b.n_clients; i++)
                (void) close(b.clients[i]);
        b.bus = sd_bus_flush_close_unref(b.bus);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
