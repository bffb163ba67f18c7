/* SPDX-License-Identifier: MIT */
#pragma once

/* An enum's words, one table each: X_to_string() and X_from_string() generated from a
 * `static const char *const X_table[]` indexed by the enum, so that a state is a value in memory
 * and its word is written in one place (the model is systemd's DEFINE_STRING_TABLE_LOOKUP). */

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The index of key in table (n entries, NULL entries skipped), or -EINVAL for NULL or a word that
 * is not there. Pure. */
static inline int string_table_find(const char *const *table, size_t n, const char *key) {
        if (!key)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && strcmp(table[i], key) == 0)
                        return (int) i;
        return -EINVAL;
}

/* Defines `const char *name_to_string(type)` (NULL out of range) and `type name_from_string(const
 * char *)` (-EINVAL, the enum's _INVALID, for a word not in the table) over name_table. */
#define DEFINE_STRING_TABLE(name, type)                                                                           \
        const char *name##_to_string(type i) {                                                                    \
                if ((long) i < 0 || (size_t) i >= sizeof(name##_table) / sizeof(name##_table[0]))                 \
                        return NULL;                                                                              \
                return name##_table[i];                                                                           \
        }                                                                                                         \
        type name##_from_string(const char *s) {                                                                  \
                return (type) string_table_find(name##_table, sizeof(name##_table) / sizeof(name##_table[0]), s); \
        }
