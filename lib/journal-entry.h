/* SPDX-License-Identifier: MIT */
#pragma once

/* Journal entries as sandboxctl reads and shows them. */

#include <stddef.h>
#include <stdint.h>

typedef struct sd_journal sd_journal;
struct json_object;

/* The audit entry every request gets (fcgi/audit.h). */
#define ENTRY_AUDIT_MESSAGE_ID "8c2f1d5e6a3b4c7d9e0f1a2b3c4d5e6f"

/* The current entry of j as a JSON object of strings: every field whose name does not start with
 * '_' (those are journald's own) and whose value is UTF-8 text, plus "time" (ISO 8601, UTC). Owned
 * by the caller. */
int entry_to_json(sd_journal *j, struct json_object **ret);

/* A field of such an object, or "" when it has none. Borrowed from the object. */
const char *entry_get(struct json_object *entry, const char *field);

/* The entry's wall-clock time in µs, 0 when unknown. */
uint64_t entry_realtime(sd_journal *j);

/* A syslog priority, "0".."7", as a word: "emerg" … "debug"; "?" otherwise. */
const char *entry_priority_name(const char *priority);
