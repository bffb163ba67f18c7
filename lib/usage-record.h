/* SPDX-License-Identifier: MIT */
#pragma once

/* What a member's requests use of each API key, as the other members add it to their own when they
 * check the key's quotas (README, "Several hosts"): in etcd under USAGE_PREFIX<member>, under the
 * member's lease, written with its record (at most every 200 ms). One JSON object:
 *
 *   {"rows": [["team-a", "in_flight", 0, 2], ["team-a", "exec", 1796296585000, 3],
 *             ["team-a", "cpu", 1796296620000, 1840]]}
 *
 * each row a key, a kind (db/schema.sql, step 19), the end of its bucket (unix ms: a second for
 * executions, a minute for CPU; 0 for the counts now) and the amount. */

#include <stddef.h>
#include <stdint.h>

#define USAGE_PREFIX "/sandboxd/usage/"

typedef struct UsageRow {
        char key[65];
        char kind[16];
        int64_t end_ms;
        int64_t amount;
} UsageRow;

/* Whether kind is one a usage record carries (in_flight, exec, cpu). Pure. */
int usage_kind_valid(const char *kind);

/* The rows as JSON (caller frees); NULL on out of memory. Pure. */
char *usage_record_format(const UsageRow *rows, size_t n);

/* json into *ret (malloc'd, the caller's) and *ret_n: 0, or -EBADMSG for anything but a whole list
 * of valid rows. Pure. */
int usage_record_parse(const char *json, UsageRow **ret, size_t *ret_n);
