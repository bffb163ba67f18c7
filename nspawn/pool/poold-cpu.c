/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/macro.h"
#include "nspawn/pool/poold-cpu.h"

int cpu_ticks_parse(const char *text, CpuTicks *ret) {
        uint64_t v[8] = {};
        int n;

        /* The fields after steal (guest, guest_nice) are already in user and nice. Kernels before
         * 2.6.11 had fewer fields: four at least, the rest zero. */
        if (strncmp(text, "cpu ", 4) != 0)
                return -EINVAL;
        n = sscanf(text + 4, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]);
        if (n < 4)
                return -EINVAL;
        *ret = (CpuTicks){.idle = v[3] + v[4]};
        for (int i = 0; i < 8; i++)
                ret->total += v[i];
        return 0;
}

int cpu_ticks_read(CpuTicks *ret) {
        cleanup_close int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
        char buf[512];
        ssize_t n;

        if (fd < 0)
                return -errno;
        /* The first line is all that is wanted, and it comes first in one read. */
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        return cpu_ticks_parse(buf, ret);
}

double cpu_idle_between(const CpuTicks *a, const CpuTicks *b, unsigned cpus) {
        uint64_t total, idle;

        if (b->total <= a->total)
                return -1;
        total = b->total - a->total;
        /* A counter that went back (iowait may, on some kernels): nothing was idle. */
        idle = b->idle >= a->idle ? b->idle - a->idle : 0;
        if (idle > total)
                idle = total;
        return (double) cpus * (double) idle / (double) total;
}

void cpu_gate_init(CpuGate *g, unsigned cpus) {
        *g = (CpuGate){.cpus = cpus > 0 ? cpus : 1, .window_usec = CPU_GATE_WINDOW_USEC, .spare = cpus > 0 ? cpus : 1};
}

bool cpu_gate_stale(const CpuGate *g, uint64_t now) {
        return g->sampled_at == 0 || now - g->sampled_at >= g->window_usec;
}

void cpu_gate_sample(CpuGate *g, uint64_t now, const CpuTicks *ticks) {
        double idle = g->sampled_at == 0 ? -1 : cpu_idle_between(&g->last, ticks, g->cpus);

        g->sampled_at = now;
        /* No tick since (a window shorter than one): the spare stays, and the next window is
         * measured from the same ticks. */
        if (g->window > 0 && idle < 0)
                return;
        if (idle >= 0)
                g->spare = idle;
        g->window++;
        g->last = *ticks;
}

bool cpu_gate_take(CpuGate *g, unsigned running, uint64_t *ret_charge) {
        *ret_charge = 0;
        if (running < g->cpus || g->blind)
                return true;
        if (g->spare < CPU_GATE_COST)
                return false;
        g->spare -= CPU_GATE_COST;
        *ret_charge = g->window + 1;
        return true;
}

unsigned cpu_gate_room(const CpuGate *g, unsigned running) {
        unsigned room = running < g->cpus ? g->cpus - running : 0;

        if (g->blind)
                return UINT_MAX;
        return room + (g->spare >= CPU_GATE_COST ? (unsigned) (g->spare / CPU_GATE_COST) : 0);
}

void cpu_gate_refund(CpuGate *g, uint64_t charge) {
        if (charge != 0 && charge == g->window + 1)
                g->spare += CPU_GATE_COST;
}

uint64_t cpu_gate_next(const CpuGate *g) {
        return g->sampled_at + g->window_usec;
}

void cpu_use_update(CpuUse *u, uint64_t now, uint64_t usage) {
        if (usage == UINT64_MAX) {
                *u = CPU_USE_CLAIMED;
                return;
        }
        if (u->seen_at != 0 && now > u->seen_at && usage >= u->usec)
                u->busy = (usage - u->usec) * 100 >= (now - u->seen_at) * CPU_GATE_BUSY_PERCENT;
        else
                u->busy = true;
        u->seen_at = now;
        u->usec = usage;
}
