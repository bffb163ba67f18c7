/* SPDX-License-Identifier: MIT */
/* Sessions' machines (BROKER_SESSION_*): each on a disk of its own, formatted on its creation by a
 * unit of systemd's (the broker has no capability), mounted by systemd while its machine runs, and
 * kept until the session is deleted. The slow steps (the format, the machine's stop, the unmount)
 * are systemd's jobs, which the broker waits for without holding up anyone else. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "lib/config.h"
#include "lib/macro.h"
#include "nspawn/broker/broker.h"
#include "nspawn/broker/session-list.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/unit-name.h"

/* A new disk's format (mke2fs, then debugfs) at most. */
#define FORMAT_TIMEOUT_USEC (60 * USEC_PER_SEC)
/* The session's machine's stop: SIGKILL first, so this is systemd's own stop and a margin. */
#define MACHINE_STOP_TIMEOUT_USEC (15 * USEC_PER_SEC)
/* The disk's unmount, which writes back what the session's code left unwritten. */
#define UNMOUNT_TIMEOUT_USEC (30 * USEC_PER_SEC)

/* Into q: the session's machine unit, its disk <session_dir>/<id>.img, and the mount unit of
 * SESSION_DISK_DIR/<what follows "session-"> while mounted. where (if not NULL) gets the mount point. */
static int session_paths(Request *q, char *where, size_t size) {
        const char *suffix = strchr(q->req.id, '-') + 1; /* broker_request_check() made sure of the form */

        if ((size_t) snprintf(q->image, sizeof(q->image), "%s/%s.img", q->broker->config->session_dir, q->req.id) >= sizeof(q->image))
                return -ENAMETOOLONG;
        if (where) {
                /* A member's "m1-<12>" is mounted at m1/<12>: a mount point's unit name has no escapes
                 * (sandbox.c), and its name is the same "run-sandboxd-disks-m1-<12>.mount". */
                if ((size_t) snprintf(where, size, SESSION_DISK_DIR "/%s", suffix) >= size)
                        return -ENAMETOOLONG;
                for (char *c = where + strlen(SESSION_DISK_DIR) + 1; *c; c++)
                        if (*c == '-')
                                *c = '/';
        }
        (void) snprintf(q->mount_unit, sizeof(q->mount_unit), "run-sandboxd-disks-%s.mount", suffix);
        return unit_name_from_id(q->req.id, q->unit, sizeof(q->unit));
}

/* A session keeps its UID range from its creation to its deletion, paused or not: the files on its
 * disk stay its own, and no other machine gets the range meanwhile. A session made before ranges
 * were reserved has the one its id hashed to, which it takes now if nobody else holds it. */
static int session_uid_base(Request *q, uint32_t *ret) {
        Broker *b = q->broker;
        int r;

        r = uid_range_find(b->uid_dir_fd, q->req.id, ret);
        /* A create for an id that holds a range already is refused before a second one is taken:
         * a resume would start with either, and its disk's files belong to one. */
        if (q->req.op == BROKER_SESSION_CREATE) {
                if (r == -ENOENT)
                        return broker_reserve_uid_range(b, q->req.id, ret);
                return r < 0 ? r : -EEXIST;
        }
        if (r != -ENOENT)
                return r;
        return uid_range_reserve(b->uid_dir_fd, q->req.id, uid_range_of_id(q->req.id), true, ret);
}

static void on_session_started(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        request_finish(q, r);
}

static void on_formatted(Request *q, int r, sd_bus_message *reply) {
        cleanup_bus_message sd_bus_message *then = TAKE_PTR(q->then);

        (void) reply;
        if (r >= 0)
                r = broker_call(q, then, on_session_started);
        if (r < 0) {
                (void) unlink(q->image); /* never a half-made disk taken for a made one */
                request_finish(q, r);
        }
}

/* The new disk's format: a oneshot unit whose job is over when mke2fs is. */
static int format_disk(Request *q, const SandboxBase *s) {
        const Config *cfg = q->broker->config;
        cleanup_bus_message sd_bus_message *m = NULL;
        char format_unit[64], delay[16];
        const char *sleep_first[] = {"/bin/sleep", delay, NULL};
        SandboxSpec format = s->spec;
        struct stat st;
        int r;

        if (stat(q->image, &st) == 0)
                return error_set(&q->err, -EEXIST, "the session's disk %s exists already", q->image);
        (void) snprintf(format_unit, sizeof(format_unit), "sandboxd-disk-%s.service", strchr(q->req.id, '-') + 1);
        format.unit = format_unit;
        format.exec_start_pre = NULL;
        if (q->broker->test_format_delay_s > 0) {
                (void) snprintf(delay, sizeof(delay), "%u", q->broker->test_format_delay_s);
                format.exec_start_pre = sleep_first;
        }
        /* The sandbox user (nspawn/runner/passwd) inside the session's UID range. */
        r = sandbox_disk_format_message(q->broker->bus, &format, q->image, cfg->session_disk_bytes, s->ns.uid_base + 1000, &m);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call_job(q, m, FORMAT_TIMEOUT_USEC, on_formatted);
}

typedef struct SessionArgs {
        char lib_bind[600], ca_bind[300], workspace[64], tmp[64], preload[300], openblas[64], where[64];
} SessionArgs;

/* The machine's start, built now and sent once the disk is there (after its format, for a create). */
static int session_machine(Request *q, SandboxBase *s, SessionArgs *a, const char *tree) {
        const Config *cfg = q->broker->config;
        const char *command[] = {MACHINE_LIB_DIR "/sandboxd-runner", "--listen", "--session", RUNNER_UID_OPTION,
                                 "--zygote=" MACHINE_LIB_DIR "/sandboxd-zygote", "--seccomp=" MACHINE_LIB_DIR "/seccomp.bpf", "--machine-seccomp=" MACHINE_LIB_DIR "/seccomp-machine.bpf",
                                 a->workspace, a->tmp, a->preload, cfg->openblas_coretype[0] ? a->openblas : NULL, NULL};
        const char *binds[] = {a->lib_bind, broker_ca_bind(cfg, a->ca_bind, sizeof(a->ca_bind)), NULL};
        int r;

        if ((size_t) snprintf(a->lib_bind, sizeof(a->lib_bind), "%s:" MACHINE_LIB_DIR, cfg->lib_dir) >= sizeof(a->lib_bind))
                return error_set(&q->err, -ENAMETOOLONG, "SANDBOXD_LIB_DIR is too long");
        s->ns.image = tree;
        s->ns.image_read_only = true;
        s->ns.bind_ro = binds;
        s->ns.workspace_dir = a->where;
        (void) snprintf(a->preload, sizeof(a->preload), "--preload=%s", cfg->preload);
        (void) snprintf(a->openblas, sizeof(a->openblas), "--setenv=OPENBLAS_CORETYPE=%s", cfg->openblas_coretype);
        (void) snprintf(a->workspace, sizeof(a->workspace), "--workspace-bytes=%" PRIu64, cfg->session_disk_bytes);
        (void) snprintf(a->tmp, sizeof(a->tmp), "--tmp-bytes=%" PRIu64, cfg->tmp_bytes);
        s->ns.runner_confines = true;
        s->ns.command = command;
        s->spec.runtime_max_usec = UINT64_MAX;
        sandbox_base_delegate_cgroups(cfg, s);
        s->spec.disk_image = q->image;
        s->spec.disk_where = a->where;
        r = sandbox_start_message(q->broker->bus, &s->spec, q->passed_fd, &q->then);
        /* The message holds copies: the command and binds of this frame are not s's any more. */
        s->ns.command = NULL;
        s->ns.bind_ro = NULL;
        return r < 0 ? broker_fail(&q->err, r, NULL) : 0;
}

/* A session's machine: a warm machine's runner in --session mode, working in the session's own disk
 * (formatted on the first start), with no time limit of its own: each run has one, and the session
 * is paused when idle. */
int session_start(Request *q) {
        cleanup_bus_message sd_bus_message *m = NULL;
        cleanup_free char *tree = NULL;
        SessionArgs a = {};
        SandboxBase s;
        struct stat st;
        uint32_t uid_base = 0;
        int r = broker_check_listener(q->passed_fd);

        if (r >= 0)
                r = session_paths(q, a.where, sizeof(a.where));
        if (r >= 0)
                r = session_uid_base(q, &uid_base);
        if (r >= 0)
                r = sandbox_base(q->broker->config, q->req.id, uid_base, "SESSION_ID", q->req.id, &s);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        r = broker_runtime_tree(q->broker->config, &tree, &q->err);
        if (r < 0)
                return r;
        if (!broker_bus(q->broker))
                return broker_fail(&q->err, -ENOTCONN, NULL);
        /* Only a new session gets a new disk: one whose disk is gone (deleted while it was being
         * resumed, or lost) is not brought back empty. */
        if (stat(q->image, &st) < 0 && (errno != ENOENT || q->req.op != BROKER_SESSION_CREATE))
                return error_set(&q->err, -errno, "the session's disk %s: %s", q->image, strerror(errno));
        r = session_machine(q, &s, &a, tree);
        if (r < 0)
                return r;
        if (q->req.op == BROKER_SESSION_CREATE)
                return format_disk(q, &s);
        m = TAKE_PTR(q->then);
        return broker_call(q, m, on_session_started);
}

static void on_unmounted(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        if (r >= 0 && q->req.op == BROKER_SESSION_DELETE && unlink(q->image) < 0 && errno != ENOENT)
                r = error_set(&q->err, -errno, "could not remove %s: %s", q->image, strerror(errno));
        /* Its disk gone, its range is free: nothing of the host is owned by it any more. */
        if (r >= 0 && q->req.op == BROKER_SESSION_DELETE)
                (void) uid_range_release(q->broker->uid_dir_fd, q->req.id);
        request_finish(q, r);
}

/* The machine is gone; its disk is unmounted now (systemd would, as nothing needs it any more, but
 * the answer waits for it: two mounts of one ext4 at once, a start right after, would corrupt it). */
static void on_machine_stopped(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        if (r < 0) {
                Error why = q->err;

                request_finish(q, error_set(&q->err, r, "the session's machine did not stop: %s", error_message(&why, r)));
                return;
        }
        /* A machine that failed stays loaded, as failed, until it is reset. */
        broker_call_manager_forget(q->broker, "ResetFailedUnit", "s", q->unit);
        r = broker_stop_unit(q, q->mount_unit, UNMOUNT_TIMEOUT_USEC, on_unmounted);
        if (r < 0)
                request_finish(q, r);
}

static void on_machine_killed(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        (void) r; /* a machine that is not there is stopped already */
        q->err = (Error){};
        r = broker_stop_unit(q, q->unit, MACHINE_STOP_TIMEOUT_USEC, on_machine_stopped);
        if (r < 0)
                request_finish(q, r);
}

/* The session's machine killed and gone, then its disk unmounted; with delete, the disk removed. */
int session_stop(Request *q) {
        int r = session_paths(q, NULL, 0);

        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call_manager(q, on_machine_killed, "KillUnit", "ssi", q->unit, "all", SIGKILL);
}

static void on_session_units(Request *q, int r, sd_bus_message *reply) {
        Broker *b = q->broker;

        if (r >= 0)
                r = session_list_memfd(reply, b->config->session_dir, b->uid_dir_fd, &q->rep.n_units, &q->out_fd);
        if (r < 0 && !q->err.message[0])
                (void) broker_fail(&q->err, r, NULL);
        request_finish(q, r);
}

int session_list_units(Request *q) {
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        if (!broker_bus(q->broker))
                return broker_fail(&q->err, -ENOTCONN, NULL);
        r = sandbox_list_message(q->broker->bus, session_list_patterns, &m);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call(q, m, on_session_units);
}
