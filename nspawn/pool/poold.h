/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/machine-state.h"
#include "nspawn/pool/conn-state.h"
#include "nspawn/pool/pool-retire.h"
#include "nspawn/pool/poold-cpu.h"
#include "nspawn/pool/poold-proto.h"
#include "nspawn/pool/poold-writes.h"

/* The pool manager's state, shared by its parts: poold.c (the loop and the connections),
 * poold-machines.c (the machines and the claims), poold-sessions.c (the sessions' turns and idle
 * ends). Private to sandboxd-poold. */

typedef struct BrokerAsync BrokerAsync;
typedef struct Config Config;
typedef struct PauseOp PauseOp;
typedef struct sd_event sd_event;
typedef struct sd_event_source sd_event_source;
typedef struct sqlite3 sqlite3;

#define MACHINE_ID_MAX 64
#define MACHINE_SOCKET_MAX 256

typedef struct Machine {
        char id[MACHINE_ID_MAX];
        char socket[MACHINE_SOCKET_MAX];
        MachineState state;      /* claimed: a worker's, on the connection whose seq is holder */
        int fd;                  /* starting: the probe's connection, once the broker started it */
        sd_event_source *source; /* starting: fd watched for the greeting */
        size_t got;           /* starting: the greeting's bytes so far */
        uint64_t deadline;    /* starting: ready by then, or failed */
        uint64_t ready_at;    /* ready: since when (CLOCK_MONOTONIC µs) */
        const char *prepared; /* ready: what its next sandbox is ready for (static) */
        int64_t executions;
        unsigned generation; /* the settings it was made with: stale once p->generation moved on */
        uint64_t holder;
        uint64_t charge; /* claimed: its charge on the CPU gate (poold-cpu.h), 0 for none */
        CpuUse cpu_use;  /* claimed: whether it uses a CPU (poold-cpu.h) */
} Machine;

typedef struct Conn {
        int fd;
        sd_event_source *source;
        pid_t pid;    /* the worker's, for the records */
        uint64_t seq; /* arrival order of its claim or turn; unique, it names the connection */
        ConnState state;
        char language[POOLD_WORD_MAX];
        char machine[MACHINE_ID_MAX];
        char session[POOLD_WORD_MAX];
        char buf[POOLD_LINE_MAX];
        size_t len;
} Conn;

typedef struct Poold {
        const Config *config;
        sd_event *event;
        sd_event_source *timer; /* the soonest deadline's, re-armed after every event: no tick */
        BrokerAsync *broker;    /* the broker, which starts and kills the units: never waited for */
        int listen_fd;
        sd_event_source *listen_source;
        bool stop;
        bool sweeping;           /* a sweep's broker requests are in flight */
        PauseOp *pauses;         /* sessions being paused (their turns held back meanwhile) */
        PooldWrites writes;      /* records that met sqlite's lock, to be written again */
        uint64_t claim_retry_at; /* a claim's record met the lock: handed out again then */
        uint64_t listen_retry_at; /* out of descriptors: the listener, off, is back on then */
        sqlite3 *db;
        char settings[1024]; /* what a machine started now is made with (machine_settings()) */
        unsigned generation; /* moves on when the settings change */
        Machine *machines;
        size_t n_machines, cap_machines;
        Conn *conns;
        size_t n_conns, cap_conns;
        uint64_t next_seq;
        CpuGate cpu;      /* whether the CPUs have room for one more execution */
        bool gated;       /* the earliest claim waits for the CPUs, not for a machine */
        bool growth_held; /* claims wait for machines the CPUs have no room to start yet */
        unsigned boost;   /* claims that waited lately: machines wanted beyond the target */
        uint64_t last_wait_at;
        unsigned failures;
        char failure[256];
        uint64_t failed_at;
        uint64_t backoff_until;
        uint64_t next_sweep;
        uint64_t next_prune;
        uint64_t next_sessions; /* the sessions' next idle end, retention or leftover (0: now) */
        char counts_told[POOLD_LINE_MAX]; /* the last "pool" line the watchers got */
        unsigned session_looks;           /* sessions_housekeeping() passes: a session may have changed */
} Poold;

/* poold-machines.c */
void machines_fill(Poold *p);
void machines_dispatch(Poold *p);
void machines_probe(Poold *p, int fd);
void machines_check_deadlines(Poold *p);
void machines_retire_idle(Poold *p);
uint64_t machines_next_deadline(const Poold *p);
void machines_reconcile(Poold *p);
void machines_stop(Poold *p);
void machine_destroy_id(Poold *p, const char *id, const char *socket, PoolRetire why);
void machines_settings_check(Poold *p);
size_t machines_count(const Poold *p, MachineState state);
void claim_request(Poold *p, Conn *c);
void claim_release(Poold *p, Conn *c, const PooldMsg *m);
void claim_closed(Poold *p, Conn *c);
size_t claims_waiting(const Poold *p);

/* poold-sessions.c */
void turn_request(Poold *p, Conn *c, const PooldMsg *m);
void turn_done(Poold *p, Conn *c);
bool turn_busy(const Poold *p, const char *session);
bool session_pausing(const Poold *p, const char *session);
void sessions_pauses_free(Poold *p);
/* Records that waited for sqlite's lock are written: the turns they held back are granted. */
void sessions_writes_done(Poold *p);
void sessions_housekeeping(Poold *p);
void sessions_reconcile(Poold *p);

/* poold.c */
int conn_send(Conn *c, const char *line);
/* A record written now, or later if sqlite is locked (poold-writes.h): 0, -ENOENT or -errno. */
int poold_write(Poold *p, const PooldWrite *w);
/* A session's event: its record (poold_write()) and its journal entry. */
void poold_session_event(Poold *p, const char *id, const char *event, const char *detail);
/* A sweep soon (sweep.h): something may be left that no row owns. */
void poold_sweep_soon(Poold *p);
Conn *conn_by_seq(Poold *p, uint64_t seq);
