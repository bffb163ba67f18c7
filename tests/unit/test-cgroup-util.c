/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup-util.h"
#include "tests/unit/tap.h"

/* A file of text, as a cgroup file would read; its path into path. */
static void file_with(char *path, size_t size, const char *text) {
        FILE *f;

        (void) snprintf(path, size, "/tmp/test-cgroup-util-%d", (int) getpid());
        f = fopen(path, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                abort();
}

int main(void) {
        char path[64];
        uint64_t v = 7;

        /* v2 cpu.stat: the key's own line, not one that begins with it. */
        file_with(path, sizeof(path), "usage_usec_x 1\nusage_usec 145376\nuser_usec 69226\n");
        tap_ok(cgroup_read_number(path, "usage_usec", &v) == 0 && v == 145376, "cpu.stat usage_usec");
        tap_ok(cgroup_read_number(path, "user_usec", &v) == 0 && v == 69226, "cpu.stat user_usec");
        tap_ok(cgroup_read_number(path, "nice_usec", &v) == -ENOENT, "a key it does not have: -ENOENT");

        /* v1 memory.oom_control: oom_kill, not oom_kill_disable. */
        file_with(path, sizeof(path), "oom_kill_disable 1\nunder_oom 0\noom_kill 3\n");
        tap_ok(cgroup_read_number(path, "oom_kill", &v) == 0 && v == 3, "memory.oom_control oom_kill");

        /* A file of one number: memory.peak, memory.max_usage_in_bytes. */
        file_with(path, sizeof(path), "218832896\n");
        tap_ok(cgroup_read_number(path, NULL, &v) == 0 && v == 218832896, "one number");
        file_with(path, sizeof(path), "max\n");
        tap_ok(cgroup_read_number(path, NULL, &v) == -EBADMSG, "no number: -EBADMSG");
        file_with(path, sizeof(path), "");
        tap_ok(cgroup_read_number(path, NULL, &v) == -ENOENT, "an empty file: -ENOENT");

        (void) unlink(path);
        tap_ok(cgroup_read_number(path, NULL, &v) == -ENOENT, "no file: -ENOENT");
        return tap_done();
}
