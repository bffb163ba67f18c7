/* SPDX-License-Identifier: MIT */
/* seccomp-gen NAMES OUT: compiles the allow-list (one system call name per line in NAMES, as
 * seccomp-expand prints it) into a classic BPF program for the native architecture, written to OUT
 * as the raw struct sock_filter array that sandboxd-runner loads. A build tool: it runs once, where
 * sandboxd is built, not for every sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const char *what, int r) {
        (void) fprintf(stderr, "seccomp-gen: %s: %s\n", what, strerror(r < 0 ? -r : r));
        return EXIT_FAILURE;
}

int main(int argc, char **argv) {
        scmp_filter_ctx ctx;
        char line[128];
        unsigned allowed = 0;
        FILE *in;
        int fd, r;

        if (argc != 3)
                return fail("usage: seccomp-gen NAMES OUT", EINVAL);
        in = fopen(argv[1], "re");
        if (!in)
                return fail(argv[1], errno);
        /* Not allowed: EPERM, as nspawn answers. Another architecture: the process dies. */
        ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return fail("seccomp_init", ENOMEM);
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return fail("bad-arch action", r);

        while (fgets(line, sizeof(line), in)) {
                int nr;

                line[strcspn(line, "\n")] = 0;
                if (!line[0])
                        continue;
                /* Names of other architectures (e.g. *_time64) do not exist here: skipped, as nspawn does. */
                nr = seccomp_syscall_resolve_name(line);
                if (nr == __NR_SCMP_ERROR)
                        continue;
                allowed++;
                if (nr == SCMP_SYS(socket))
                        continue; /* below */
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
                if (r < 0 && r != -EEXIST)
                        return fail(line, r);
        }
        (void) fclose(in);

        /* socket(), but as nspawn has it: audit sockets fail the way they do on a kernel without
         * audit. (An unconditional rule would win over the conditional one: hence three.) */
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_NETLINK));
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
                                     SCMP_A2(SCMP_CMP_NE, NETLINK_AUDIT));
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
                                     SCMP_A2(SCMP_CMP_EQ, NETLINK_AUDIT));
        if (r < 0)
                return fail("socket rules", r);

        fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail(argv[2], errno);
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return fail("export", r);
        if (close(fd) < 0)
                return fail(argv[2], errno);
        seccomp_release(ctx);
        (void) fprintf(stderr, "seccomp-gen: %u system calls allowed\n", allowed);
        return allowed > 100 ? EXIT_SUCCESS : fail("suspiciously few system calls", EINVAL);
}
