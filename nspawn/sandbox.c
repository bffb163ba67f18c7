/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/nspawn-argv.h"
#include "nspawn/sandbox.h"

typedef struct BusLocator {
        const char *destination;
        const char *path;
        const char *interface;
} BusLocator;

static const BusLocator manager = {
        .destination = "org.freedesktop.systemd1",
        .path = "/org/freedesktop/systemd1",
        .interface = "org.freedesktop.systemd1.Manager",
};

#define UNIT_INTERFACE "org.freedesktop.systemd1.Unit"
#define SERVICE_INTERFACE "org.freedesktop.systemd1.Service"
#define BUS_CALL_TIMEOUT_USEC (25 * USEC_PER_SEC)
/* systemd's stop of an expired sandbox: SIGTERM to nspawn, which kills the container at once;
 * SIGKILL to whatever is left after this. */
#define STOP_TIMEOUT_USEC (2 * USEC_PER_SEC)
/* How long past the limit (and the stop) the worker keeps following a sandbox before it kills it. */
#define FOLLOW_GRACE_USEC (15 * USEC_PER_SEC)
/* Once systemd reports the unit inactive, stdout and stderr have ended or end within this. */
#define DRAIN_GRACE_USEC (2 * USEC_PER_SEC)
#define DIAG_MAX_BYTES ((size_t) 64 * 1024)

typedef struct Buffer {
        int fd;
        char *data;
        size_t len;
        size_t cap;
        bool truncated;
} Buffer;

typedef struct Run {
        sd_bus *bus;
        const SandboxSpec *spec;
        char *unit_path;
        char *job;
        char job_result[32];
        bool started;
        bool finished;
        bool changed;
        bool killed;
        uint64_t start;
        uint64_t ready_at; /* 0 until the ready marker came */
        bool killed_unready;
        bool killed_timeout;
        /* What the unit's cgroup counted when last looked at, while it ran: the cgroup goes with the
         * unit, and systemd's CPUUsageNSec is not there on every host (cgroup v1). */
        SandboxUsage usage;
} Run;

static void buffer_done(Buffer *b) {
        closep(&b->fd);
        b->fd = -1;
        free(b->data);
}

/* Reads what is there; past cap the bytes are drained and dropped, so the writer never blocks. */
static int buffer_read(Buffer *b) {
        char chunk[64 * 1024];
        ssize_t n = read(b->fd, chunk, sizeof(chunk));
        size_t keep;

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        if (n == 0) {
                closep(&b->fd);
                b->fd = -1;
                return 0;
        }

        keep = (size_t) n;
        if (b->len + keep > b->cap) {
                keep = b->cap - b->len;
                b->truncated = true;
        }
        if (keep > 0) {
                char *p = realloc(b->data, b->len + keep + 1);

                if (!p)
                        return -ENOMEM;
                b->data = p;
                memcpy(b->data + b->len, chunk, keep);
                b->len += keep;
                b->data[b->len] = 0;
        }
        return 0;
}

static int append_basics(sd_bus_message *m, const SandboxSpec *spec, bool add_ref) {
        return sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                     "Description", "s", "sandboxd sandbox",
                                     "Slice", "s", spec->slice,
                                     /* Unload the unit when it is over, failed or not. */
                                     "CollectMode", "s", "inactive-or-failed",
                                     /* Keep it loaded while this worker reads its result. */
                                     "AddRef", "b", add_ref,
                                     /* nspawn creates its supervisor/payload sub-cgroups. */
                                     "Delegate", "b", 1,
                                     /* SIGTERM to nspawn only; it SIGKILLs the container itself. */
                                     "KillMode", "s", "mixed",
                                     "TimeoutStopUSec", "t", STOP_TIMEOUT_USEC,
                                     /* The execution's wall-clock limit: systemd stops the unit. */
                                     "RuntimeMaxUSec", "t", spec->runtime_max_usec,
                                     /* nspawn's exit status carries the payload's. */
                                     "Type", "s", "exec");
}

/* A payload that installs sandboxd's own filters (compiled once, at build time) spares nspawn
 * compiling its own for three architectures in every sandbox, a third of nspawn's time when it was
 * measured. The runner puts the machine's filter on itself before it starts anything (stricter than
 * nspawn's, which allows io_uring, userfaultfd and unshare), and the code's on every code process. */
static int append_environment(sd_bus_message *m, const SandboxSpec *spec) {
        if (!spec->nspawn->runner_confines)
                return 0;
        return sd_bus_message_append(m, "(sv)", "Environment", "as", 1, "SYSTEMD_SECCOMP=0");
}

static int append_limits(sd_bus_message *m, const SandboxSpec *spec) {
        return sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                     /* systemd's own lines about each sandbox's start and stop,
                                      * a dozen per execution, at info level: sandboxd's pool and
                                      * audit entries already say all that; warnings still pass. */
                                     "LogLevelMax", "i", 4 /* LOG_WARNING */,
                                     /* What the sandbox itself writes to the journal (nspawn's
                                      * errors, the runner's reason for dying, a sanitizer's report)
                                      * is a warning, so that it passes. */
                                     "SyslogLevel", "i", 4 /* LOG_WARNING */,
                                     "MemoryAccounting", "b", 1,
                                     "MemoryMax", "t", spec->memory_max,
                                     "TasksAccounting", "b", 1,
                                     "TasksMax", "t", spec->tasks_max,
                                     "CPUAccounting", "b", 1,
                                     "CPUQuotaPerSecUSec", "t", spec->cpu_quota_per_sec_usec,
                                     /* The kernel kills the process that exceeds the memory limit
                                      * (the code, being the largest); the runner lives on to report
                                      * it, and the unit is destroyed after the execution anyway. */
                                     "OOMPolicy", "s", "continue");
}

/* Pipes or sockets only (no TTY): PID 1 duplicates them, the caller closes its copies after the
 * call. out < 0: stdout and stderr go to the journal. */
static int append_stdio(sd_bus_message *m, int in, int out, int err) {
        if (out < 0)
                return sd_bus_message_append(m, "(sv)(sv)(sv)",
                                             "StandardInputFileDescriptor", "h", in,
                                             "StandardOutput", "s", "journal",
                                             "StandardError", "s", "journal");
        return sd_bus_message_append(m, "(sv)(sv)(sv)",
                                     "StandardInputFileDescriptor", "h", in,
                                     "StandardOutputFileDescriptor", "h", out,
                                     "StandardErrorFileDescriptor", "h", err);
}

/* Opens one (sv) property whose value has signature sig, and inside it the array of sig (sig is
 * "a" and what follows): the caller appends the elements, then closes three containers. */
static int open_array_property(sd_bus_message *m, const char *name, const char *sig) {
        int r;

        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", name);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'v', sig);
        if (r < 0)
                return r;
        return sd_bus_message_open_container(m, 'a', sig + 1);
}

static int close_containers(sd_bus_message *m, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                int r = sd_bus_message_close_container(m);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* ExecStart= of one command, or of several run one after the other (a oneshot's): argvs is a
 * NULL-terminated list of argv. With ignore_failure, a command that fails neither stops the next nor
 * counts in the unit's result (the "-" of a unit file). */
static int append_exec_list(sd_bus_message *m, const char *property, char **const *argvs, bool ignore_failure) {
        int r;

        r = open_array_property(m, property, "a(sasb)");
        for (size_t i = 0; r >= 0 && argvs[i]; i++) {
                r = sd_bus_message_open_container(m, 'r', "sasb");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", argvs[i][0]);
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, argvs[i]);
                if (r >= 0)
                        r = sd_bus_message_append(m, "b", (int) ignore_failure);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
        }
        return r < 0 ? r : close_containers(m, 3);
}

static int append_exec_start_list(sd_bus_message *m, char **const *argvs) {
        return append_exec_list(m, "ExecStart", argvs, false);
}

static int append_exec_start(sd_bus_message *m, char **argv) {
        return append_exec_start_list(m, (char **const[]){argv, NULL});
}

/* Lines that nspawn and systemd log for this unit carry the request's or sandbox's id. */
static int append_log_fields(sd_bus_message *m, const SandboxSpec *spec) {
        const char *field = spec->log_field;
        int r;

        if (!field)
                return 0;

        r = open_array_property(m, "LogExtraFields", "aay");
        if (r < 0)
                return r;
        r = sd_bus_message_append_array(m, 'y', field, strlen(field));
        if (r < 0)
                return r;
        return close_containers(m, 3);
}

/* systemd's unit name of a mount point made only of [a-z0-9/]: "/run/a/b" is "run-a-b.mount". */
static int mount_unit_name(const char *where, char *buf, size_t size) {
        size_t n = strlen(where);

        if (where[0] != '/' || n < 2 || n + 6 > size || strspn(where, "abcdefghijklmnopqrstuvwxyz0123456789/") != n || strstr(where, "//") ||
            where[n - 1] == '/')
                return -EINVAL;
        for (size_t i = 1; i < n; i++)
                buf[i - 1] = (char) (where[i] == '/' ? '-' : where[i]);
        memcpy(buf + n - 1, ".mount", sizeof(".mount"));
        return 0;
}

typedef struct MountArgs {
        const char *what;
        const char *where;
} MountArgs;

static int append_mount(sd_bus_message *m, const MountArgs *a) {
        return sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                     "Description", "s", "sandboxd session disk",
                                     /* A mount that failed is unloaded too: the next start makes it anew. */
                                     "CollectMode", "s", "inactive-or-failed",
                                     "What", "s", a->what,
                                     "Where", "s", a->where,
                                     "Type", "s", "ext4",
                                     /* Programs the code writes may run there; nothing on it is a
                                      * device or gains privileges. */
                                     "Options", "s", "loop,nosuid,nodev",
                                     /* Unmounted once the machine that needs it is gone. */
                                     "StopWhenUnneeded", "b", 1);
}

/* The session's disk: the unit needs its mount unit, which is created with it (an auxiliary unit of
 * the same call) and started before it. */
static int append_disk(sd_bus_message *m, const SandboxSpec *spec, char *mount_unit, size_t size) {
        int r = mount_unit_name(spec->disk_where, mount_unit, size);

        if (r < 0)
                return r;
        return sd_bus_message_append(m, "(sv)(sv)", "Requires", "as", 1, mount_unit, "After", "as", 1, mount_unit);
}

static int append_disk_unit(sd_bus_message *m, const SandboxSpec *spec, const char *mount_unit) {
        int r = sd_bus_message_open_container(m, 'a', "(sa(sv))");

        if (r >= 0 && spec->disk_image) {
                r = sd_bus_message_open_container(m, 'r', "sa(sv)");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", mount_unit);
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "(sv)");
                if (r >= 0)
                        r = append_mount(m, &(MountArgs){spec->disk_image, spec->disk_where});
                if (r >= 0)
                        r = close_containers(m, 2);
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* The StartTransientUnit call for spec, in *ret. */
static int start_message(sd_bus *bus, const SandboxSpec *spec, bool add_ref, const int fds[3], sd_bus_message **ret) {
        cleanup_bus_message sd_bus_message *m = NULL;
        char **argv = NULL, mount_unit[256] = "";
        int r;

        r = nspawn_argv(spec->nspawn, &argv);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(bus, &m, manager.destination, manager.path, manager.interface, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", spec->unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append_basics(m, spec, add_ref);
        if (r >= 0)
                r = append_environment(m, spec);
        if (r >= 0)
                r = append_limits(m, spec);
        if (r >= 0)
                r = append_stdio(m, fds[0], fds[1], fds[2]);
        if (r >= 0 && spec->exec_start_pre)
                r = append_exec_list(m, "ExecStartPre", (char **const[]){(char **) spec->exec_start_pre, NULL}, false);
        if (r >= 0)
                r = append_exec_start(m, argv);
        if (r >= 0 && spec->exec_stop_post)
                r = append_exec_list(m, "ExecStopPost", (char **const *) spec->exec_stop_post, true);
        if (r >= 0)
                r = append_log_fields(m, spec);
        if (r >= 0 && spec->disk_image)
                r = append_disk(m, spec, mount_unit, sizeof(mount_unit));
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = append_disk_unit(m, spec, mount_unit);
        argv = nspawn_argv_free(argv);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* StartTransientUnit for spec; *ret_reply holds the job path. */
static int start_unit(sd_bus *bus, const SandboxSpec *spec, bool add_ref, const int fds[3], sd_bus_message **ret_reply, sd_bus_error *error) {
        cleanup_bus_message sd_bus_message *m = NULL;
        int r = start_message(bus, spec, add_ref, fds, &m);

        if (r < 0)
                return r;
        return sd_bus_call(bus, m, BUS_CALL_TIMEOUT_USEC, error, ret_reply);
}

int sandbox_start_message(sd_bus *bus, const SandboxSpec *spec, int stdin_fd, sd_bus_message **ret) {
        return start_message(bus, spec, false, (int[3]){stdin_fd, -1, -1}, ret);
}

static int run_start(Run *run, const int fds[3], sd_bus_error *error) {
        cleanup_bus_message sd_bus_message *reply = NULL;
        const char *job;
        int r;

        r = start_unit(run->bus, run->spec, true, fds, &reply, error);
        if (r < 0)
                return r;
        run->started = true;

        r = sd_bus_message_read(reply, "o", &job);
        if (r < 0)
                return r;
        run->job = strdup(job);
        return run->job ? 0 : -ENOMEM;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Run *run = userdata;
        const char *path, *unit, *result;
        uint32_t id;

        (void) error;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        if (run->job && strcmp(path, run->job) == 0) {
                (void) snprintf(run->job_result, sizeof(run->job_result), "%s", result);
                run->changed = true;
        }
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Run *run = userdata;

        (void) m;
        (void) error;
        run->changed = true;
        return 0;
}

/* After the start job: finished once the unit is inactive or failed (or already collected). */
static int check_finished(Run *run) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *state = NULL;
        int r;

        run->changed = false;
        if (!run->job_result[0])
                return 0;
        if (strcmp(run->job_result, "done") != 0) {
                run->finished = true;
                return 0;
        }

        r = sd_bus_get_property_string(run->bus, manager.destination, run->unit_path, UNIT_INTERFACE, "ActiveState", &error, &state);
        if (r < 0) {
                if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT))
                        run->finished = true;
                return r == -ENOENT ? 0 : r;
        }
        if (strcmp(state, "inactive") == 0 || strcmp(state, "failed") == 0)
                run->finished = true;
        return 0;
}

static void read_result(Run *run, SandboxResult *res) {
        cleanup_free char *result = NULL;
        const char *dest = manager.destination;
        uint64_t cpu = UINT64_MAX;

        if (sd_bus_get_property_string(run->bus, dest, run->unit_path, SERVICE_INTERFACE, "Result", NULL, &result) >= 0)
                (void) snprintf(res->result, sizeof(res->result), "%s", result);
        else if (strcmp(run->job_result, "done") != 0)
                (void) snprintf(res->result, sizeof(res->result), "job-%s", run->job_result);
        /* How nspawn, the unit's main process, ended, as systemd saw it (waitid()'s si_code and
         * si_status); unknown (0) when the unit never ran a main process. */
        (void) sd_bus_get_property_trivial(run->bus, dest, run->unit_path, SERVICE_INTERFACE, "ExecMainCode", NULL, 'i', &res->exit_code);
        (void) sd_bus_get_property_trivial(run->bus, dest, run->unit_path, SERVICE_INTERFACE, "ExecMainStatus", NULL, 'i', &res->exit_status);
        if (sd_bus_get_property_trivial(run->bus, dest, run->unit_path, SERVICE_INTERFACE, "CPUUsageNSec", NULL, 't', &cpu) >= 0 && cpu != UINT64_MAX)
                cpu /= NSEC_PER_USEC;
        res->cpu_usec = cpu != UINT64_MAX ? cpu : run->usage.cpu_usec;
        res->memory_peak_bytes = run->usage.memory_peak_bytes;
}

int sandbox_kill(sd_bus *bus, const char *unit, sd_bus_error *reterr_error) {
        int r;

        r = sd_bus_call_method(bus, manager.destination, manager.path, manager.interface, "KillUnit", reterr_error, NULL, "ssi", unit, "all", SIGKILL);
        /* A unit still starting has nothing to kill yet: stopping it cancels the start. */
        (void) sd_bus_call_method(bus, manager.destination, manager.path, manager.interface, "StopUnit", NULL, NULL, "ss", unit, "replace");
        return r;
}

int sandbox_list_message(sd_bus *bus, const char *const *patterns, sd_bus_message **ret) {
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, manager.destination, manager.path, manager.interface, "ListUnitsByPatterns");
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, (char **) patterns);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int sandbox_list_read(sd_bus_message *reply, SandboxUnitFunc f, void *userdata) {
        const char *name, *active;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, &active, NULL, NULL, NULL, NULL, NULL, NULL)) > 0)
                f(name, active, userdata);
        return r < 0 ? r : sd_bus_message_exit_container(reply);
}

/* Drops our reference: with CollectMode=inactive-or-failed systemd then unloads the unit. */
static void run_done(Run *run) {
        if (run->started && !run->finished)
                (void) sandbox_kill(run->bus, run->spec->unit, NULL);
        if (run->started)
                (void) sd_bus_call_method(run->bus, manager.destination, manager.path, manager.interface, "UnrefUnit", NULL, NULL, "s", run->spec->unit);
        free(run->unit_path);
        free(run->job);
}

typedef struct Streams {
        int in;
        size_t in_off;
        const char *input;
        size_t input_len;
        Buffer out;
        Buffer err;
} Streams;

static void streams_write(Streams *s) {
        while (s->in >= 0 && s->in_off < s->input_len) {
                ssize_t n = write(s->in, s->input + s->in_off, s->input_len - s->in_off);

                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (n < 0) { /* EPIPE: the sandbox is gone; its result will say why */
                        closep(&s->in);
                        s->in = -1;
                        return;
                }
                s->in_off += (size_t) n;
        }
        closep(&s->in);
        s->in = -1;
}

static int poll_once(Run *run, Streams *s, uint64_t deadline) {
        struct pollfd p[4] = {};
        uint64_t until = deadline, bus_timeout, now;
        int r, n = 0, ms;

        p[n++] = (struct pollfd){.fd = sd_bus_get_fd(run->bus), .events = (short) sd_bus_get_events(run->bus)};
        p[n++] = (struct pollfd){.fd = s->in, .events = POLLOUT};
        p[n++] = (struct pollfd){.fd = s->out.fd, .events = POLLIN};
        p[n++] = (struct pollfd){.fd = s->err.fd, .events = POLLIN};

        r = sd_bus_get_timeout(run->bus, &bus_timeout);
        if (r >= 0 && bus_timeout < until)
                until = bus_timeout;
        now = now_usec(CLOCK_MONOTONIC);
        ms = until <= now ? 0 : (int) ((until - now + 999) / 1000);

        r = poll(p, (nfds_t) n, ms);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;

        if (p[1].revents)
                streams_write(s);
        if (p[2].revents) {
                r = buffer_read(&s->out);
                if (r < 0)
                        return r;
        }
        if (p[3].revents) {
                r = buffer_read(&s->err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* With a ready marker: the limit of the phase the payload is in; kills the unit past it. */
static uint64_t phase_deadline(Run *run, Streams *s) {
        const SandboxSpec *spec = run->spec;
        size_t n;
        uint64_t until;

        if (!spec->ready_marker || run->killed)
                return UINT64_MAX;
        n = strlen(spec->ready_marker);
        /* An empty marker is there at once; and memcmp() must not see the NULL of an empty output. */
        if (!run->ready_at && s->out.len >= n && (n == 0 || memcmp(s->out.data, spec->ready_marker, n) == 0))
                run->ready_at = now_usec(CLOCK_MONOTONIC);

        until = run->ready_at ? run->ready_at + spec->run_timeout_usec : run->start + spec->ready_timeout_usec;
        if (now_usec(CLOCK_MONOTONIC) < until)
                return until;

        if (run->ready_at)
                run->killed_timeout = true;
        else
                run->killed_unready = true;
        run->killed = true;
        (void) sandbox_kill(run->bus, spec->unit, NULL);
        return UINT64_MAX;
}

/* The unit's cgroup's counts, as they are now, over the last ones read: the figures only grow, and
 * the last reading before the cgroup goes is the closest to the end. */
static void sample_usage(Run *run) {
        SandboxUsage now;

        sandbox_usage(run->spec->slice, run->spec->unit, &now);
        if (now.cpu_usec != UINT64_MAX)
                run->usage.cpu_usec = now.cpu_usec;
        if (now.memory_peak_bytes != UINT64_MAX)
                run->usage.memory_peak_bytes = now.memory_peak_bytes;
}

/* Until the unit is over and its output has ended, or the deadline passed (then kill it). */
static int follow(Run *run, Streams *s, uint64_t deadline) {
        uint64_t drain_until = UINT64_MAX;
        int r;

        for (;;) {
                uint64_t phase;

                r = sd_bus_process(run->bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;

                if (run->changed && !run->finished) {
                        r = check_finished(run);
                        if (r < 0)
                                return r;
                        if (run->finished)
                                drain_until = now_usec(CLOCK_MONOTONIC) + DRAIN_GRACE_USEC;
                }
                if (run->finished && ((s->out.fd < 0 && s->err.fd < 0) || now_usec(CLOCK_MONOTONIC) >= drain_until))
                        return 0;

                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        if (run->killed)
                                return -ETIME;
                        run->killed = true;
                        (void) sandbox_kill(run->bus, run->spec->unit, NULL);
                        deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
                }

                phase = phase_deadline(run, s);
                if (run->killed && deadline > now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC)
                        deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
                r = poll_once(run, s, run->finished ? drain_until : (phase < deadline ? phase : deadline));
                if (r < 0)
                        return r;
                if (!run->finished)
                        sample_usage(run);
        }
}

static int make_pipe(int fds[2], int nonblock_end) {
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        if (fcntl(fds[nonblock_end], F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

static int subscribe(Run *run, sd_bus_slot **ret_job, sd_bus_slot **ret_props) {
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", run->spec->unit, &run->unit_path);
        if (r < 0)
                return r;
        /* Before the start: a fast job can end before a later match exists. */
        r = sd_bus_match_signal(run->bus, ret_job, manager.destination, manager.path, manager.interface, "JobRemoved", on_job_removed, run);
        if (r < 0)
                return r;
        return sd_bus_match_signal(run->bus, ret_props, manager.destination, run->unit_path, "org.freedesktop.DBus.Properties", "PropertiesChanged", on_properties_changed, run);
}

int sandbox_run(sd_bus *bus, const SandboxSpec *spec, const char *input, size_t input_len,
                SandboxResult *ret, sd_bus_error *reterr_error) {
        __attribute__((cleanup(sd_bus_slot_unrefp))) sd_bus_slot *job_slot = NULL, *props_slot = NULL;
        Run run = {.bus = bus, .spec = spec, .usage = {UINT64_MAX, UINT64_MAX}};
        Streams s = {.in = -1, .input = input, .input_len = input_len,
                     .out = {.fd = -1, .cap = spec->max_reply_bytes}, .err = {.fd = -1, .cap = DIAG_MAX_BYTES}};
        int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
        uint64_t start;
        int r;

        r = subscribe(&run, &job_slot, &props_slot);
        if (r >= 0)
                r = make_pipe(in, 1);
        if (r >= 0)
                r = make_pipe(out, 0);
        if (r >= 0)
                r = make_pipe(err, 0);

        start = run.start = now_usec(CLOCK_MONOTONIC);
        if (r >= 0)
                r = run_start(&run, (int[3]){in[0], out[1], err[1]}, reterr_error);
        /* PID 1 holds its own copies now: ours must go, or EOF never comes. */
        closep(&in[0]);
        closep(&out[1]);
        closep(&err[1]);
        s.in = in[1];
        s.out.fd = out[0];
        s.err.fd = err[0];

        if (r >= 0)
                r = follow(&run, &s, start + spec->runtime_max_usec + STOP_TIMEOUT_USEC + FOLLOW_GRACE_USEC);
        if (r >= 0) {
                *ret = (SandboxResult){
                        .reply = TAKE_PTR(s.out.data), .reply_len = s.out.len, .reply_truncated = s.out.truncated,
                        .diag = TAKE_PTR(s.err.data), .diag_len = s.err.len,
                        .duration_usec = now_usec(CLOCK_MONOTONIC) - start,
                        .ready = run.ready_at != 0, .killed_unready = run.killed_unready, .killed_timeout = run.killed_timeout};
                read_result(&run, ret);
        }

        closep(&s.in);
        buffer_done(&s.out);
        buffer_done(&s.err);
        run_done(&run);
        return r;
}

/* A session's disk: systemd does the root work (formatting, the loop device, the mount) in units of
 * its own, and the broker, which has no capability, only asks for them and waits for their jobs. */

/* A transient unit's start: its properties come from append(). */
static int transient_message(sd_bus *bus, const char *unit, int (*append)(sd_bus_message *m, const void *userdata),
                             const void *userdata, sd_bus_message **ret) {
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, manager.destination, manager.path, manager.interface, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append(m, userdata);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

typedef struct FormatArgs {
        const SandboxSpec *spec;
        char **const *argvs;
} FormatArgs;

static int append_format(sd_bus_message *m, const void *userdata) {
        const FormatArgs *a = userdata;
        int r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)",
                                      "Description", "s", "sandboxd session disk format",
                                      "Slice", "s", a->spec->slice,
                                      "CollectMode", "s", "inactive-or-failed",
                                      /* The start job is over when the command is. */
                                      "Type", "s", "oneshot",
                                      "StandardOutput", "s", "journal",
                                      "StandardError", "s", "journal");

        if (r >= 0)
                r = append_log_fields(m, a->spec);
        if (r >= 0 && a->spec->exec_start_pre)
                r = append_exec_list(m, "ExecStartPre", (char **const[]){(char **) a->spec->exec_start_pre, NULL}, false);
        return r < 0 ? r : append_exec_start_list(m, a->argvs);
}

int sandbox_disk_format_message(sd_bus *bus, const SandboxSpec *spec, const char *image, uint64_t bytes, uint32_t owner_uid,
                                sd_bus_message **ret) {
        char size[32], owner[64];
        /* ext4 in a sparse file of the disk's size: only what is written takes the host's space. No
         * blocks reserved for root (nobody is root there), the sandbox user owns its root. mke2fs
         * refuses to overwrite a file system without -F, which it never gets. */
        char *argv[] = {(char *) "/sbin/mke2fs", (char *) "-q", (char *) "-t", (char *) "ext4", (char *) "-m", (char *) "0",
                        (char *) "-E", owner, (char *) image, size, NULL};
        /* The code's working directory is the file system's root: without mke2fs's lost+found (root's,
         * which it could neither use nor remove). e2fsck makes one again should it ever need it. */
        char *unlost[] = {(char *) "/sbin/debugfs", (char *) "-w", (char *) "-R", (char *) "rmdir lost+found", (char *) image, NULL};

        (void) snprintf(size, sizeof(size), "%" PRIu64 "k", bytes / 1024);
        (void) snprintf(owner, sizeof(owner), "root_owner=%" PRIu32 ":%" PRIu32 ",nodiscard", owner_uid, owner_uid);
        return transient_message(bus, spec->unit, append_format, &(FormatArgs){spec, (char **const[]){argv, unlost, NULL}}, ret);
}
