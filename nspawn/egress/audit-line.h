/* SPDX-License-Identifier: MIT */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/egress.h"

/* One line of the egress proxies' log, as the relay reads it (egress-audit.c): "ADDRESS PORT STATUS
 * HOST MODE", from Squid (squid.conf.in, a tunnel's) or the front (haproxy.cfg.in, a plain
 * request's), split and classified. */
typedef struct AuditLine {
        struct in_addr address;
        uint16_t port;
        bool refused; /* by the proxy's rules: its access control, or a tunnel cut for its SNI */
        bool reached; /* sent on to the name (Squid's TCP_ statuses but TCP_DENIED; the front's that went) */
        bool aside;   /* the front's line for a request that never went to its host */
        char host[EGRESS_ENTRY_MAX + 1]; /* "" when none was read (a connection that asked nothing) */
} AuditLine;

/* A line of the log into *ret (line is split in place): 0, or -EINVAL for one that is not ours.
 * Pure. */
int audit_line_parse(char *line, AuditLine *ret);
