/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <strings.h>

#include "ctl/language.h"

const char *language_from_path(const char *path) {
        static const struct {
                const char *ext;
                const char *language;
        } table[] = {
                {".py", "python"},
                {".js", "node"},
                {".mjs", "node"},
                {".cjs", "node"},
                {".sh", "bash"},
                {".bash", "bash"},
        };
        const char *base = strrchr(path, '/'), *dot;

        base = base ? base + 1 : path;
        dot = strrchr(base, '.');
        /* ".py" alone is a hidden file's name, not an extension. */
        if (!dot || dot == base)
                return "python";
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcasecmp(dot, table[i].ext) == 0)
                        return table[i].language;
        return "python";
}
