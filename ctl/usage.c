/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "ctl/usage.h"

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);

        return n > k && strcmp(s + n - k, suffix) == 0;
}

static bool starts_with(const char *s, const char *prefix) {
        size_t k = strlen(prefix);

        return strlen(s) > k && strncmp(s, prefix, k) == 0;
}

bool usage_field(const char *name) {
        static const char *const suffixes[] = {"_MS", "_USEC", "_NSEC", "_BYTES"};
        static const char *const prefixes[] = {"CPU_", "MEMORY_", "IO_", "TASKS_"};

        /* The journal's own fields (_PID, __REALTIME_TIMESTAMP…) are not sandboxd's. */
        if (name[0] == '_')
                return false;
        for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
                if (ends_with(name, suffixes[i]))
                        return true;
        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
                if (starts_with(name, prefixes[i]))
                        return true;
        return false;
}
