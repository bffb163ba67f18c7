/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* Whether a field of a request's audit entry measures what the request cost: a time (…_MS,
 * …_USEC, …_NSEC), a size (…_BYTES) or a resource (CPU_…, MEMORY_…, IO_…, TASKS_…). By the name
 * alone, so that fields sandboxd adds later show without sandboxctl knowing them. Pure. */
bool usage_field(const char *name);
