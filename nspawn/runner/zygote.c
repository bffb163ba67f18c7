/* SPDX-License-Identifier: MIT */
/* sandboxd's zygote: a Python interpreter, initialised once per machine, that forks a fresh sandbox
 * for every execution (zygote-proto.h).
 *
 * It is started as `python3 -c ZYGOTE_COMMAND` with the environment a snippet gets, and initialises
 * the interpreter exactly as /usr/bin/python3 does (Py_InitializeFromConfig over the same argv), but
 * stops before running the command. Each sandbox then finishes what python3 would have done next,
 * Py_RunMain(): the -c command, which runs the bootstrap (bootstrap.py: it reads the snippet from
 * fd 3 and ends it as the interpreter would). So a snippet ends as `python3 -c CODE` ends, and pays
 * neither the exec nor the interpreter's start-up. The interpreter is the runtime image's own
 * libpython, loaded at run time (zygote-python.c): this binary runs on an image of any Python 3.
 *
 * Per execution, two processes:
 *   I  forked from the zygote straight into new mount, PID, IPC, UTS and network namespaces, as PID 1
 *      of the new PID namespace: marks itself and its children first for the OOM killer, makes the
 *      root read-only, mounts fresh size-capped tmpfs on /workspace, /tmp, /var/tmp and /dev/shm, a
 *      new mqueue and its own /proc, brings up its own loopback, hands its mount namespace to the
 *      runner, forks C, drops to the sandbox user, reaps, and once C ends reports C's status and
 *      exits, which kills whatever C left behind;
 *   C  the code: the sandbox user, no capability in any set, no_new_privs, the system-call filter,
 *      then Py_RunMain().
 * A session sandbox (--session) is one I in the same namespaces, on the machine's /workspace, that
 * drops to the sandbox user once its filesystems are made and lives on: it forks a C for every
 * process the runner asks for (the session's interpreters, its exec commands), each confined as an
 * execution's C is, and reports each one's end (session_init()).
 * The zygote and the runner stay root of the machine's user namespace and never run user code; the
 * code cannot see them (PID namespace), signal them or trace them (another UID). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/runner/zygote-proto.h"
#include "nspawn/runner/zygote-python.h"

#define WORKDIR "/workspace"

static ZygoteConfig arg_config;
static struct sock_filter *arg_filter;
static size_t arg_filter_len;

/* In the sandbox's processes: a step that fails leaves no half-made sandbox to run code in. */
static _Noreturn void die(const char *what) {
        (void) dprintf(STDERR_FILENO, "sandboxd-zygote: %s: %s\n", what, strerror(errno));
        _exit(127);
}

static void must(int r, const char *what) {
        if (r < 0)
                die(what);
}

/* The configuration and the filter, from the runner, before the interpreter starts. */
static int read_config(void) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        ssize_t n;

        n = fd_receive_one(ZYGOTE_FD, &arg_config, sizeof(arg_config), 0, NULL);
        if (n != (ssize_t) sizeof(arg_config) || arg_config.magic != ZYGOTE_MAGIC || arg_config.uid == 0 ||
            !memchr(arg_config.preload, 0, sizeof(arg_config.preload)) || !memchr(arg_config.import_allow, 0, sizeof(arg_config.import_allow)))
                return -EPROTO;
        n = fd_receive_one(ZYGOTE_FD, insns, sizeof(insns), 0, NULL);
        if (n <= 0 || n % (ssize_t) sizeof(insns[0]) != 0 || (size_t) n / sizeof(insns[0]) > BPF_MAXINSNS)
                return -EPROTO;
        arg_filter = insns;
        arg_filter_len = (size_t) n / sizeof(insns[0]);
        return 0;
}

static void mount_tmpfs(const char *where, uint64_t size, const char *mode) {
        char opts[128];

        (void) mkdir(where, 0755);
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=%s,uid=%u,gid=%u", size, mode,
                        strcmp(mode, "0700") == 0 ? arg_config.uid : 0, strcmp(mode, "0700") == 0 ? arg_config.uid : 0);
        must(mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts), where);
}

/* A mount made read-only in this mount namespace, with extra (nosuid, nodev, noexec…). A remount
 * must keep the flags the mount was made with under the machine's user namespace (nosuid, nodev,
 * the atime mode…): the kernel locks them. */
static void read_only(const char *where, unsigned long extra) {
        struct statvfs sv;
        unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | extra;

        must(statvfs(where, &sv), where);
        if (sv.f_flag & ST_NOSUID)
                flags |= MS_NOSUID;
        if (sv.f_flag & ST_NODEV)
                flags |= MS_NODEV;
        if (sv.f_flag & ST_NOEXEC)
                flags |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME)
                flags |= MS_NOATIME;
        else if (sv.f_flag & ST_RELATIME)
                flags |= MS_RELATIME;
        else
                flags |= MS_STRICTATIME;
        if (sv.f_flag & ST_NODIRATIME)
                flags |= MS_NODIRATIME;
        must(mount(NULL, where, NULL, flags, NULL), where);
}

/* The machine's root, read-only in this mount namespace. */
static void root_read_only(void) {
        read_only("/", 0);
}

/* A new network namespace has its loopback down: a snippet expects 127.0.0.1 to work. */
static void loopback_up(void) {
        struct ifreq ifr = {.ifr_name = "lo", .ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING};
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                die("bringing up lo");
        (void) close(fd);
}

/* When the machine runs out of memory, the kernel kills a sandbox's process, not the runner or the
 * zygote: then the execution ends with a status and a limit to report, and the machine retires. */
static void oom_first(void) {
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

        if (fd < 0 || fd_write_all(fd, "1000", 4) < 0)
                die("oom_score_adj");
        (void) close(fd);
}

/* I, in the namespaces it was forked into: the filesystems of one sandbox. A session's keeps the
 * machine's /workspace, the session's disk, bound onto itself first: writable even where it is not a
 * mount of its own, once the root is read-only. */
static void make_filesystems(bool session) {
        oom_first();
        /* Nothing mounted here may reach the machine's namespace, nor the other way round. */
        must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "making / private");
        if (session)
                must(mount(WORKDIR, WORKDIR, NULL, MS_BIND, NULL), "binding " WORKDIR);
        root_read_only();
        if (!session)
                mount_tmpfs(WORKDIR, arg_config.workspace_bytes, "0700");
        mount_tmpfs("/tmp", arg_config.tmp_bytes, "1777");
        mount_tmpfs("/var/tmp", arg_config.tmp_bytes, "1777");
        mount_tmpfs("/dev/shm", arg_config.tmp_bytes, "1777");
        /* POSIX message queues of the new IPC namespace, not the machine's. */
        (void) mkdir("/dev/mqueue", 0755);
        must(mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "/dev/mqueue");
        loopback_up();
}

/* Every capability out of every set, then the sandbox user. */
static void drop_privileges(void) {
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {};
        uid_t uid = arg_config.uid;

        for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                must(prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "dropping the capability bounding set");
        must(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing ambient capabilities");
        must(setgroups(0, NULL), "setgroups");
        must(setresgid(uid, uid, uid), "setresgid");
        must(setresuid(uid, uid, uid), "setresuid");
        /* The inheritable set too: nothing for a program with file capabilities to pick up. */
        must((int) syscall(SYS_capset, &h, d), "clearing capabilities");
}

/* What the code process starts from: the sandbox user's workspace, no capability in any set (checked,
 * not assumed), no new privileges, the filter. */
static void restrict_code(void) {
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {};
        struct sock_fprog prog = {.len = (unsigned short) arg_filter_len, .filter = arg_filter};
        uid_t uid = arg_config.uid;

        /* As the sandbox user: the workspace is its own, and root here has no CAP_DAC_OVERRIDE to
         * enter it. */
        must(chdir(WORKDIR), "chdir " WORKDIR);
        if (syscall(SYS_capget, &h, d) < 0 || d[0].permitted || d[0].effective || d[0].inheritable || d[1].permitted ||
            d[1].effective || d[1].inheritable || getuid() != uid || geteuid() != uid || setresuid(0, 0, 0) == 0 ||
            prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
                abort();
        must(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
        must(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), "installing the system-call filter");
}

static void confine(void) {
        drop_privileges();
        restrict_code();
}

/* C, in its sandbox: its descriptors (the code's pipe replaces the zygote's socket as fd 3), its
 * directory, its confinement. Returns to run the code. */
static void become_code(int out, int err, int code) {
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(code, ZYGOTE_FD) < 0)
                die("setting up descriptors");
        (void) close(null);
        (void) close(out);
        (void) close(err);
        (void) close(code);
        confine();
}

/* I, PID 1 of the sandbox: reaps what the code leaves, and ends with the code, after telling the
 * runner the code's status (128 + N for death by signal N) and what it used. No signal reaches it
 * from inside (init gets only those it handles), nor ptrace (not dumpable, another UID). */
static _Noreturn void init_loop(pid_t code, int report) {
        int status = 0;
        ZygoteStatus st = {};
        struct rusage ru = {};

        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (setgroups(0, NULL) < 0 || setresgid(arg_config.uid, arg_config.uid, arg_config.uid) < 0 ||
            setresuid(arg_config.uid, arg_config.uid, arg_config.uid) < 0)
                _exit(127);
        for (;;) {
                pid_t pid = waitpid(-1, &status, 0);

                if (pid == code)
                        break;
                if (pid < 0 && errno != EINTR)
                        _exit(127);
        }
        st.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        /* The code and every process of it reaped so far; what is still running dies unaccounted. */
        if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
                st.cpu_usec = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000U + (uint64_t) ru.ru_utime.tv_usec +
                              (uint64_t) ru.ru_stime.tv_usec;
                st.maxrss_bytes = (uint64_t) ru.ru_maxrss * 1024U;
        }
        /* Then the kernel kills whatever the code left. */
        _exit(fd_send_one(report, &st, sizeof(st), -1, 0) < 0 ? 127 : 0);
}

/* What nspawn hides or freezes in a container's /proc (mount_all() in systemd's
 * src/nspawn/nspawn-mount.c), which a fresh procfs shows again, and what Docker's default masks add
 * (sched_debug, latency_stats, timer_stats); docs/security.md lists both. Files: /dev/null bound
 * over them on a nodev mount, so opening one fails with EACCES. Directories: an empty read-only
 * tmpfs (nspawn makes them read-only; their contents describe the host's hardware all the same). A
 * file or directory this kernel does not have needs no mask. */
static const char *const proc_masked_files[] = {"/proc/kallsyms", "/proc/kcore", "/proc/keys",
                                                "/proc/sysrq-trigger", "/proc/timer_list", "/proc/sched_debug",
                                                "/proc/latency_stats", "/proc/timer_stats"};
static const char *const proc_masked_dirs[] = {"/proc/acpi", "/proc/apm", "/proc/asound", "/proc/bus",
                                               "/proc/fs", "/proc/irq", "/proc/scsi", "/proc/driver"};

static void mask_proc(void) {
        /* The kernel's tunables: read-only, as nspawn has them (this includes /proc/sys/net, which
         * nspawn leaves writable in a private network: no sandbox needs to tune its loopback). */
        must(mount("/proc/sys", "/proc/sys", NULL, MS_BIND, NULL), "/proc/sys");
        read_only("/proc/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC);
        for (size_t i = 0; i < ELEMENTSOF(proc_masked_files); i++) {
                if (access(proc_masked_files[i], F_OK) < 0 && errno == ENOENT)
                        continue;
                must(mount("/dev/null", proc_masked_files[i], NULL, MS_BIND, NULL), proc_masked_files[i]);
                read_only(proc_masked_files[i], MS_NOSUID | MS_NODEV | MS_NOEXEC);
        }
        for (size_t i = 0; i < ELEMENTSOF(proc_masked_dirs); i++) {
                if (access(proc_masked_dirs[i], F_OK) < 0 && errno == ENOENT)
                        continue;
                must(mount("tmpfs", proc_masked_dirs[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           "size=4k,nr_inodes=1,mode=0555"),
                     proc_masked_dirs[i]);
        }
}

/* I: its own /proc, and its mount and network namespaces to the runner, which writes and reads the
 * execution's files from inside the first and binds the egress proxy's port in the second. They
 * come from here: once this process has become the sandbox user and undumpable, the runner may no
 * longer open them through /proc. */
static void hand_over_namespaces(int report) {
        int mnt, net;

        must(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "mounting /proc");
        mask_proc();
        mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (mnt < 0 || net < 0 || fd_send_one(report, &(int32_t){0}, sizeof(int32_t), mnt, 0) < 0 ||
            fd_send_one(report, &(int32_t){1}, sizeof(int32_t), net, 0) < 0)
                die("handing over the namespaces");
        (void) close(mnt);
        (void) close(net);
}

/* I, in its new namespaces: the sandbox's filesystems, its mount namespace to the runner, then C.
 * Returns only in C, ready for Py_RunMain(). */
static void make_sandbox(int out, int err, int code, int report) {
        pid_t child;

        make_filesystems(false);
        hand_over_namespaces(report);
        child = fork();
        if (child < 0)
                die("fork");
        if (child > 0) {
                (void) close(ZYGOTE_FD);
                (void) close(out);
                (void) close(err);
                (void) close(code);
                init_loop(child, report);
        }
        (void) close(report);
        become_code(out, err, code);
}

/* A session sandbox's init: the processes it started and not yet reported ended. A session has a
 * few (an interpreter per language, an exec command at a time); the list grows as it must. */
typedef struct Started {
        pid_t pid;
        uint32_t id;
} Started;

static Started *started;
static size_t n_started, max_started;

static int started_add(pid_t pid, uint32_t id) {
        if (n_started == max_started) {
                size_t m = max_started ? max_started * 2 : 8;
                Started *bigger = realloc(started, m * sizeof(*started));

                if (!bigger)
                        return -ENOMEM;
                started = bigger;
                max_started = m;
        }
        started[n_started++] = (Started){.pid = pid, .id = id};
        return 0;
}

/* C of a session: the four descriptors the runner sent in place (they arrived above fd 4, see
 * session_init()), standard input /dev/null, the signals as a fresh process has them, then confined
 * as an execution's code process is (the init dropped its privileges already). Returns to run the
 * bootstrap, which reads fd 3. */
static void become_session_code(const int fds[4], int control, int sigfd) {
        sigset_t none;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        (void) close(control);
        (void) close(sigfd);
        sigemptyset(&none);
        if (null < 0 || dup2(null, 0) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                die("setting up the process");
        for (int i = 0; i < 4; i++)
                if (dup2(fds[i], i + 1) < 0)
                        die("setting up descriptors");
        (void) close(null);
        for (int i = 0; i < 4; i++)
                (void) close(fds[i]);
        restrict_code();
}

/* One start request: four descriptors in, a process out, its PID to the runner. Returns 1 in the
 * init, 0 in the new process, -1 when the runner is gone. */
static int session_start(int control, int sigfd) {
        int fds[4] = {-1, -1, -1, -1};
        SessionStart req = {};
        SessionEvent ev = {.what = SESSION_STARTED, .pid = -EPROTO};
        ssize_t n;
        pid_t pid;

        n = fd_receive_one(control, &req, sizeof(req), 0, &fds[0]);
        if (n == 0 || (n < 0 && n != -EINTR && n != -EMSGSIZE && n != -EXFULL))
                return -1;
        ev.id = req.id;
        if (n != (ssize_t) sizeof(req) || req.magic != ZYGOTE_MAGIC || fds[0] < 0)
                goto reply;
        for (size_t i = 1; i < ELEMENTSOF(fds); i++) {
                SessionStart more = {};

                if (fd_receive_one(control, &more, sizeof(more), 0, &fds[i]) != (ssize_t) sizeof(more) || fds[i] < 0 ||
                    more.id != req.id)
                        goto reply;
        }
        pid = fork();
        if (pid == 0) {
                become_session_code(fds, control, sigfd);
                return 0;
        }
        ev.pid = pid < 0 ? -errno : pid;
        if (pid > 0 && started_add(pid, req.id) < 0)
                die("remembering a process"); /* unreported, it could never end: the session fails whole */
reply:
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                closep(&fds[i]);
        return fd_send_one(control, &ev, sizeof(ev), -1, 0) < 0 ? -1 : 1;
}

/* Every child that ended: those the runner started are reported, the rest (what the code left
 * behind, orphaned to the init) only reaped. */
static int session_reap(int control) {
        struct rusage ru;
        int status;
        pid_t pid;

        while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
                for (size_t i = 0; i < n_started; i++) {
                        SessionEvent ev = {.what = SESSION_ENDED, .id = started[i].id, .pid = pid};

                        if (started[i].pid != pid)
                                continue;
                        started[i] = started[--n_started];
                        ev.signal = WIFSIGNALED(status) ? (uint32_t) WTERMSIG(status) : 0;
                        ev.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
                        ev.cpu_usec = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000U + (uint64_t) ru.ru_utime.tv_usec +
                                      (uint64_t) ru.ru_stime.tv_usec;
                        ev.maxrss_bytes = (uint64_t) ru.ru_maxrss * 1024U;
                        if (fd_send_one(control, &ev, sizeof(ev), -1, 0) < 0)
                                return -1;
                        break;
                }
        return 0;
}

/* I of a session sandbox, in its new namespaces: the sandbox's filesystems, its mount namespace to
 * the runner, then the sandbox user for good, serving the runner's requests until the runner closes
 * its end or kills it (and with it every process of the sandbox). Returns only in a process it
 * started, ready for Py_RunMain(). No signal reaches it from inside but SIGCHLD (init gets only
 * those it handles; it blocks SIGCHLD to read it from a signalfd), nor ptrace (not dumpable). */
static void session_init(int control) {
        sigset_t chld;
        int sigfd, null, moved;

        make_filesystems(true);
        hand_over_namespaces(control);
        /* Its descriptors out of the way: fd 3 was the zygote's socket, and what the runner sends
         * must arrive above the numbers its processes take them as (1 to 4). */
        moved = fcntl(control, F_DUPFD_CLOEXEC, 10);
        if (moved < 0)
                die("moving the runner's socket");
        (void) close(control);
        control = moved;
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, ZYGOTE_FD) < 0 || dup2(null, ZYGOTE_FD + 1) < 0)
                die("/dev/null");
        (void) close(null);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 || (sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                die("signalfd");
        drop_privileges();
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        for (;;) {
                struct pollfd p[] = {{.fd = control, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};
                struct signalfd_siginfo si;
                int r = 1;

                if (poll(p, ELEMENTSOF(p), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        die("poll");
                }
                if (p[1].revents) {
                        while (read(sigfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                ;
                        r = session_reap(control) < 0 ? -1 : 1;
                }
                if (r >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        r = session_start(control, sigfd);
                if (r == 0)
                        return; /* a started process */
                if (r < 0)
                        _exit(0); /* the runner is gone: the sandbox ends with this process */
        }
}

/* Zombies of sandboxes that ended: the zygote is their parent. */
static void reap(void) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

/* One fork request: four descriptors in (the code's stdout, stderr and fd 3, and the init's report
 * socket) or, for a session sandbox, one (its init's socket); the sandbox's init out. */
static int serve_fork(void) {
        /* The request's own descriptors, then at most two cgroup.procs. */
        int fds[6] = {-1, -1, -1, -1, -1, -1};
        ZygoteFork req = {};
        ZygoteReply rep = {.pid = -EPROTO};
        size_t n_fds = 1, first_cgroup;
        ssize_t n;
        pid_t init;

        reap();
        n = fd_receive_one(ZYGOTE_FD, &req, sizeof(req), 0, &fds[0]);
        if (n == 0)
                return 0; /* the runner is gone */
        if (n != (ssize_t) sizeof(req) || req.magic != ZYGOTE_MAGIC || fds[0] < 0 || (req.kind != ZYGOTE_EXECUTION && req.kind != ZYGOTE_SESSION) ||
            req.cgroups > 2)
                goto reply;
        if (req.kind == ZYGOTE_EXECUTION)
                n_fds = 4;
        first_cgroup = n_fds;
        n_fds += req.cgroups;
        for (size_t i = 1; i < n_fds; i++) {
                ZygoteFork more = {};

                if (fd_receive_one(ZYGOTE_FD, &more, sizeof(more), 0, &fds[i]) != (ssize_t) sizeof(more) || fds[i] < 0)
                        goto reply;
        }

        /* A fork straight into the sandbox's new namespaces, as PID 1 of the new PID namespace: one
         * copy of the interpreter's address space fewer than fork() and unshare() would take. The
         * raw system call leaves libc's cached thread id stale in the child, which is harmless there:
         * it never raises a signal or locks an error-checking mutex, and its own fork() sets the
         * code process's right. */
        python_before_fork();
        init = (pid_t) syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | SIGCHLD,
                               NULL, NULL, NULL, 0);
        if (init == 0) {
                python_after_fork_child();
                /* Into the sandbox's cgroups before anything: whatever it does from here on is
                 * counted there. One that cannot be joined leaves the count to the machine's. */
                for (size_t i = first_cgroup; i < n_fds; i++) {
                        (void) fd_write_all(fds[i], "0", 1);
                        closep(&fds[i]);
                }
                if (req.kind == ZYGOTE_SESSION)
                        session_init(fds[0]);
                else
                        make_sandbox(fds[0], fds[1], fds[2], fds[3]);
                return 2; /* C: run the code */
        }
        rep.pid = init < 0 ? -errno : init;
        python_after_fork_parent();
reply:
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                closep(&fds[i]);
        return fd_send_one(ZYGOTE_FD, &rep, sizeof(rep), -1, 0) < 0 ? 0 : 1;
}

int main(int argc, char **argv) {
        ZygoteReply ready = {.pid = 0};
        int r;

        (void) unsetenv("LD_BIND_NOW"); /* bound already; not the snippet's */
        /* Where -c puts sys.path[0] (""): the image's root, read-only, while the modules are
         * preloaded; each sandbox then works in its own /workspace. */
        if (chdir("/") < 0)
                return EXIT_FAILURE;
        if (read_config() < 0) {
                (void) fprintf(stderr, "sandboxd-zygote: no configuration from the runner\n");
                return EXIT_FAILURE;
        }

        if (python_load() < 0)
                return EXIT_FAILURE;
        /* What python3's own main() does first, with the same arguments. */
        python_initialize(argc, argv);
        if (python_setup(arg_config.import_allow, arg_config.preload) < 0)
                return EXIT_FAILURE;

        if (fd_send_one(ZYGOTE_FD, &ready, sizeof(ready), -1, 0) < 0)
                return EXIT_FAILURE;
        do
                r = serve_fork();
        while (r == 1);
        if (r == 2)
                return python_run_main(); /* C: python3's main() returns this */
        return EXIT_SUCCESS;
}
