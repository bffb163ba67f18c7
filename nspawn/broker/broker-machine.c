/* SPDX-License-Identifier: MIT */
/* The pool's machines and every sandbox unit of sandboxd's: a warm machine's start, a kill, a
 * failed unit's reset, the list. Each is one or two calls to systemd, answered when systemd answers. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <systemd/sd-bus.h>

#include "lib/alloc-util.h"
#include "lib/config.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/broker/broker.h"
#include "nspawn/broker/uid-range.h"
#include "nspawn/unit-name.h"

/* How long a machine whose start failed may take to go before its range is given up anyway by its
 * ExecStopPost= (or found free by the next broker's start). */
#define FAILED_START_STOP_USEC (15 * USEC_PER_SEC)

/* The machine's unit is gone (or stopping it failed): its range is free once it is gone. */
static void on_failed_start_stopped(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        if (r >= 0)
                (void) uid_range_release(q->broker->uid_dir_fd, q->req.id);
        request_free(q);
}

static void on_warm_started(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        if (r >= 0) {
                request_finish(q, 0);
                return;
        }
        /* Answered now; then the unit, if the failed start left one, is stopped and waited for,
         * and the machine's range given up. */
        request_reply(q, r);
        q->err = (Error){};
        (void) unit_name_from_id(q->req.id, q->unit, sizeof(q->unit));
        if (broker_stop_unit(q, q->unit, FAILED_START_STOP_USEC, on_failed_start_stopped) < 0)
                request_free(q);
}

typedef struct WarmArgs {
        char lib_bind[600], ca_bind[300], workspace[64], tmp[64], executions[64], preload[300], openblas[64];
} WarmArgs;

/* The runner's command line in a warm machine, and the binds it needs. */
static int warm_command(const Config *cfg, WarmArgs *a, const char **command, size_t n, Error *err) {
        const char *argv[] = {MACHINE_LIB_DIR "/sandboxd-runner", "--listen", RUNNER_UID_OPTION,
                              "--zygote=" MACHINE_LIB_DIR "/sandboxd-zygote", "--seccomp=" MACHINE_LIB_DIR "/seccomp.bpf", "--machine-seccomp=" MACHINE_LIB_DIR "/seccomp-machine.bpf",
                              "--import-allow=" MACHINE_LIB_DIR "/import-allow.list", a->workspace, a->tmp, a->executions, a->preload,
                              cfg->openblas_coretype[0] ? a->openblas : NULL, NULL};

        if (n < ELEMENTSOF(argv))
                return -E2BIG;
        memcpy(command, argv, sizeof(argv));
        if ((size_t) snprintf(a->lib_bind, sizeof(a->lib_bind), "%s:" MACHINE_LIB_DIR, cfg->lib_dir) >= sizeof(a->lib_bind))
                return error_set(err, -ENAMETOOLONG, "SANDBOXD_LIB_DIR is too long");
        (void) snprintf(a->preload, sizeof(a->preload), "--preload=%s", cfg->preload);
        (void) snprintf(a->openblas, sizeof(a->openblas), "--setenv=OPENBLAS_CORETYPE=%s", cfg->openblas_coretype);
        /* Each execution's sandbox gets fresh filesystems of these sizes; the machine serves this
         * many executions, one at a time, then its runner exits and the unit ends. */
        (void) snprintf(a->workspace, sizeof(a->workspace), "--workspace-bytes=%" PRIu64, cfg->workspace_bytes);
        (void) snprintf(a->tmp, sizeof(a->tmp), "--tmp-bytes=%" PRIu64, cfg->tmp_bytes);
        (void) snprintf(a->executions, sizeof(a->executions), "--executions=%u", cfg->executions_per_machine);
        return 0;
}

/* A warm machine's start: answered once systemd has queued it (the pool manager follows it). */
static int start_warm(Request *q, SandboxBase *s) {
        const Config *cfg = q->broker->config;
        cleanup_bus_message sd_bus_message *m = NULL;
        cleanup_free char *tree = NULL;
        const char *command[16];
        WarmArgs a;
        const char *binds[] = {a.lib_bind, broker_ca_bind(cfg, a.ca_bind, sizeof(a.ca_bind)), NULL};
        int r;

        r = broker_runtime_tree(cfg, &tree, &q->err);
        if (r >= 0)
                r = warm_command(cfg, &a, command, ELEMENTSOF(command), &q->err);
        if (r < 0)
                return r;
        /* The runtime image is the machine's root, as it is; sandboxd's own binaries come from the
         * host, at a fixed place inside. */
        s->ns.image = tree;
        s->ns.image_read_only = true;
        s->ns.bind_ro = binds;
        s->ns.runner_confines = true;
        s->ns.command = command;
        /* Idle warm sandboxes are replaced before the TTL; this only bounds a forgotten one. */
        s->spec.runtime_max_usec = (cfg->pool_ttl_s + 60 + 60) * USEC_PER_SEC;
        sandbox_base_delegate_cgroups(cfg, s);

        if (!broker_bus(q->broker))
                return broker_fail(&q->err, -ENOTCONN, NULL);
        r = sandbox_start_message(q->broker->bus, &s->spec, q->passed_fd, &m);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call(q, m, on_warm_started);
}

int machine_start_warm(Request *q) {
        SandboxBase s;
        int r = broker_check_listener(q->passed_fd);

        if (r >= 0)
                r = sandbox_base_machine(q->broker, q->req.id, "SANDBOX_ID", q->req.id, &s);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        r = start_warm(q, &s);
        if (r < 0)
                (void) uid_range_release(q->broker->uid_dir_fd, q->req.id);
        return r;
}

static void on_killed(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        /* A unit still starting has nothing to kill yet: stopping it cancels the start. */
        broker_call_manager_forget(q->broker, "StopUnit", "ss", q->unit, "replace");
        request_finish(q, r);
}

int machine_kill(Request *q) {
        (void) unit_name_from_id(q->req.id, q->unit, sizeof(q->unit));
        return broker_call_manager(q, on_killed, "KillUnit", "ssi", q->unit, "all", SIGKILL);
}

static void on_reset(Request *q, int r, sd_bus_message *reply) {
        (void) reply;
        q->err = (Error){}; /* as before: the errno's words only */
        request_finish(q, r);
}

int machine_reset_failed(Request *q) {
        (void) unit_name_from_id(q->req.id, q->unit, sizeof(q->unit));
        return broker_call_manager(q, on_reset, "ResetFailedUnit", "s", q->unit);
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
static void on_listed(Request *q, int r, sd_bus_message *reply) {
        UnitList l = {};
        cleanup_close int fd = -1;

        if (r >= 0)
                r = sandbox_list_read(reply, list_unit, &l);
        if (r >= 0)
                r = l.error;
        if (r >= 0 && l.n > UINT32_MAX)
                r = -E2BIG;
        if (r >= 0) {
                fd = memfd_create("sandboxd-units", MFD_CLOEXEC);
                r = fd < 0 ? negative_errno() : fd_write_all(fd, l.units, l.n * sizeof(*l.units));
        }
        free(l.units);
        if (r >= 0) {
                q->rep.n_units = (uint32_t) l.n;
                q->out_fd = TAKE_FD(fd);
        } else if (!q->err.message[0])
                (void) broker_fail(&q->err, r, NULL);
        request_finish(q, r);
}

int machine_list(Request *q) {
        static const char *const patterns[] = {"machine-*.service", "tool-*.service", NULL};
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        if (!broker_bus(q->broker))
                return broker_fail(&q->err, -ENOTCONN, NULL);
        r = sandbox_list_message(q->broker->bus, patterns, &m);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call(q, m, on_listed);
}
