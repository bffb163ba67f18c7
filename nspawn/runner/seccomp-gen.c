/* SPDX-License-Identifier: MIT */
/* seccomp-gen [--machine] NAMES OUT: compiles an allow-list (one system call name per line in NAMES,
 * as seccomp-expand prints it) into a classic BPF program for the native architecture, written to
 * OUT as the raw struct sock_filter array that sandboxd-runner loads. A build tool: it runs once,
 * where sandboxd is built, not for every sandbox.
 *
 * Two filters come from it. The code's (no option): what a sandbox's code may call. The machine's
 * (--machine): what the runner and the zygote may call, installed by the runner on itself before it
 * starts anything; it must let them make a sandbox (clone with namespace flags), and the code's
 * filter, stacked on it in every code process, narrows it again. Whatever NAMES says, both answer
 * clone3 and io_uring_setup with ENOSYS, allow personality() only with the values Docker's default
 * profile allows, and refuse audit sockets and vsock. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_VSOCK
#        define AF_VSOCK 40
#endif

/* Every flag of clone() that makes a new namespace. (CLONE_NEWTIME shares its bit with CSIGNAL in
 * clone(): only clone3() and unshare() can ask for it, and neither is allowed to the code.) */
#define CLONE_NEW_ANY                                                                                             \
        ((uint64_t) (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | \
                     CLONE_NEWNET))
#define CLONE_NEW_MACHINE ((uint64_t) (CLONE_NEWUSER | CLONE_NEWCGROUP))

/* The personality() values Docker's default profile allows: PER_LINUX, PER_LINUX32, UNAME26,
 * PER_LINUX32|UNAME26, and the query 0xffffffff. Never READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and
 * the like. The kernel reads the argument as 32 bits: so does the rule. */
static const uint32_t personalities[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

/* Calls the filter handles itself below, whatever the list says. */
static const char *const special[] = {"clone", "clone3", "io_uring_setup", "personality", "socket"};

static int fail(const char *what, int r) {
        (void) fprintf(stderr, "seccomp-gen: %s: %s\n", what, strerror(r < 0 ? -r : r));
        return EXIT_FAILURE;
}

static bool is_special(const char *name) {
        for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
                if (strcmp(name, special[i]) == 0)
                        return true;
        return false;
}

/* The list, one unconditional rule per call of this architecture. Returns how many, or -errno. */
static int add_list(scmp_filter_ctx ctx, FILE *in) {
        char line[128];
        int allowed = 0, r;

        while (fgets(line, sizeof(line), in)) {
                int nr;

                line[strcspn(line, "\n")] = 0;
                if (!line[0] || is_special(line))
                        continue;
                /* Names of other architectures (e.g. *_time64) do not exist here: skipped, as nspawn does. */
                nr = seccomp_syscall_resolve_name(line);
                if (nr == __NR_SCMP_ERROR)
                        continue;
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
                if (r < 0 && r != -EEXIST)
                        return r;
                allowed++;
        }
        return allowed;
}

static int add_special(scmp_filter_ctx ctx, bool machine) {
        int r;

        /* clone3() passes its flags in memory, where a filter cannot read them: ENOSYS, which glibc
         * takes as "no clone3 here" and falls back to clone(), whose flags the rule below sees. */
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        /* No io_uring (its operations bypass every per-call rule of this filter): ENOSYS, as on a
         * kernel without it, so that libuv and liburing fall back to plain system calls. */
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(io_uring_setup), 0);
        /* The code makes no namespace; the machine makes the sandboxes' (zygote.c: mount, PID, IPC,
         * UTS and network), but never a user or cgroup namespace. */
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, machine ? CLONE_NEW_MACHINE : CLONE_NEW_ANY, 0));
        for (size_t i = 0; r >= 0 && i < sizeof(personalities) / sizeof(personalities[0]); i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, personalities[i]));
        /* socket(), but as nspawn has it: audit sockets fail the way they do on a kernel without
         * audit; and as Docker has it: no vsock (the hypervisor's sockets, not namespaced). The
         * kernel reads the family as an int, so the rules compare its low 32 bits: one rule per
         * family (libseccomp takes one comparison per argument in a rule), disjoint, since an
         * unconditional rule would win over conditional ones. */
        for (uint32_t af = 0; r >= 0 && af < AF_MAX; af++)
                if (af != AF_NETLINK && af != AF_VSOCK)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, af));
        /* Netlink: every protocol the kernel has (MAX_LINKS, 32) but audit, the protocol read as an
         * int too. */
        for (uint32_t proto = 0; r >= 0 && proto < 32; proto++)
                r = seccomp_rule_add(ctx, proto == NETLINK_AUDIT ? SCMP_ACT_ERRNO(EAFNOSUPPORT) : SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, AF_NETLINK), SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffU, proto));
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffU, AF_VSOCK));
        return r;
}

int main(int argc, char **argv) {
        scmp_filter_ctx ctx;
        bool machine = argc == 4 && strcmp(argv[1], "--machine") == 0;
        FILE *in;
        int fd, allowed, r;

        if (argc != 3 && !machine)
                return fail("usage: seccomp-gen [--machine] NAMES OUT", EINVAL);
        argv += machine;
        in = fopen(argv[1], "re");
        if (!in)
                return fail(argv[1], errno);
        /* Not allowed: EPERM, as nspawn and Docker answer. Another architecture: the process dies. */
        ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return fail("seccomp_init", ENOMEM);
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return fail("bad-arch action", r);

        allowed = add_list(ctx, in);
        (void) fclose(in);
        if (allowed < 0)
                return fail(argv[1], allowed);
        r = add_special(ctx, machine);
        if (r < 0)
                return fail("argument rules", r);

        fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail(argv[2], errno);
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return fail("export", r);
        if (close(fd) < 0)
                return fail(argv[2], errno);
        seccomp_release(ctx);
        (void) fprintf(stderr, "seccomp-gen: %d system calls allowed%s\n", allowed, machine ? " (machine)" : "");
        return allowed > 100 ? EXIT_SUCCESS : fail("suspiciously few system calls", EINVAL);
}
