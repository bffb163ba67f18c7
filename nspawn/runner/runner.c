/* SPDX-License-Identifier: MIT */
/* sandboxd's runner: the first process inside a machine, PID 1 of the machine's PID namespace.
 *
 * Standard input is a listening unix socket. Every connection is greeted with "ready\n"; one that
 * sends nothing (the pool's readiness probe) is closed and the next awaited; one that sends a
 * request (then shuts down its write side) gets the reply. A pool machine serves --executions of
 * them, one at a time, each in a sandbox of its own (runner-exec.c); with --session, the machine
 * serves one session instead, until it is stopped (runner-session.c). What both share, the zygote
 * and the listening socket above all, is runner-common.c's; this file reads the command line
 * (runner-args.c), confines the runner and hands over to one of the two.
 *
 * The sandboxes come from the zygote (zygote.c), an interpreter the runner starts once as
 * `python3 -c ...` and that never runs user code: for each execution it forks a copy of itself into
 * new mount, PID, IPC, UTS and network namespaces with fresh filesystems, where the code runs as
 * the sandbox user with no capabilities, no_new_privs and the system-call filter compiled at build
 * time (seccomp-gen.c).
 *
 * nspawn starts the runner as root of the machine's user namespace with the capabilities that
 * making sandboxes takes there, and nothing else (nspawn-argv.c). The code cannot see it (another
 * PID namespace), signal it (another UID) or trace it (not dumpable).
 *
 * The runner is not a security boundary: the kernel is (namespaces, no capabilities, cgroup
 * limits). All the code could spoil is its own sandbox's reply, which the worker reads with a size
 * cap and validates. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/macro.h"
#include "nspawn/runner/cgroup.h"
#include "nspawn/runner/runner-args.h"
#include "nspawn/runner/runner-common.h"
#include "nspawn/runner/runner-exec.h"
#include "nspawn/runner/runner-session.h"

#if defined(__SANITIZE_ADDRESS__)
/* Sanitized test builds: LeakSanitizer cannot stop the world here (no ptrace inside a sandbox). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "detect_leaks=0";
}
#endif

/* The filter seccomp-gen compiled, a raw struct sock_filter array, into insns (max of them): its
 * size in bytes in *ret_len. Fails closed: -EINVAL for an empty, ragged or overlong file. */
static int read_filter(const char *path, struct sock_filter *insns, size_t max, size_t *ret_len, Error *reterr) {
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t n = 0;

        if (fd < 0)
                return error_set(reterr, -errno, "%s: %s", path, strerror(errno));
        for (;;) {
                ssize_t k = read(fd, (char *) insns + n, max * sizeof(insns[0]) - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return error_set(reterr, -errno, "%s: %s", path, strerror(errno));
                if (k == 0 || (n += (size_t) k) == max * sizeof(insns[0]))
                        break;
        }
        /* One more than the kernel takes fits: a longer file is refused, not cut short. */
        if (n == 0 || n % sizeof(insns[0]) != 0 || n / sizeof(insns[0]) >= max)
                return error_set(reterr, -EINVAL, "%s: %s", path, strerror(EINVAL));
        *ret_len = n;
        return 0;
}

/* The machine's own filter (seccomp-gen --machine) on the runner, before it starts anything: the
 * zygote, every sandbox's init and every code process inherit it, and a code process adds the
 * code's narrower one. The runner is root of the machine's user namespace, with CAP_SYS_ADMIN there,
 * but no_new_privs first all the same: nothing it starts gains privileges by exec. */
static int confine_machine(const char *path, Error *reterr) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        struct sock_fprog prog = {.filter = insns};
        size_t len = 0;
        int r;

        r = read_filter(path, insns, ELEMENTSOF(insns), &len, reterr);
        if (r < 0)
                return r;
        prog.len = (unsigned short) (len / sizeof(insns[0]));
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return error_set(reterr, -errno, "installing the machine's system-call filter: %s", strerror(errno));
        return 0;
}

/* Where the sandboxes mount their own filesystems must exist before the zygote makes the machine's
 * root read-only for them. */
static int make_mount_points(Error *reterr) {
        static const char *const dirs[] = {"/var", "/var/tmp", RUNNER_WORKDIR, "/dev/shm", "/dev/mqueue"};

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST)
                        return error_set(reterr, -errno, "%s: %s", dirs[i], strerror(errno));
        return 0;
}

/* The machine, made ready for either server: the code's filter read, the runner confined, the
 * mount points and cgroups set up. Nothing is started yet. */
static int machine_setup(Runner *r, const RunnerArgs *args, Error *reterr) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        size_t filter_len = 0;
        int k;

        k = read_filter(args->seccomp_path, insns, ELEMENTSOF(insns), &filter_len, reterr);
        if (k < 0)
                return k;
        runner_init(r, args, insns, filter_len);
        k = confine_machine(args->machine_seccomp_path, reterr);
        if (k < 0)
                return k;
        /* Not dumpable: nothing in the machine but root may open /proc/<runner>/fd or trace it. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* A client or a child gone is an error on write, not a signal. */
        (void) signal(SIGPIPE, SIG_IGN);
        r->own_mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (r->own_mnt < 0)
                return error_set(reterr, -errno, "/proc/self/ns/mnt: %s", strerror(errno));
        r->own_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (r->own_net < 0)
                return error_set(reterr, -errno, "/proc/self/ns/net: %s", strerror(errno));
        k = make_mount_points(reterr);
        if (k < 0)
                return k;
        /* Before the first zygote: on a cgroup v2 host the runner may move into a leaf of its own. */
        r->have_cgroups = cgroup_setup();
        return 0;
}

/* On the host, before a machine starts (cgroup.h). */
static int delegate(uint32_t uid) {
        int r = cgroup_delegate_v1((uid_t) uid);

        if (r < 0)
                (void) fprintf(stderr, "sandboxd-runner: handing the machine's memory cgroup over: %s\n", strerror(-r));
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        RunnerArgs args;
        Runner runner;
        Error error = {};
        int r;

        r = runner_args_parse(argc, argv, &args, &error);
        if (r < 0) {
                (void) fprintf(stderr, "sandboxd-runner: %s\n", error_message(&error, r));
                runner_args_usage(stderr);
                return EXIT_FAILURE;
        }
        if (args.help) {
                runner_args_usage(stdout);
                return EXIT_SUCCESS;
        }
        if (args.delegate_uid)
                return delegate(args.delegate_uid);

        r = machine_setup(&runner, &args, &error);
        if (r >= 0 && args.session)
                r = runner_session_serve(&runner, &error);
        else if (r >= 0)
                r = runner_exec_serve(&runner, args.preload, args.executions, &error);
        if (r < 0) {
                (void) fprintf(stderr, "sandboxd-runner: %s\n", error_message(&error, r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
