/* SPDX-License-Identifier: MIT */
#pragma once

/* The broker's own modules (broker.c: the loop and its clients; broker-bus.c: systemd, asynchronously;
 * broker-machine.c: machines and tool calls; broker-session.c: sessions). One event loop serves every
 * client: nothing in it waits, so that no client's slow operation (a session's disk being formatted,
 * a session being stopped) holds up another's (a kill on timeout, a warm machine). A request is a
 * small state machine: each step sends one call to systemd, or starts one child, and the next step
 * runs when its answer comes; the client gets its reply when the last step is over. */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "lib/error.h"
#include "nspawn/broker/broker-proto.h"
#include "nspawn/nspawn-argv.h"
#include "nspawn/sandbox.h"

/* The sandbox user of nspawn/runner/passwd, whom the code becomes. */
#define RUNNER_UID_OPTION "--uid=1000"
/* Where an execution machine finds sandboxd's runner, zygote, filter and import allow-list: the
 * host's lib_dir, bound read-only at a place the runtime image has (sandboxd-image makes it). */
#define MACHINE_LIB_DIR "/usr/lib/sandboxd"

typedef struct Config Config;
typedef struct Broker Broker;
typedef struct Client Client;
typedef struct Request Request;

/* The next step of q, once the call or job it waited for is over: r is 0 or -errno (q->err then
 * says why); reply is systemd's answer to a call (NULL after a job or a failure). */
typedef void (*RequestStep)(Request *q, int r, sd_bus_message *reply);

struct Broker {
        const Config *config;
        uid_t uid; /* the workers' user: with root, the only peers served */
        sd_event *event;
        sd_bus *bus;
        bool bus_lost;        /* the bus said it is disconnected: a new one is made on next use */
        Request *job_waiters; /* requests waiting for one of systemd's jobs to be removed */
        /* Requests in progress, and those waiting for one about the same unit to end: requests
         * about one unit are served one at a time, in order, as they always were (a session's start
         * never meets its stop halfway); requests about different units, at once. */
        Request *running;
        Request *waiting;
        int uid_dir_fd; /* the UID range reservations (uid-range.h) */
        char uid_dir[512];
        int listen_fd;
        sd_event_source *listen_source;
        Client *clients;
        size_t n_clients;
        sigset_t signal_mask; /* what the loop blocks, for a child to unblock */
        bool stopping;        /* SIGTERM: what is in progress ends, nothing new starts */
        /* Tests only, from the broker's own environment (SANDBOXD_TEST_DISK_FORMAT_DELAY_S): how
         * long a session's disk format waits before it starts, so that a test can show other
         * requests answered meanwhile. 0 (off) unless that is set. */
        unsigned test_format_delay_s;
};

struct Request {
        Broker *broker;
        Client *client; /* NULL once answered, or once its client hung up: the work goes on */
        Request *next;  /* in Broker.running or Broker.waiting */
        BrokerRequest req;
        BrokerReply rep;
        Error err;
        int passed_fd;         /* what came with the request: a listening socket, a memfd */
        int out_fd;            /* what goes with the reply: a memfd */
        RequestStep step;      /* run when the call or job in flight is over */
        RequestStep then_step; /* broker_call_job()'s step, once the job is over */
        RequestStep then_stop; /* broker_stop_unit()'s step */
        uint64_t job_timeout_usec;
        /* The job waited for, its deadline, and the next waiter (Broker.job_waiters). */
        char *job;
        sd_event_source *job_timer;
        Request *job_next;
        sd_bus_message *then;   /* a call built ahead, sent once the job before it is over */
        sd_event_source *child; /* a tool call's process */
        int child_fd;           /* where that process sends its reply */
        char unit[SANDBOX_ID_MAX + 16];
        char mount_unit[64];
        char image[512];
};

/* broker.c */
/* Answers q's client (if it is still there) with r (q->err saying why) and what q->rep holds, once;
 * q stays, for the work that follows the answer, until request_free(). */
void request_reply(Request *q, int r);
void request_free(Request *q);
/* Both, for a request whose work is over. */
void request_finish(Request *q, int r);
/* In a child of the broker: closes what the child must not hold (the listener, the clients). */
void broker_close_for_child(Broker *b);

/* broker-bus.c */
/* The system bus, connected anew when it was lost; NULL (logged) when it cannot be. */
sd_bus *broker_bus(Broker *b);
void broker_bus_done(Broker *b);
/* A failure r, in words into err: systemd's when the bus said why, else the errno's. Returns r. */
int broker_fail(Error *err, int r, const sd_bus_error *error);
/* Sends m (q's only call in flight); step runs with its reply. 0, or -errno if it could not be sent. */
int broker_call(Request *q, sd_bus_message *m, RequestStep step);
/* The same, for a Manager method built from types and what follows. */
int broker_call_manager(Request *q, RequestStep step, const char *member, const char *types, ...);
/* Sends m, a method whose reply is a job, and runs step once that job is removed: r is 0 when the
 * job is "done", -EIO with its result in q->err otherwise, -ETIME past timeout_usec, -ENOENT when
 * systemd has no such unit. */
int broker_call_job(Request *q, sd_bus_message *m, uint64_t timeout_usec, RequestStep step);
/* StopUnit of unit through broker_call_job(); a unit that is not there counts as stopped (r 0). */
int broker_stop_unit(Request *q, const char *unit, uint64_t timeout_usec, RequestStep step);
/* A Manager method sent with nobody waiting for its reply. */
void broker_call_manager_forget(Broker *b, const char *member, const char *types, ...);

/* broker-spec.c: what every sandbox of sandboxd's has, whatever runs in it: its unit, its journal
 * tag, a UID range of its own, and the limits of the configuration. The caller adds the command and
 * what is its own. */
typedef struct SandboxBase {
        char unit[SANDBOX_ID_MAX + 16];
        char etc[512];
        char field[128];
        NspawnSpec ns;
        SandboxSpec spec;
        char delegate_path[600];
        char delegate_uid[32];
        const char *delegate[3];
        char release_path[600];
        const char *release[4];
        char export_path[600];
        const char *export_umount[5];
        const char *export_rmdir[3];
        const char *const *stop_post[4];
} SandboxBase;
/* uid_base: the range the machine runs with, reserved for it by the caller. */
int sandbox_base(const Config *cfg, const char *id, uint32_t uid_base, const char *field_name, const char *field_value,
                 SandboxBase *ret);
/* A machine's or a tool sandbox's base, with a range of its own for as long as its unit runs. */
int sandbox_base_machine(Broker *b, const char *id, const char *field_name, const char *field_value, SandboxBase *ret);
/* On a host with the cgroup v1 memory hierarchy, the machine's cgroup there handed to its root. */
void sandbox_base_delegate_cgroups(const Config *cfg, SandboxBase *s);
/* A UID range no running machine and no session holds, reserved for id. -EUSERS when none is free. */
int broker_reserve_uid_range(Broker *b, const char *id, uint32_t *ret);
/* Only a listening unix stream socket may become a machine's stdin: 0 or -EBADF. */
int broker_check_listener(int fd);
/* The runtime image's tree (*ret, the caller's) a machine started now gets. */
int broker_runtime_tree(const Config *cfg, char **ret, Error *err);
/* The --bind-ro of the operator's CA bundle for code with network (SANDBOXD_EGRESS_CA_BUNDLE) into
 * buf: buf, or NULL when there is none to bind. */
const char *broker_ca_bind(const Config *cfg, char *buf, size_t size);

/* broker-machine.c */
int machine_start_warm(Request *q);
int machine_kill(Request *q);
int machine_reset_failed(Request *q);
int machine_list(Request *q);
int machine_run_tool(Request *q);

/* broker-session.c */
int session_start(Request *q);
int session_stop(Request *q);
int session_list_units(Request *q);
