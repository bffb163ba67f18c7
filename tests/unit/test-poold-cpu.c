/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "nspawn/pool/poold-cpu.h"
#include "tests/unit/tap.h"

static void test_parse(void) {
        CpuTicks t;

        tap_is_int(cpu_ticks_parse("cpu  10 2 30 400 5 6 7 8 99 1\ncpu0 1 2 3 4\n", &t), 0, "parse: a kernel's line");
        tap_is_int((long long) t.idle, 405, "parse: idle counts iowait");
        tap_is_int((long long) t.total, 468, "parse: total leaves out guest time, already in user");
        tap_is_int(cpu_ticks_parse("cpu 1 2 3 4\n", &t), 0, "parse: an old kernel's four fields");
        tap_is_int((long long) t.total, 10, "parse: four fields summed");
        tap_is_int(cpu_ticks_parse("cpu0 1 2 3 4\n", &t), -EINVAL, "parse: not the first line");
        tap_is_int(cpu_ticks_parse("cpu 1 2\n", &t), -EINVAL, "parse: too few fields");
        tap_is_int(cpu_ticks_parse("", &t), -EINVAL, "parse: empty");
}

static void test_idle(void) {
        CpuTicks a = {.idle = 100, .total = 200}, b = {.idle = 150, .total = 300}, c = {.idle = 90, .total = 400};

        tap_ok(cpu_idle_between(&a, &b, 2) == 1.0, "idle: half the ticks idle of 2 CPUs is 1 CPU");
        tap_ok(cpu_idle_between(&a, &a, 2) < 0, "idle: no tick passed");
        tap_ok(cpu_idle_between(&b, &c, 4) == 0.0, "idle: a counter that went back counts nothing idle");
        tap_ok(cpu_idle_between(&b, &a, 4) < 0, "idle: time that went back");
}

/* The CPUs' count starts whatever the load; beyond, a spare CPU admits two (COST 0.5), and a
 * refund in the same window gives the place back. */
static void test_gate(void) {
        CpuGate g;
        CpuTicks t0 = {.idle = 0, .total = 0}, busy = {.idle = 0, .total = 20}, half = {.idle = 10, .total = 40};
        uint64_t charge, first;

        cpu_gate_init(&g, 2);
        tap_ok(cpu_gate_stale(&g, 1), "gate: no sample yet is stale");
        cpu_gate_sample(&g, 1000, &t0);
        tap_ok(!cpu_gate_stale(&g, 1000 + CPU_GATE_WINDOW_USEC - 1), "gate: fresh within its window");
        tap_ok(cpu_gate_stale(&g, 1000 + CPU_GATE_WINDOW_USEC), "gate: stale after it");

        tap_ok(cpu_gate_take(&g, 0, &charge) && charge == 0, "gate: fewer running than CPUs: starts, uncharged");
        tap_ok(cpu_gate_take(&g, 1, &charge) && charge == 0, "gate: still fewer than CPUs");
        /* Before any window: all CPUs counted spare. */
        tap_ok(cpu_gate_take(&g, 2, &first) && first != 0, "gate: beyond the CPUs, charged");
        for (unsigned i = 0; i < 3; i++)
                tap_ok(cpu_gate_take(&g, 3 + i, &charge), "gate: charged while spare is left (%u)", i);
        tap_ok(!cpu_gate_take(&g, 6, &charge) && charge == 0, "gate: 2 spare CPUs admit 4 beyond, not a fifth");
        cpu_gate_refund(&g, first);
        tap_ok(cpu_gate_take(&g, 5, &charge), "gate: a refund in the same window gives the place back");

        /* The CPUs were busy over the next window: none beyond. */
        cpu_gate_sample(&g, 1000 + CPU_GATE_WINDOW_USEC, &busy);
        tap_ok(!cpu_gate_take(&g, 2, &charge), "gate: CPUs all busy: none beyond them");
        tap_ok(cpu_gate_take(&g, 1, &charge), "gate: but up to the CPUs' count, always");
        cpu_gate_refund(&g, first);
        tap_ok(!cpu_gate_take(&g, 2, &charge), "gate: a charge of an earlier window is not refunded");

        /* Half idle: 1 CPU spare, two beyond. */
        cpu_gate_sample(&g, 1000 + 2 * CPU_GATE_WINDOW_USEC, &half);
        tap_ok(cpu_gate_take(&g, 2, &charge) && cpu_gate_take(&g, 3, &charge), "gate: one CPU idle admits two");
        tap_ok(!cpu_gate_take(&g, 4, &charge), "gate: not three");
        /* A sample within the same tick changes nothing. */
        cpu_gate_sample(&g, 1000 + 3 * CPU_GATE_WINDOW_USEC, &half);
        tap_ok(!cpu_gate_take(&g, 4, &charge), "gate: no tick since: the spare stays as it was");
        tap_is_int((long long) cpu_gate_next(&g), 1000 + 4 * CPU_GATE_WINDOW_USEC, "gate: but the next look is a window later");

        tap_is_int(cpu_gate_room(&g, 0), 2, "room: the CPUs' count, nothing spare");
        tap_is_int(cpu_gate_room(&g, 5), 0, "room: none when busy");
        g.spare = 1.6;
        tap_is_int(cpu_gate_room(&g, 5), 3, "room: 1.6 spare CPUs, three at half a CPU each");
        tap_is_int(cpu_gate_room(&g, 1), 4, "room: and one more place below the CPUs' count");
        g.blind = true;
        tap_ok(cpu_gate_room(&g, 100) > 1000, "room: blind: no bound");
        tap_ok(cpu_gate_take(&g, 100, &charge) && charge == 0, "gate: blind: no gate");
}

/* A claimed machine's looks: {CPU µs at each look, 100 ms apart} and whether it is busy after each. */
static void test_use(void) {
        static const struct {
                const char *name;
                uint64_t usage[3];
                bool busy[3];
        } cases[] = {
                {"a sleeper: busy until a whole interval shows it idle", {5000, 5100, 5200}, {true, false, false}},
                {"a CPU-bound snippet stays busy", {5000, 105000, 205000}, {true, true, true}},
                {"exactly a tenth of a CPU is busy", {0, 10000, 19999}, {true, true, false}},
                {"one that wakes up is busy again", {0, 100, 60000}, {true, false, true}},
                {"an unreadable cgroup counts as busy", {0, UINT64_MAX, 100}, {true, true, true}},
                {"a time that went back is no proof of idleness", {9000, 8000, 8100}, {true, true, false}},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                CpuUse u = CPU_USE_CLAIMED;
                bool ok = u.busy;

                for (size_t k = 0; k < 3; k++) {
                        cpu_use_update(&u, UINT64_C(1000000) + k * UINT64_C(100000), cases[i].usage[k]);
                        ok = ok && u.busy == cases[i].busy[k];
                }
                tap_ok(ok, "use: %s", cases[i].name);
        }
}

int main(void) {
        test_parse();
        test_idle();
        test_gate();
        test_use();
        return tap_done();
}
