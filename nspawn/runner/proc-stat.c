/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/macro.h"
#include "nspawn/runner/proc-stat.h"

pid_t proc_outer_pid(pid_t init, pid_t inner) {
        char path[64], line[256];
        cleanup_free char *children = NULL;
        size_t len = 0;
        FILE *f;
        pid_t found = -1;

        (void) snprintf(path, sizeof(path), "/proc/%d/task/%d/children", init, init);
        f = fopen(path, "re");
        if (!f)
                return -1;
        if (getline(&children, &len, f) < 0) {
                (void) fclose(f);
                return -1;
        }
        (void) fclose(f);
        for (char *save = NULL, *w = strtok_r(children, " \n", &save); w && found < 0; w = strtok_r(NULL, " \n", &save)) {
                (void) snprintf(path, sizeof(path), "/proc/%s/status", w);
                f = fopen(path, "re");
                while (f && fgets(line, sizeof(line), f))
                        if (strncmp(line, "NSpid:", 6) == 0) {
                                const char *last = strrchr(line, '\t');

                                if (last && atoi(last + 1) == inner)
                                        found = atoi(w);
                                break;
                        }
                if (f)
                        (void) fclose(f);
        }
        return found;
}

int64_t proc_cpu_usec(pid_t pid) {
        char path[64], buf[1024];
        unsigned long long t[4];
        const char *p;
        ssize_t n;
        int fd;

        if (pid <= 0)
                return -1;
        (void) snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        (void) close(fd);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        /* After the command's ")": state is field 3, utime..cstime are fields 14 to 17. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &t[0], &t[1], &t[2], &t[3]) != 4)
                return -1;
        return (int64_t) ((t[0] + t[1] + t[2] + t[3]) * (USEC_PER_SEC / (uint64_t) sysconf(_SC_CLK_TCK)));
}

int64_t proc_peak_bytes(pid_t pid) {
        char path[64], line[256];
        long long kb = -1;
        FILE *f;

        if (pid <= 0)
                return 0;
        (void) snprintf(path, sizeof(path), "/proc/%d/status", pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
                        break;
        if (f)
                (void) fclose(f);
        return kb > 0 ? kb * 1024 : 0;
}
