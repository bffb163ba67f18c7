/* SPDX-License-Identifier: MIT */
/* What every machine and tool sandbox the broker starts has in common: its unit, its journal tag, a
 * UID range of its own, the limits of the configuration, and the runtime image it runs on. */
#include <errno.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/config.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/broker.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/runner-request.h"
#include "nspawn/unit-name.h"

int broker_reserve_uid_range(Broker *b, const char *id, uint32_t *ret) {
        uint32_t rnd;

        /* The search starts at random, so that ranges are not reused in order. */
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        return uid_range_reserve(b->uid_dir_fd, id, rnd, false, ret);
}

/* Only a listening unix stream socket may become a warm sandbox's stdin. */
int broker_check_listener(int fd) {
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

/* A machine whose runner gives each sandbox cgroups of its own (nspawn/runner/cgroup.h): on a host
 * with the cgroup v1 memory hierarchy, the machine's cgroup there is handed to the machine's root
 * before nspawn starts, by the runner's binary as root on the host (ExecStartPre=). A cgroup v2 host
 * needs nothing: nspawn hands over the machine's payload cgroup itself. */
void sandbox_base_delegate_cgroups(const Config *cfg, SandboxBase *s) {
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

/* What nspawn leaves of a machine it could not tidy, taken away by the unit once every process of it
 * is gone. systemd 256 and later's nspawn (Debian 13's) mounts a tmpfs for the machine's exported
 * sockets at /run/systemd/nspawn/unix-export/MACHINE and removes it only when it exits itself: a
 * machine killed (a timeout, a pause, a stop) leaves the mount behind, and the next start of that
 * name (a session's, resumed) is refused ("Mount point ... exists already"). Where there is none
 * (Debian 12's nspawn), both commands fail, and are let fail. */
static void tidy_on_stop(SandboxBase *s, bool release) {
        size_t n = 0;

        (void) snprintf(s->export_path, sizeof(s->export_path), "/run/systemd/nspawn/unix-export/%s", s->ns.machine);
        s->export_umount[0] = "/bin/umount";
        s->export_umount[1] = "--lazy";
        s->export_umount[2] = "--quiet";
        s->export_umount[3] = s->export_path;
        s->export_umount[4] = NULL;
        s->export_rmdir[0] = "/bin/rmdir";
        s->export_rmdir[1] = s->export_path;
        s->export_rmdir[2] = NULL;
        if (release)
                s->stop_post[n++] = s->release;
        s->stop_post[n++] = s->export_umount;
        s->stop_post[n++] = s->export_rmdir;
        s->stop_post[n] = NULL;
        s->spec.exec_stop_post = s->stop_post;
}

/* A machine's range (not a session's: that one is kept while the session is) is given up by its
 * unit once every process of it is gone, however it ends; the broker need not be there then. */
static void release_on_stop(const Broker *b, uint32_t uid_base, SandboxBase *s) {
        (void) snprintf(s->release_path, sizeof(s->release_path), "%s/%08" PRIx32, b->uid_dir, uid_base);
        s->release[0] = "/bin/rm";
        s->release[1] = "-f";
        s->release[2] = s->release_path;
        s->release[3] = NULL;
        tidy_on_stop(s, true);
}

/* uid_base: the range the machine runs with, reserved for it by the caller. */
int sandbox_base(const Config *cfg, const char *id, uint32_t uid_base, const char *field_name, const char *field_value,
                 SandboxBase *ret) {
        (void) unit_name_from_id(id, ret->unit, sizeof(ret->unit));
        (void) snprintf(ret->etc, sizeof(ret->etc), "%s/etc", cfg->lib_dir);
        (void) snprintf(ret->field, sizeof(ret->field), "%s=%s", field_name, field_value);
        ret->ns = (NspawnSpec){.machine = id, .uid_base = uid_base, .workspace_bytes = cfg->workspace_bytes, .tmp_bytes = cfg->tmp_bytes, .nofile = cfg->nofile, .etc_dir = ret->etc};
        ret->spec = (SandboxSpec){.unit = ret->unit, .slice = cfg->slice, .log_field = ret->field, .nspawn = &ret->ns, .memory_max = cfg->memory_max, .tasks_max = cfg->tasks_max, .cpu_quota_per_sec_usec = cfg->cpu_quota_percent * USEC_PER_SEC / 100};
        tidy_on_stop(ret, false);
        return 0;
}

/* A machine's or a tool sandbox's base, with a range of its own for as long as its unit runs. */
int sandbox_base_machine(Broker *b, const char *id, const char *field_name, const char *field_value, SandboxBase *ret) {
        uint32_t uid_base = 0;
        int r = broker_reserve_uid_range(b, id, &uid_base);

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
int broker_runtime_tree(const Config *cfg, char **ret, Error *err) {
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

const char *broker_ca_bind(const Config *cfg, char *buf, size_t size) {
        if (!cfg->egress_ca_bundle[0])
                return NULL;
        /* A machine that nspawn cannot start for a missing bind would take every execution with
         * it: without the file (none by default), the image's own store; one unreadable is said. */
        if (access(cfg->egress_ca_bundle, R_OK) < 0) {
                if (errno != ENOENT)
                        (void) log_warning_errno(-errno, "SANDBOXD_EGRESS_CA_BUNDLE %s cannot be read, machines get the image's CAs: %s", cfg->egress_ca_bundle, strerror(errno));
                return NULL;
        }
        if ((size_t) snprintf(buf, size, "%s:" MACHINE_EGRESS_CA, cfg->egress_ca_bundle) >= size)
                return NULL;
        return buf;
}
