/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nspawn/nspawn-argv.h"

#define ARGV_MAX 64

/* A machine's runner and zygote keep what it takes to make a sandbox inside the machine's user
 * namespace, and nothing else: CAP_SYS_ADMIN (namespaces, mounts), CAP_SYS_CHROOT (entering a
 * sandbox's mount namespace), CAP_NET_ADMIN (its loopback), CAP_SETUID, CAP_SETGID and CAP_SETPCAP
 * (becoming the sandbox user, emptying the bounding set). The code itself keeps none. */
#define DROP_ALL_BUT_MACHINE                                                                                      \
        "CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_DAC_READ_SEARCH,CAP_FOWNER,CAP_FSETID,CAP_KILL,CAP_LINUX_IMMUTABLE,"      \
        "CAP_NET_BIND_SERVICE,CAP_NET_BROADCAST,CAP_NET_RAW,CAP_IPC_LOCK,CAP_IPC_OWNER,CAP_SYS_MODULE,"           \
        "CAP_SYS_RAWIO,CAP_SYS_PTRACE,CAP_SYS_PACCT,CAP_SYS_BOOT,CAP_SYS_NICE,"                                   \
        "CAP_SYS_RESOURCE,CAP_SYS_TIME,CAP_SYS_TTY_CONFIG,CAP_MKNOD,CAP_LEASE,CAP_AUDIT_WRITE,CAP_AUDIT_CONTROL," \
        "CAP_SETFCAP,CAP_MAC_OVERRIDE,CAP_MAC_ADMIN,CAP_SYSLOG,CAP_WAKE_ALARM,CAP_BLOCK_SUSPEND,CAP_AUDIT_READ,"  \
        "CAP_PERFMON,CAP_BPF,CAP_CHECKPOINT_RESTORE"

typedef struct Argv {
        char *v[ARGV_MAX + 1];
        size_t n;
        int error;
} Argv;

__attribute__((format(printf, 2, 3))) static void add(Argv *a, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;

        if (a->error)
                return;
        if (a->n >= ARGV_MAX) {
                a->error = -E2BIG;
                return;
        }

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                a->error = -ENOMEM;
        else
                a->v[a->n++] = s;
        va_end(ap);
}

char **nspawn_argv_free(char **argv) {
        if (!argv)
                return NULL;
        for (char **p = argv; *p; p++)
                free(*p);
        free(argv);
        return NULL;
}

/* A host name nspawn takes as --machine: [a-z0-9-], not starting or ending with '-', < 64 chars. */
static int machine_valid(const char *m) {
        size_t n = strlen(m);

        if (n == 0 || n > 63 || m[0] == '-' || m[n - 1] == '-')
                return 0;
        return strspn(m, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static int spec_valid(const NspawnSpec *s) {
        if ((s->image && (s->image[0] != '/' || strchr(s->image, ':'))) || (s->image_read_only && !s->image))
                return 0;
        if (s->workspace_dir && (s->workspace_dir[0] != '/' || strchr(s->workspace_dir, ':')))
                return 0;
        if (!s->machine || !machine_valid(s->machine) || !s->etc_dir || strchr(s->etc_dir, ':') || !s->user != s->runner_confines || !s->command || !s->command[0] || s->command[0][0] != '/')
                return 0;
        /* nspawn's --private-users=pick range; 0 would map the sandbox's root to the host's root. */
        if (s->uid_base % NSPAWN_UID_RANGE != 0 || s->uid_base < 0x80000U || s->uid_base > 0x6fff0000U)
                return 0;
        return s->workspace_bytes > 0 && s->tmp_bytes > 0 && s->nofile > 0;
}

/* The root: an image, or a fresh tmpfs with the host's /usr read-only (--volatile=yes); nothing else
 * of the host but what is bound. */
static void add_filesystem(Argv *a, const NspawnSpec *s) {
        if (s->image && s->image_read_only) {
                /* sandboxd's runtime image: the machine writes nowhere but its tmpfs mounts, and its
                 * /etc (alternatives, fonts, ld.so.cache) is the image's own. */
                add(a, "--directory=%s", s->image);
                add(a, "--read-only");
        } else if (s->image) {
                /* An agent's own OS tree: read-only, writes land in a tmpfs overlay and vanish. */
                add(a, "--directory=%s", s->image);
                add(a, "--volatile=overlay");
        } else {
                add(a, "--directory=/");
                add(a, "--volatile=yes");
                add(a, "--bind-ro=/etc/ld.so.cache");
        }
        for (const char *const *b = s->bind_ro; b && *b; b++)
                add(a, "--bind-ro=%s", *b);
        add(a, "--bind-ro=%s/passwd:/etc/passwd", s->etc_dir);
        add(a, "--bind-ro=%s/group:/etc/group", s->etc_dir);
        /* nspawn forces the mode owner to the container's root under a user namespace, so the
         * sandbox user needs the sticky world-writable mode, as for /tmp. */
        if (s->workspace_dir)
                add(a, "--bind=%s:" NSPAWN_WORKDIR, s->workspace_dir);
        else
                add(a, "--tmpfs=" NSPAWN_WORKDIR ":mode=1777,size=%" PRIu64, s->workspace_bytes);
        add(a, "--tmpfs=/tmp:mode=1777,size=%" PRIu64, s->tmp_bytes);
        add(a, "--chdir=" NSPAWN_WORKDIR);
}

/* No network, no host UIDs, no capabilities, no new privileges. */
static void add_isolation(Argv *a, const NspawnSpec *s) {
        add(a, "--private-network");
        /* A fixed range instead of "pick": no /etc/.pwd.lock serializing concurrent starts. Ownership
         * must be off: "auto" ID-map-remounts the volatile root, which fails on this systemd. */
        add(a, "--private-users=%" PRIu32 ":%u", s->uid_base, NSPAWN_UID_RANGE);
        add(a, "--private-users-ownership=off");
        add(a, "--no-new-privileges=yes");
        if (s->runner_confines)
                add(a, "--drop-capability=" DROP_ALL_BUT_MACHINE);
        else {
                add(a, "--user=%s", s->user);
                add(a, "--drop-capability=all");
        }
        add(a, "--rlimit=RLIMIT_CORE=0");
        add(a, "--rlimit=RLIMIT_NOFILE=%u", s->nofile);
}

int nspawn_argv(const NspawnSpec *spec, char ***ret) {
        Argv a = {};
        char **v;

        if (!spec_valid(spec))
                return -EINVAL;

        add(&a, NSPAWN_BINARY);
        add(&a, "--quiet");
        add(&a, "--machine=%s", spec->machine);
        /* Stay in the transient unit that the worker started (its limits and timeout apply) and skip
         * machined, .nspawn files and host configuration copies: none of them is needed here. */
        add(&a, "--register=no");
        add(&a, "--keep-unit");
        add(&a, "--settings=no");
        add(&a, "--link-journal=no");
        add(&a, "--resolv-conf=off");
        add(&a, "--timezone=off");
        /* Plain pipes: no PTY (no TIOCSTI), EOF passes through. */
        add(&a, "--pipe");
        /* sandboxd's runner is the container's PID 1: as init of its PID namespace it cannot be
         * killed from inside (kill(-1) spares it), and when it exits every process left dies. Any
         * other payload runs under nspawn's stub init, which reaps orphans. */
        if (!spec->runner_confines)
                add(&a, "--as-pid2");
        add_filesystem(&a, spec);
        add_isolation(&a, spec);
        add(&a, "--");
        for (const char *const *c = spec->command; *c; c++)
                add(&a, "%s", *c);

        if (a.error) {
                for (size_t i = 0; i < a.n; i++)
                        free(a.v[i]);
                return a.error;
        }

        v = calloc(a.n + 1, sizeof(char *));
        if (!v) {
                for (size_t i = 0; i < a.n; i++)
                        free(a.v[i]);
                return -ENOMEM;
        }
        for (size_t i = 0; i < a.n; i++)
                v[i] = a.v[i];
        *ret = v;
        return 0;
}

uint32_t nspawn_uid_base(uint32_t random) {
        return (0x8U + random % (0x6fffU - 0x8U)) << 16;
}
