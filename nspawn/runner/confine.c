/* SPDX-License-Identifier: MIT */
/* sandboxd-confine FILTER PROGRAM [ARG...]: installs the code's system-call filter (seccomp-gen's
 * FILTER, a raw struct sock_filter array) on itself, with no_new_privs, then executes PROGRAM. A
 * tool call's sandbox starts the image's own interpreter through it: the image is the agent's tree,
 * so nothing in it (its python3, its libraries, its site-packages) runs before the filter, and the
 * filter is the same one an execution's code gets. Linked statically: it runs inside that tree,
 * whose libc is the agent's too. nspawn's own filter stays under it; this one narrows it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int fail(const char *what, int status) {
        (void) fprintf(stderr, "sandboxd-confine: %s: %s\n", what, strerror(errno));
        return status;
}

/* The whole file, which must be a whole number of instructions the kernel takes. */
static int read_filter(const char *path, struct sock_filter *insns, size_t max, unsigned short *ret_len) {
        size_t n = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(fd, (char *) insns + n, max * sizeof(insns[0]) - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = -errno;

                        (void) close(fd);
                        return r;
                }
                if (k == 0 || (n += (size_t) k) == max * sizeof(insns[0]))
                        break;
        }
        (void) close(fd);
        if (n == 0 || n % sizeof(insns[0]) != 0 || n / sizeof(insns[0]) >= max)
                return -EINVAL;
        *ret_len = (unsigned short) (n / sizeof(insns[0]));
        return 0;
}

int main(int argc, char **argv) {
        static struct sock_filter insns[BPF_MAXINSNS + 1];
        struct sock_fprog prog = {.filter = insns};
        int r;

        if (argc < 3 || argv[2][0] != '/') {
                (void) fprintf(stderr, "usage: sandboxd-confine FILTER /PROGRAM [ARG...]\n");
                return 127;
        }
        r = read_filter(argv[1], insns, sizeof(insns) / sizeof(insns[0]), &prog.len);
        if (r < 0) {
                errno = -r;
                return fail(argv[1], 127);
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return fail("installing the system-call filter", 127);
        (void) execv(argv[2], argv + 2);
        /* As nspawn's own payload that cannot be executed ends: the caller tells an interpreter
         * that never came up by this status (fcgi/route-call.c). */
        return fail(argv[2], EXIT_FAILURE);
}
