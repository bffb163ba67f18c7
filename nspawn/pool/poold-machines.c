/* SPDX-License-Identifier: MIT */
/* The pool manager's machines: started ahead, handed to claims in arrival order the moment one is
 * ready, put back or retired as the worker that held it says, retired when its worker goes without
 * a word. The state is here, in memory; the pool table records it for GET /v1/pool and the metrics.
 * The broker's starts and kills are answered on the loop (broker-async.h), never waited for: a
 * machine starting is one whose deadline runs from the request, whether the broker answered yet or
 * not; a machine destroyed is forgotten at once, and its row removed once its unit is killed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "db/db.h"
#include "db/pool-db.h"
#include "lib/cgroup-util.h"
#include "lib/alloc-util.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-async.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"
#include "nspawn/pool/poold-queue.h"
#include "nspawn/pool/poold.h"
#include "nspawn/unit-name.h"

/* How many containers may boot at once: each costs a core for ~60 ms. */
#define PARALLEL_STARTS 4
#define START_TIMEOUT_USEC (30 * USEC_PER_SEC)
/* The pool shrinks back to its target once no claim has had to wait for this long; a machine
 * beyond what is wanted goes once idle this long. */
#define BOOST_HOLD_USEC (10 * USEC_PER_SEC)
#define BACKOFF_MAX_USEC (5 * USEC_PER_SEC)
/* Two start failures in a row within this long: claims are told at once why none comes. */
#define FAILING_USEC (60 * USEC_PER_SEC)

size_t machines_count(const Poold *p, MachineState state) {
        size_t n = 0;

        for (size_t i = 0; i < p->n_machines; i++)
                n += p->machines[i].state == state;
        return n;
}

size_t claims_waiting(const Poold *p) {
        size_t n = 0;

        for (size_t i = 0; i < p->n_conns; i++)
                n += p->conns[i].state == CONN_CLAIM_WAITING;
        return n;
}

static Machine *machine_find(Poold *p, const char *id) {
        for (size_t i = 0; i < p->n_machines; i++)
                if (strcmp(p->machines[i].id, id) == 0)
                        return &p->machines[i];
        return NULL;
}

/* Forgets machine m (its row and unit are gone or going). */
static void machine_forget(Poold *p, Machine *m) {
        size_t i = (size_t) (m - p->machines);

        m->source = sd_event_source_disable_unref(m->source);
        closep(&m->fd);
        p->machines[i] = p->machines[--p->n_machines];
}

/* A claimed machine back to ready: its charge on the CPUs given back if its execution ended within
 * the window it started in (the CPUs' sample never saw it). */
static void machine_unclaim(Poold *p, Machine *m) {
        cpu_gate_refund(&p->cpu, m->charge);
        m->charge = 0;
        m->state = MACHINE_READY;
        m->holder = 0;
}

/* A kill asked of the broker: what is removed once it is answered. */
typedef struct KillOp {
        Poold *pool;
        char id[MACHINE_ID_MAX];
        char socket[MACHINE_SOCKET_MAX];
        PoolRetire why;
} KillOp;

/* The unit is gone (or was already): its socket and its row follow, in that order, as a sweep
 * takes a unit without a row for a leftover. A kill that failed (the broker not reached, or past its
 * deadline) may have left the unit running: the row goes all the same, so that the sweep, asked for
 * soon, kills it as one no row owns. */
static void on_killed(int r, const BrokerReply *rep, int fd, void *userdata) {
        KillOp *op = userdata;

        (void) fd;
        if (r != -ECANCELED) {
                PooldWrite w = {.op = POOLD_WRITE_POOL_REMOVE};

                if (op->socket[0])
                        (void) unlink(op->socket);
                (void) snprintf(w.id, sizeof(w.id), "%s", op->id);
                (void) snprintf(w.text, sizeof(w.text), "%s", pool_retire_label(op->why));
                (void) poold_write(op->pool, &w);
                if (r < 0 && r != -ENOENT) {
                        (void) log_warning_errno(r, "Failed to kill machine '%s' (%s), sweeping soon: %s", op->id, pool_retire_text(op->why),
                                                 rep->message);
                        poold_sweep_soon(op->pool);
                } else
                        log_pool_event(LOG_INFO, "destroyed", op->id, "Machine '%s' destroyed: %s", op->id, pool_retire_text(op->why));
        }
        free(op);
}

void machine_destroy_id(Poold *p, const char *id, const char *socket, PoolRetire why) {
        KillOp *op = calloc(1, sizeof(*op));
        int r = op ? 0 : -ENOMEM;

        if (op) {
                *op = (KillOp){.pool = p, .why = why};
                (void) snprintf(op->id, sizeof(op->id), "%s", id);
                (void) snprintf(op->socket, sizeof(op->socket), "%s", socket ? socket : "");
                r = broker_async_call(p->broker, BROKER_KILL, id, -1, on_killed, op);
        }
        if (r < 0) {
                /* The row stays: the next sweep kills the unit it names, or the next start retires it. */
                (void) log_warning_errno(r, "Failed to ask for machine '%s' to be killed, ignoring", id);
                free(op);
        }
}

static void machine_destroy(Poold *p, Machine *m, PoolRetire why) {
        cpu_gate_refund(&p->cpu, m->charge);
        machine_destroy_id(p, m->id, m->socket, why);
        machine_forget(p, m);
}

/* p->failure, recorded for GET /v1/pool. */
static void health_failed(Poold *p) {
        PooldWrite w = {.op = POOLD_WRITE_HEALTH_FAILED};

        (void) snprintf(w.detail, sizeof(w.detail), "%s", p->failure);
        (void) poold_write(p, &w);
}

/* A machine's row back to ready, prepared for what it says: 0 (or queued), else -errno. */
static int machine_release_record(Poold *p, const Machine *m, const char *prepared) {
        PooldWrite w = {.op = POOLD_WRITE_POOL_RELEASE};

        (void) snprintf(w.id, sizeof(w.id), "%s", m->id);
        (void) snprintf(w.text, sizeof(w.text), "%s", strcmp(prepared, "node") == 0 ? "node" : "");
        return poold_write(p, &w);
}

static void start_failed(Poold *p, Machine *m, const char *why) {
        uint64_t backoff = 100 * USEC_PER_MSEC << (p->failures < 6 ? p->failures : 6);

        (void) snprintf(p->failure, sizeof(p->failure), "%s (journalctl -u %s.service tells why)", why, m->id);
        health_failed(p);
        log_pool_event(LOG_ERR, "failed", m->id, "Machine '%s' failed to start: %s", m->id, why);
        machine_destroy(p, m, POOL_RETIRE_START_FAILED);
        p->failures++;
        p->failed_at = now_usec(CLOCK_MONOTONIC);
        p->backoff_until = p->failed_at + (backoff < BACKOFF_MAX_USEC ? backoff : BACKOFF_MAX_USEC);
}

/* Whether machines fail to start right now (two failures in a row within FAILING_USEC): then a
 * claim waits in vain, and is told why. */
static bool failing(const Poold *p) {
        return p->failures >= 2 && now_usec(CLOCK_MONOTONIC) - p->failed_at < FAILING_USEC;
}

/* Claims waiting are told at once when machines cannot be started. */
static void tell_failing(Poold *p) {
        char line[POOLD_LINE_MAX];

        (void) snprintf(line, sizeof(line), "failing %.400s\n", p->failure);
        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].state == CONN_CLAIM_WAITING) {
                        (void) conn_send(&p->conns[i], line);
                        p->conns[i].state = CONN_IDLE;
                }
}

/* The broker could not start it: what the waiting claims are told once it fails again, and a
 * pause before the next start (machines_fill()). */
static void start_refused(Poold *p, Machine *m, const char *why) {
        log_pool_event(LOG_ERR, "failed", m->id, "Failed to start sandbox '%s': %s", m->id, why);
        (void) snprintf(p->failure, sizeof(p->failure), "%s", why);
        health_failed(p);
        machine_destroy(p, m, POOL_RETIRE_START_FAILED);
        p->failures++;
        p->failed_at = now_usec(CLOCK_MONOTONIC);
        p->backoff_until = p->failed_at + BACKOFF_MAX_USEC;
        /* systemd refused the start: the claims waiting hear why, not a timeout. */
        if (failing(p))
                tell_failing(p);
}

static int on_probe(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s;
        (void) revents;
        machines_probe(userdata, fd);
        return 0;
}

typedef struct StartOp {
        Poold *pool;
        char id[MACHINE_ID_MAX];
} StartOp;

/* The broker started the unit: its runner's greeting is waited for on the loop (machines_probe()).
 * A machine given up meanwhile (its deadline) was killed on another connection, which the broker
 * may have served first, before there was a unit: what started after is killed now. */
static void on_started(int r, const BrokerReply *rep, int fd, void *userdata) {
        StartOp *op = userdata;
        Machine *m = r == -ECANCELED ? NULL : machine_find(op->pool, op->id);
        Poold *p = op->pool;
        char id[MACHINE_ID_MAX];

        (void) fd;
        memcpy(id, op->id, sizeof(id));
        free(op);
        if (!m && r >= 0)
                machine_destroy_id(p, id, NULL, POOL_RETIRE_START_FAILED);
        if (!m || m->state != MACHINE_STARTING)
                return;
        if (r >= 0)
                r = pool_connect(m->socket, &m->fd);
        if (r >= 0)
                r = sd_event_add_io(p->event, &m->source, m->fd, EPOLLIN, on_probe, p);
        if (r < 0)
                start_refused(p, m, rep->message[0] ? rep->message : strerror(-r));
}

/* Starts one machine: its socket, its row, then its unit, which the broker answers for later. */
static int start_one(Poold *p) {
        cleanup_close int listen_fd = -1;
        uint8_t rnd[SANDBOX_ID_RANDOM_CHARS];
        Machine m = {.state = MACHINE_STARTING, .fd = -1, .generation = p->generation, .prepared = "python"};
        StartOp *op;
        int r;

        if (ARRAY_GROW(p->machines, p->cap_machines, p->n_machines, 16) < 0)
                return -ENOMEM;
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return -EIO;
        r = unit_name_sandbox_id("machine", rnd, m.id);
        if (r < 0)
                return r;
        (void) snprintf(m.socket, sizeof(m.socket), POOL_DIR "/%s.sock", m.id);
        op = calloc(1, sizeof(*op));
        if (!op)
                return -ENOMEM;
        *op = (StartOp){.pool = p};
        memcpy(op->id, m.id, sizeof(m.id));

        r = pool_listen(m.socket, &listen_fd);
        if (r >= 0) {
                r = db_pool_add(p->db, m.id, m.socket, p->settings);
                if (r < 0) {
                        (void) unlink(m.socket);
                        (void) log_error_errno(r, "Failed to record sandbox '%s': %s", m.id, db_errmsg(p->db));
                }
        } else
                (void) log_error_errno(r, "Failed to listen on '%s'", m.socket);
        if (r >= 0)
                r = broker_async_call(p->broker, BROKER_START_WARM, m.id, listen_fd, on_started, op);
        if (r < 0) {
                free(op);
                return r;
        }
        m.deadline = now_usec(CLOCK_MONOTONIC) + START_TIMEOUT_USEC;
        p->machines[p->n_machines++] = m;
        log_pool_event(LOG_INFO, "created", m.id, "Machine '%s' created", m.id);
        return 0;
}

void machines_probe(Poold *p, int fd) {
        Machine *m = NULL;
        PooldWrite w;
        int r;

        for (size_t i = 0; i < p->n_machines && !m; i++)
                if (p->machines[i].fd == fd && p->machines[i].state == MACHINE_STARTING)
                        m = &p->machines[i];
        if (!m)
                return;
        r = pool_read_greeting(m->fd, &m->got);

        if (r == -EAGAIN)
                return;
        if (r < 0) {
                start_failed(p, m, "the sandbox ended before it was ready");
                if (failing(p))
                        tell_failing(p);
                return;
        }
        /* Queued when the database is locked: the machine is handed out once its row says ready
         * (machines_dispatch() skips it until then). */
        w = (PooldWrite){.op = POOLD_WRITE_POOL_READY};
        (void) snprintf(w.id, sizeof(w.id), "%s", m->id);
        r = poold_write(p, &w);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to mark sandbox '%s' ready: %s", m->id, db_errmsg(p->db));
                machine_destroy(p, m, POOL_RETIRE_LOST_RECORD);
                return;
        }
        log_pool_event(LOG_INFO, "ready", m->id, "Machine '%s' ready", m->id);
        if (p->failures > 0)
                (void) poold_write(p, &(PooldWrite){.op = POOLD_WRITE_HEALTH_OK});
        p->failures = 0;
        m->source = sd_event_source_disable_unref(m->source);
        closep(&m->fd);
        m->state = MACHINE_READY;
        m->ready_at = now_usec(CLOCK_MONOTONIC);
}

void machines_check_deadlines(Poold *p) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = p->n_machines; i > 0; i--)
                if (p->machines[i - 1].state == MACHINE_STARTING && p->machines[i - 1].deadline <= now)
                        start_failed(p, &p->machines[i - 1], "not ready in time");
        if (p->boost > 0 && now - p->last_wait_at >= BOOST_HOLD_USEC && claims_waiting(p) == 0)
                p->boost = 0;
}

/* The CPU time machine m's unit has used, UINT64_MAX when its cgroup cannot be read: cgroup v2's
 * cpu.stat, which v2 keeps whatever the controllers, or the unified hierarchy's on a hybrid host. */
static uint64_t machine_cpu_usec(const Poold *p, const Machine *m) {
        char unit[MACHINE_ID_MAX + 16], path[512];
        uint64_t v;

        if (unit_name_from_id(m->id, unit, sizeof(unit)) < 0)
                return UINT64_MAX;
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/cpu.stat", p->config->slice, unit);
        if (cgroup_read_number(path, "usage_usec", &v) >= 0)
                return v;
        (void) snprintf(path, sizeof(path), "/sys/fs/cgroup/unified/%s/%s/cpu.stat", p->config->slice, unit);
        return cgroup_read_number(path, "usage_usec", &v) >= 0 ? v : UINT64_MAX;
}

/* Claimed machines that use a CPU (poold-cpu.h, CpuUse): those the gate lets run whatever the load. */
static unsigned claimed_busy(const Poold *p) {
        unsigned n = 0;

        for (size_t i = 0; i < p->n_machines; i++)
                n += p->machines[i].state == MACHINE_CLAIMED && p->machines[i].cpu_use.busy;
        return n;
}

/* Each claimed machine looked at with a new sample, but only while they are as many as the CPUs:
 * below that, whether they are busy changes nothing, and no cgroup is read. */
static void claimed_look(Poold *p, uint64_t now) {
        if (machines_count(p, MACHINE_CLAIMED) < p->cpu.cpus)
                return;
        for (size_t i = 0; i < p->n_machines; i++)
                if (p->machines[i].state == MACHINE_CLAIMED)
                        cpu_use_update(&p->machines[i].cpu_use, now, machine_cpu_usec(p, &p->machines[i]));
}

/* The CPUs' use sampled again once the last sample is older than its window (poold-cpu.h). */
static void cpu_sample(Poold *p) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        CpuTicks t;
        int r;

        if (p->cpu.blind || !cpu_gate_stale(&p->cpu, now))
                return;
        r = cpu_ticks_read(&t);
        if (r < 0) {
                (void) log_warning_errno(r, "Pool: failed to read /proc/stat, ignoring: executions start whenever a machine is ready");
                p->cpu.blind = true;
                return;
        }
        cpu_gate_sample(&p->cpu, now, &t);
        claimed_look(p, now);
}

/* Whether one more execution may start now, its charge in *ret_charge. */
static bool cpu_room(Poold *p, uint64_t *ret_charge) {
        cpu_sample(p);
        return cpu_gate_take(&p->cpu, claimed_busy(p), ret_charge);
}

/* The number of idle (or starting) machines wanted now: the target, plus the claims that waited
 * lately, as many of them as the CPUs have room for (poold-cpu.h). */
static size_t wanted(const Poold *p) {
        unsigned room = cpu_gate_room(&p->cpu, claimed_busy(p));

        return (size_t) p->config->pool_target + (p->boost < room ? p->boost : room);
}

void machines_fill(Poold *p) {
        size_t starting = machines_count(p, MACHINE_STARTING), ready = machines_count(p, MACHINE_READY), waiting = claims_waiting(p), want;

        p->growth_held = false;
        /* Every waiting claim wants a machine, those the CPUs hold back while one is ready too: the
         * pool grows by as many as wait (as many as the CPUs have room for: wanted()), and keeps
         * them until no claim has waited for BOOST_HOLD_USEC. */
        if (waiting > 0) {
                p->last_wait_at = now_usec(CLOCK_MONOTONIC);
                if (waiting > p->boost)
                        p->boost = (unsigned) (waiting < p->config->pool_max - p->config->pool_target ? waiting : p->config->pool_max - p->config->pool_target);
        }
        if (now_usec(CLOCK_MONOTONIC) < p->backoff_until)
                return;
        /* How much room the CPUs have for the claims waiting is measured now, not remembered. */
        if (waiting > 0)
                cpu_sample(p);
        want = wanted(p);
        /* Machines busy with an execution come back when it ends: they count against the most the
         * pool may hold. */
        while (ready + starting < want && p->n_machines < p->config->pool_max && starting < PARALLEL_STARTS) {
                /* A start the broker refuses is told on the loop (start_refused()); this is one that
                 * could not even be asked. */
                int r = start_one(p);

                if (r == -EBUSY) {
                        /* Its row met another writer's lock: no failure of the machines, tried again soon. */
                        p->backoff_until = now_usec(CLOCK_MONOTONIC) + poold_writes_backoff(0);
                        return;
                }
                if (r < 0) {
                        p->failures++;
                        p->failed_at = now_usec(CLOCK_MONOTONIC);
                        p->backoff_until = p->failed_at + BACKOFF_MAX_USEC;
                        /* systemd refused the start: the claims waiting hear why, not a timeout. */
                        if (failing(p))
                                tell_failing(p);
                        return;
                }
                starting++;
        }
        /* Held back by the CPUs, not by the pool's most: looked at again when the next sample is due. */
        p->growth_held = ready + starting < (size_t) p->config->pool_target + p->boost && p->n_machines < p->config->pool_max &&
                         starting < PARALLEL_STARTS && waiting > 0;
}

/* The earliest waiting claim, NULL for none. */
static Conn *claim_first(Poold *p) {
        Conn *first = NULL;

        for (size_t i = 0; i < p->n_conns; i++)
                if (p->conns[i].state == CONN_CLAIM_WAITING && (!first || p->conns[i].seq < first->seq))
                        first = &p->conns[i];
        return first;
}

/* The ready machine for c (pool_pick()), NULL for none; one whose record waits is not ready yet. */
static Machine *machine_pick(Poold *p, const Conn *c) {
        cleanup_free IdleMachine *idle = calloc(p->n_machines + 1, sizeof(*idle));
        cleanup_free size_t *index = calloc(p->n_machines + 1, sizeof(*index));
        size_t n = 0, pick;

        if (!idle || !index)
                return NULL; /* NOLINT(clang-analyzer-unix.Malloc): idle and index are cleanup_free, unseen by clang-analyzer 14 */
        for (size_t i = 0; i < p->n_machines; i++)
                if (p->machines[i].state == MACHINE_READY && !poold_writes_holds(&p->writes, p->machines[i].id)) {
                        idle[n] = (IdleMachine){.prepared = p->machines[i].prepared, .ready_at = p->machines[i].ready_at};
                        index[n++] = i;
                }
        pick = pool_pick(idle, n, c->language);
        return pick == n ? NULL : &p->machines[index[pick]];
}

/* Machine m, recorded as claimed, to claim c. 0: handed out, or put back for the next claim (the
 * worker stopped waiting at this moment); -EBUSY: the record met the lock, the claim waits;
 * -ENOENT: m was destroyed, another is picked. */
static int claim_hand(Poold *p, Conn *c, Machine *m, uint64_t charge) {
        char line[POOLD_LINE_MAX];
        int r;

        r = db_pool_claim_id(p->db, m->id, (int) c->pid, &m->executions);
        if (r == -EBUSY) {
                cpu_gate_refund(&p->cpu, charge);
                return r;
        }
        if (r < 0) {
                (void) log_error_errno(r, "Failed to record the claim of sandbox '%s': %s", m->id, db_errmsg(p->db));
                m->charge = charge;
                machine_destroy(p, m, POOL_RETIRE_LOST_RECORD);
                return -ENOENT;
        }
        m->charge = charge;
        m->cpu_use = CPU_USE_CLAIMED;
        m->state = MACHINE_CLAIMED;
        m->holder = c->seq;
        c->state = CONN_CLAIM_HELD;
        (void) snprintf(c->machine, sizeof(c->machine), "%s", m->id);
        (void) snprintf(line, sizeof(line), "machine %s %s %" PRId64 "\n", m->id, m->socket, m->executions);
        if (conn_send(c, line) >= 0)
                return 0;
        /* Its worker stopped waiting at this moment (its deadline, its client gone): nothing ran on
         * the machine, which goes to the next claim. */
        c->state = CONN_IDLE;
        c->machine[0] = 0;
        if (machine_release_record(p, m, m->prepared) < 0) {
                machine_destroy(p, m, POOL_RETIRE_NOT_PUT_BACK);
                return -ENOENT;
        }
        machine_unclaim(p, m);
        return 0;
}

/* Hands ready machines to waiting claims, the earliest claim first, as the CPUs have room. */
void machines_dispatch(Poold *p) {
        /* A claim's record met the lock: handed out again at claim_retry_at, in the same order. */
        if (p->claim_retry_at != UINT64_MAX)
                return;
        for (;;) {
                Conn *c = claim_first(p);
                Machine *m;
                uint64_t charge;

                p->gated = false;
                if (!c)
                        return;
                m = machine_pick(p, c);
                if (!m)
                        return;
                if (!cpu_room(p, &charge)) {
                        p->gated = true;
                        return;
                }
                if (claim_hand(p, c, m, charge) == -EBUSY) {
                        /* Another writer holds the lock: the claim waits a moment, on the loop. */
                        p->claim_retry_at = now_usec(CLOCK_MONOTONIC) + poold_writes_backoff(0);
                        return;
                }
        }
}

void claim_request(Poold *p, Conn *c) {
        if (failing(p)) {
                char line[POOLD_LINE_MAX];

                (void) snprintf(line, sizeof(line), "failing %.400s\n", p->failure);
                (void) conn_send(c, line);
                return;
        }
        if (machines_count(p, MACHINE_READY) == 0) {
                size_t waiting = claims_waiting(p);

                if (waiting >= p->config->queue_max) {
                        (void) conn_send(c, "full\n");
                        return;
                }
                /* Counted, for the metrics; the pool grows by as many as wait (machines_fill()). */
                (void) poold_write(p, &(PooldWrite){.op = POOLD_WRITE_COUNTER, .text = "waits", .n = 1});
        }
        c->seq = ++p->next_seq;
        c->state = CONN_CLAIM_WAITING;
        machines_dispatch(p);
}

static PoolRetire retire_from_label(const char *label) {
        for (PoolRetire r = POOL_RETIRE_NONE + 1; r < _POOL_RETIRE_MAX; r++)
                if (strcmp(pool_retire_label(r), label) == 0)
                        return r;
        return POOL_RETIRE_NOT_PUT_BACK;
}

void claim_release(Poold *p, Conn *c, const PooldMsg *msg) {
        Machine *m = c->state == CONN_CLAIM_HELD ? machine_find(p, c->machine) : NULL;
        PoolRetire why = strcmp(msg->word, "none") == 0 ? POOL_RETIRE_NONE : retire_from_label(msg->word);

        c->state = CONN_IDLE;
        c->machine[0] = 0;
        if (!m)
                return;
        /* A machine made on an image rebuilt since serves no more. */
        if (why == POOL_RETIRE_NONE && m->generation != p->generation)
                why = POOL_RETIRE_STALE;
        if (why == POOL_RETIRE_NONE && machine_release_record(p, m, msg->word2) < 0)
                why = POOL_RETIRE_NOT_PUT_BACK;
        if (why != POOL_RETIRE_NONE) {
                machine_destroy(p, m, why);
                return;
        }
        machine_unclaim(p, m);
        m->ready_at = now_usec(CLOCK_MONOTONIC);
        m->prepared = strcmp(msg->word2, "node") == 0 ? "node" : "python";
}

void claim_closed(Poold *p, Conn *c) {
        Machine *m = c->state == CONN_CLAIM_HELD ? machine_find(p, c->machine) : NULL;

        c->state = CONN_IDLE;
        /* Its worker died, or dropped it: what the machine holds is in doubt. */
        if (m)
                machine_destroy(p, m, POOL_RETIRE_WORKER_DIED);
}

/* Idle machines past their TTL go, and those beyond what is wanted once idle for BOOST_HOLD_USEC:
 * a machine that comes back from an execution is not destroyed at once for being one too many,
 * only to be started again moments later. */
void machines_retire_idle(Poold *p) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), ttl = p->config->pool_ttl_s * USEC_PER_SEC;

        for (size_t i = p->n_machines; i > 0; i--) {
                Machine *m = &p->machines[i - 1];

                if (m->state == MACHINE_READY && now - m->ready_at >= ttl)
                        machine_destroy(p, m, POOL_RETIRE_IDLE);
        }
        for (;;) {
                size_t oldest = p->n_machines;

                if (machines_count(p, MACHINE_READY) <= wanted(p))
                        return;
                for (size_t i = 0; i < p->n_machines; i++)
                        if (p->machines[i].state == MACHINE_READY && (oldest == p->n_machines || p->machines[i].ready_at < p->machines[oldest].ready_at))
                                oldest = i;
                if (oldest == p->n_machines || now - p->machines[oldest].ready_at < BOOST_HOLD_USEC)
                        return;
                machine_destroy(p, &p->machines[oldest], POOL_RETIRE_IDLE);
        }
}

/* When the machines next need the loop: a start's deadline, a TTL, a surplus's hold, the boost's
 * end, the back-off's end while machines are wanted. UINT64_MAX: never. */
uint64_t machines_next_deadline(const Poold *p) {
        uint64_t next = UINT64_MAX, ttl = p->config->pool_ttl_s * USEC_PER_SEC;
        bool surplus = machines_count(p, MACHINE_READY) > wanted(p);

#define SOONER(t) (next = (t) < next ? (t) : next)
        for (size_t i = 0; i < p->n_machines; i++) {
                const Machine *m = &p->machines[i];

                if (m->state == MACHINE_STARTING)
                        SOONER(m->deadline);
                if (m->state == MACHINE_READY) {
                        SOONER(m->ready_at + ttl);
                        if (surplus)
                                SOONER(m->ready_at + BOOST_HOLD_USEC);
                }
        }
        if (p->boost > 0)
                SOONER(p->last_wait_at + BOOST_HOLD_USEC);
        /* A claim waits for the CPUs: it looks again once the next sample can be taken. */
        if (p->gated || p->growth_held)
                SOONER(cpu_gate_next(&p->cpu));
        if (p->backoff_until > now_usec(CLOCK_MONOTONIC) && machines_count(p, MACHINE_READY) + machines_count(p, MACHINE_STARTING) < wanted(p))
                SOONER(p->backoff_until);
#undef SOONER
        return next;
}

/* The settings a machine is made with (the broker reads the same file), and the runtime image's tree
 * in use (sandboxd-image writes its name when it switches): a machine made with others is not kept
 * across a restart, nor once idle after the runtime image is rebuilt. */
static void machine_settings(const Config *c, char *buf, size_t size) {
        char tree[256] = "", path[4096];
        struct stat ca = {};
        FILE *f;

        (void) snprintf(path, sizeof(path), "%s/current", c->runtime_state_dir);
        f = fopen(path, "re");
        if (f) {
                if (!fgets(tree, sizeof(tree), f))
                        tree[0] = 0;
                tree[strcspn(tree, "\n")] = 0;
                (void) fclose(f);
        }
        /* The operator's CA bundle is bound in when the machine starts: one that came, went or
         * changed since is a setting changed. */
        if (c->egress_ca_bundle[0])
                (void) stat(c->egress_ca_bundle, &ca);
        /* At most about 700 bytes: the strings are bounded by config_parse() and the tree's name. */
        (void) snprintf(buf, size,
                        "memory=%" PRIu64 " tasks=%" PRIu64 " cpu=%u workspace=%" PRIu64 " tmp=%" PRIu64 " nofile=%u executions=%u "
                        "runtime=%s/%s preload=%s openblas=%s ca=%" PRIu64 ":%" PRIu64 ".%09ld",
                        c->memory_max, c->tasks_max, c->cpu_quota_percent, c->workspace_bytes, c->tmp_bytes, c->nofile,
                        c->executions_per_machine, c->runtime_image, tree, c->preload, c->openblas_coretype, (uint64_t) ca.st_ino,
                        (uint64_t) ca.st_mtim.tv_sec, ca.st_mtim.tv_nsec);
}

/* Idle machines made on a runtime image that has been rebuilt since retire; busy ones once they are
 * back. New ones get the new image. Looked at when a claim comes: a rebuilt image needs no timer. */
void machines_settings_check(Poold *p) {
        char now[sizeof(p->settings)];

        machine_settings(p->config, now, sizeof(now));
        if (p->settings[0] && strcmp(now, p->settings) == 0)
                return;
        if (p->settings[0]) {
                log_info("Pool: the runtime image changed; machines on the old one retire once idle");
                p->generation++;
        }
        memcpy(p->settings, now, sizeof(now));
        for (size_t i = p->n_machines; i > 0; i--)
                if (p->machines[i - 1].state == MACHINE_READY && p->machines[i - 1].generation != p->generation)
                        machine_destroy(p, &p->machines[i - 1], POOL_RETIRE_STALE);
}

/* A ready machine a previous instance left, kept if it is made with today's settings and its runner
 * still greets within a second (before READY=1: no worker waits on this). */
static bool machine_adopt(Poold *p, const PoolRow *l) {
        cleanup_close int fd = -1;
        Machine *m;

        if (machine_state_from_string(l->state) != MACHINE_READY || strcmp(l->settings, p->settings) != 0 ||
            p->n_machines >= p->config->pool_max || ARRAY_GROW(p->machines, p->cap_machines, p->n_machines, 16) < 0)
                return false;
        if (pool_connect(l->socket, &fd) < 0 || pool_wait_greeting(fd, now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC) < 0)
                return false;
        m = &p->machines[p->n_machines++];
        *m = (Machine){.state = MACHINE_READY, .fd = -1, .ready_at = now_usec(CLOCK_MONOTONIC), .prepared = "python", .generation = p->generation};
        (void) snprintf(m->id, sizeof(m->id), "%s", l->machine_id);
        (void) snprintf(m->socket, sizeof(m->socket), "%s", l->socket);
        return true;
}

/* What a previous instance left: idle machines that still answer are kept, the rest destroyed
 * (a claimed one's worker lost its claim with the previous instance's connection). */
void machines_reconcile(Poold *p) {
        cleanup_free PoolRow *rows = NULL;
        size_t n = 0, kept = 0;
        int r;

        r = db_pool_list(p->db, NULL, 0, &rows, &n);
        if (r < 0) {
                (void) log_error_errno(r, "Pool: failed to read what a previous instance left: %s", db_errmsg(p->db));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (machine_adopt(p, &rows[i]))
                        kept++;
                else
                        machine_destroy_id(p, rows[i].machine_id, rows[i].socket, POOL_RETIRE_PREVIOUS_INSTANCE);
        }
        if (n > 0)
                log_info("Pool: kept %zu of %zu sandboxes left by a previous instance", kept, n);
}

/* Sandboxes still booting are not worth keeping; ready ones stay for the next start, and claimed
 * ones go with their workers' connections. */
void machines_stop(Poold *p) {
        for (size_t i = p->n_machines; i > 0; i--)
                if (p->machines[i - 1].state == MACHINE_STARTING)
                        machine_destroy(p, &p->machines[i - 1], POOL_RETIRE_SHUTDOWN);
}
