/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Whether the host has a CPU to spare for one more execution (the pool manager's dispatch,
 * poold-machines.c). The pool holds many more machines than the host has CPUs, so that snippets
 * that sleep or wait do not hold up others; but an execution's time limit is wall-clock time, and
 * CPU-bound snippets started together beyond the CPUs all slow down until they miss it. So as many
 * executions as there are CPUs start whenever a machine is ready; more start only while the host's
 * CPUs were idle over the last window, each counted as COST of a CPU until the next sample shows
 * what it really uses. Pure, but for cpu_ticks_read(). */

/* Ticks of all CPUs together, from /proc/stat's first line. */
typedef struct CpuTicks {
        uint64_t idle;  /* idle and iowait: time an execution could have had */
        uint64_t total; /* everything but guest time, which user time already counts */
} CpuTicks;

typedef struct CpuGate {
        unsigned cpus;        /* executions that start whatever the load (the host's CPUs) */
        uint64_t window_usec; /* how long one sample of the CPUs' use spans, at least */
        uint64_t sampled_at;  /* CLOCK_MONOTONIC µs of the last sample; 0: none yet */
        CpuTicks last;
        double spare;    /* CPUs idle over the last window, less COST per execution started since */
        uint64_t window; /* counts the samples: an execution's charge is refunded in its own window only */
        bool blind;      /* /proc/stat unreadable: no gate beyond the machines the pool holds */
} CpuGate;

/* What one execution started beyond the CPUs is assumed to use until the next sample: half a CPU,
 * so that short executions alongside sleeping ones still start at once, while a burst of CPU-bound
 * ones takes at most twice the idle CPUs before the sample after it stops the next. */
#define CPU_GATE_COST 0.5
#define CPU_GATE_WINDOW_USEC (UINT64_C(100) * 1000)

/* Parses the text of /proc/stat (its first line, "cpu  user nice system idle iowait irq softirq
 * steal guest guest_nice"). -EINVAL when it is not that. */
int cpu_ticks_parse(const char *text, CpuTicks *ret);

/* Reads /proc/stat. -errno. */
int cpu_ticks_read(CpuTicks *ret);

/* The CPUs idle between samples a and b, of cpus: in [0, cpus]; -1 when no tick passed. */
double cpu_idle_between(const CpuTicks *a, const CpuTicks *b, unsigned cpus);

void cpu_gate_init(CpuGate *g, unsigned cpus);

/* Whether the last sample is older than its window (then cpu_gate_sample() before deciding). */
bool cpu_gate_stale(const CpuGate *g, uint64_t now);

/* A new sample, taken at now: the spare CPUs are what was idle since the last one. The first
 * sample leaves the spare as it was (all CPUs), and one within the same tick changes nothing but
 * when the next is due. */
void cpu_gate_sample(CpuGate *g, uint64_t now, const CpuTicks *ticks);

/* Whether one more execution may start, running already of them: true, and charged (its charge
 * returned in *ret_charge, 0 for none), when fewer than the CPUs run or a spare CPU is left. */
bool cpu_gate_take(CpuGate *g, unsigned running, uint64_t *ret_charge);

/* How many more executions the CPUs have room for now, running already of them: the pool grows
 * for no more claims than that, as a machine started for a claim the CPUs hold back costs a start's
 * CPU for nothing. */
unsigned cpu_gate_room(const CpuGate *g, unsigned running);

/* An execution ended or never started: its charge comes back if no sample was taken since. */
void cpu_gate_refund(CpuGate *g, uint64_t charge);

/* When a gated claim should look again: the end of the current window. */
uint64_t cpu_gate_next(const CpuGate *g);

/* A claimed machine's use of the CPUs, as the gate counts it. The CPUs' worth of executions that
 * always start are those that use a CPU: a snippet that sleeps or waits on the network holds a
 * machine, not a CPU, and counted as running, 64 of them made every short execution wait for the
 * idle check of the next window. */
typedef struct CpuUse {
        uint64_t seen_at; /* CLOCK_MONOTONIC µs of the last look; 0: not looked at since its claim */
        uint64_t usec;    /* its CPU time then */
        bool busy;        /* used CPU_GATE_BUSY_PERCENT of a CPU or more between the last two looks */
} CpuUse;

#define CPU_GATE_BUSY_PERCENT 10

/* What a claim starts with: busy until a look over a whole interval shows otherwise. */
#define CPU_USE_CLAIMED ((CpuUse){.busy = true})

/* A look at now, when the machine had used usage µs of CPU (UINT64_MAX: unreadable, which leaves
 * it busy): busy when this is its first look, when its time went back, or when it used the share
 * or more since the last. Pure. */
void cpu_use_update(CpuUse *u, uint64_t now, uint64_t usage);
