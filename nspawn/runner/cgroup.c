/* SPDX-License-Identifier: MIT */
/* A cgroup per sandbox inside the machine's, for what each one used (cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/alloc-util.h"
#include "lib/cgroup-util.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/runner/cgroup.h"

#define V2_MOUNT "/sys/fs/cgroup"
#define V2_PRIVATE_MOUNT "/run/sandboxd-cgroup" /* where a hybrid host's machine has none mounted */
#define V1_MEMORY "/sys/fs/cgroup/memory"

static const char *v2_root;   /* NULL: no cgroup v2 of ours */
static bool v2_memory;        /* memory.peak in the sandboxes' v2 cgroups */
static const char *v1_memory; /* NULL: no v1 memory hierarchy of ours */

/* Sandboxes' cgroups that still had processes when they were to go: removed later. */
static unsigned *leftover;
static size_t n_leftover, max_leftover;

static bool is_fs(const char *path, long magic) {
        struct statfs sf;

        return statfs(path, &sf) == 0 && sf.f_type == magic;
}

static int write_file(const char *path, const char *text) {
        cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return fd_write_all(fd, text, strlen(text));
}

static bool has_word(const char *path, const char *word) {
        char buf[512], *save = NULL;
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) < 0)
                return false;
        buf[n] = 0;
        for (char *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
                if (strcmp(w, word) == 0)
                        return true;
        return false;
}

/* On a cgroup v2 host with the memory controller in the machine's cgroup: the runner (and the
 * zygotes it starts after) into a leaf of their own, then the controller for the children. A cgroup
 * that holds processes cannot hand controllers down. */
static bool v2_enable_memory(void) {
        char path[256];

        if (!has_word(V2_MOUNT "/cgroup.controllers", "memory"))
                return false;
        if (has_word(V2_MOUNT "/cgroup.subtree_control", "memory"))
                return true;
        (void) snprintf(path, sizeof(path), "%s/runner", v2_root);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return false;
        (void) snprintf(path, sizeof(path), "%s/runner/cgroup.procs", v2_root);
        if (write_file(path, "0") < 0)
                return false;
        (void) snprintf(path, sizeof(path), "%s/cgroup.subtree_control", v2_root);
        return write_file(path, "+memory") >= 0;
}

bool cgroup_setup(void) {
        if (is_fs(V2_MOUNT, CGROUP2_SUPER_MAGIC) && access(V2_MOUNT "/cgroup.procs", W_OK) == 0) {
                v2_root = V2_MOUNT;
                v2_memory = v2_enable_memory();
        } else if ((mkdir(V2_PRIVATE_MOUNT, 0700) >= 0 || errno == EEXIST) &&
                   mount("cgroup2", V2_PRIVATE_MOUNT, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) >= 0) {
                /* Mounted in the machine's cgroup namespace: its root is the machine's payload. */
                if (access(V2_PRIVATE_MOUNT "/cgroup.procs", W_OK) == 0)
                        v2_root = V2_PRIVATE_MOUNT;
                else
                        (void) umount2(V2_PRIVATE_MOUNT, MNT_DETACH);
        }
        if (!v2_memory && is_fs(V1_MEMORY, CGROUP_SUPER_MAGIC) && access(V1_MEMORY, W_OK) == 0)
                v1_memory = V1_MEMORY;
        return v2_root || v1_memory;
}

static void sandbox_path(char *buf, size_t size, const char *root, unsigned id, const char *file) {
        (void) snprintf(buf, size, "%s/sandbox-%u%s%s", root, id, file ? "/" : "", file ? file : "");
}

/* The cgroup procs file of sandbox id under root, made if needed; -errno. */
static int make_one(const char *root, unsigned id) {
        char path[256];
        int fd;

        sandbox_path(path, sizeof(path), root, id, NULL);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        sandbox_path(path, sizeof(path), root, id, "cgroup.procs");
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;

                sandbox_path(path, sizeof(path), root, id, NULL);
                (void) rmdir(path);
                return r;
        }
        return fd;
}

int cgroup_sandbox_make(unsigned id, int ret_fds[CGROUP_FDS_MAX], unsigned *ret_n) {
        const char *roots[CGROUP_FDS_MAX] = {v2_root, v1_memory};
        unsigned n = 0;

        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                int fd;

                if (!roots[i])
                        continue;
                fd = make_one(roots[i], id);
                if (fd < 0) {
                        while (n > 0)
                                (void) close(ret_fds[--n]);
                        cgroup_sandbox_remove(id);
                        return fd;
                }
                ret_fds[n++] = fd;
        }
        *ret_n = n;
        return 0;
}

void cgroup_sandbox_usage(unsigned id, CgroupUsage *ret) {
        char path[256];

        *ret = (CgroupUsage){};
        if (v2_root) {
                sandbox_path(path, sizeof(path), v2_root, id, "cpu.stat");
                ret->has_cpu = cgroup_read_number(path, "usage_usec", &ret->cpu_usec) >= 0;
        }
        if (v2_memory) {
                sandbox_path(path, sizeof(path), v2_root, id, "memory.peak");
                ret->has_memory = cgroup_read_number(path, NULL, &ret->memory_peak_bytes) >= 0;
                sandbox_path(path, sizeof(path), v2_root, id, "memory.events");
                (void) cgroup_read_number(path, "oom_kill", &ret->oom_kills);
        } else if (v1_memory) {
                sandbox_path(path, sizeof(path), v1_memory, id, "memory.max_usage_in_bytes");
                ret->has_memory = cgroup_read_number(path, NULL, &ret->memory_peak_bytes) >= 0;
                sandbox_path(path, sizeof(path), v1_memory, id, "memory.oom_control");
                (void) cgroup_read_number(path, "oom_kill", &ret->oom_kills);
        }
}

int cgroup_sandbox_reset_peak(unsigned id) {
        char path[256];

        if (v2_memory || !v1_memory)
                return -EOPNOTSUPP;
        sandbox_path(path, sizeof(path), v1_memory, id, "memory.max_usage_in_bytes");
        return write_file(path, "0");
}

/* 0 once sandbox id's cgroups are gone (or never were), -EBUSY while processes are still in one. */
static int remove_one(unsigned id) {
        const char *roots[] = {v2_root, v1_memory};
        char path[256];
        int r = 0;

        if (v2_root) {
                /* cgroup.kill (Linux 5.14): what the init left dies at once; the init's end kills it
                 * too, as its PID namespace goes. */
                sandbox_path(path, sizeof(path), v2_root, id, "cgroup.kill");
                (void) write_file(path, "1");
        }
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                if (!roots[i])
                        continue;
                sandbox_path(path, sizeof(path), roots[i], id, NULL);
                if (rmdir(path) < 0 && errno != ENOENT)
                        r = -EBUSY;
        }
        return r;
}

void cgroup_sandbox_remove(unsigned id) {
        size_t kept = 0;

        for (size_t i = 0; i < n_leftover; i++)
                if (remove_one(leftover[i]) < 0)
                        leftover[kept++] = leftover[i];
        n_leftover = kept;
        if (remove_one(id) < 0 && ARRAY_GROW(leftover, max_leftover, n_leftover, 4) >= 0)
                leftover[n_leftover++] = id;
}

int cgroup_delegate_v1(uid_t uid) {
        char line[1024], path[4096];
        FILE *f;
        int r;

        if (!is_fs(V1_MEMORY, CGROUP_SUPER_MAGIC))
                return 0;
        f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return -errno;
        r = -ENOENT;
        while (fgets(line, sizeof(line), f)) {
                char *p = strstr(line, ":memory:");

                if (!p)
                        continue;
                p += strlen(":memory:");
                p[strcspn(p, "\n")] = 0;
                if ((size_t) snprintf(path, sizeof(path), V1_MEMORY "%s", p) >= sizeof(path)) {
                        r = -ENAMETOOLONG;
                        break;
                }
                /* The directory alone: the runner may make and remove children in it, whose files
                 * are its own; the machine's own limits stay root's. */
                r = chown(path, uid, uid) < 0 ? -errno : 0;
                break;
        }
        (void) fclose(f);
        return r;
}
