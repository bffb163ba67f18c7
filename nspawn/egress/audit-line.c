/* SPDX-License-Identifier: MIT */
/* A line of the egress proxies' log, classified (audit-line.h): pure, so that a unit test holds the
 * classification to both proxies' lines. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/egress/audit-line.h"

int audit_line_parse(char *line, AuditLine *ret) {
        char *save = NULL, *field[5];
        unsigned long port;
        char *end = NULL;
        size_t n = 0;

        for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                /* A line with more fields is none of ours: no field of ours has a space. */
                if (n == ELEMENTSOF(field))
                        return -EINVAL;
                field[n++] = t;
        }
        if (n != ELEMENTSOF(field) || inet_pton(AF_INET, field[0], &ret->address) != 1)
                return -EINVAL;
        errno = 0;
        port = strtoul(field[1], &end, 10);
        if (errno || *end || port == 0 || port > 65535)
                return -EINVAL;
        ret->port = (uint16_t) port;
        /* Squid's (tunnels): TCP_DENIED is its access rules; a tunnel that ended as "terminate":
         * its SNI named another host; another TCP_ status went on to the name; NONE_ is a step that
         * decided nothing (a tunnel's peek, a refusal's error page). The front's (plain HTTP,
         * haproxy.cfg.in), FRONT_ and HAProxy's termination state: H, D, L or - second, the
         * request went to the host, whatever came after (a body found malformed on the way is P
         * first); else P first, HAProxy refused it (its rules or its parser), but for a name the
         * resolver did not answer ("unresolved", a failure); else the client went or timed out
         * before anything went. */
        bool front = strncmp(field[2], "FRONT_", 6) == 0;
        bool went = front && strlen(field[2]) >= 8 && strchr("HDL-", field[2][7]);

        ret->refused = strncmp(field[2], "TCP_DENIED", 10) == 0 || strcmp(field[4], "terminate") == 0 ||
                       (front && !went && field[2][6] == 'P' && strcmp(field[4], "unresolved") != 0);
        ret->reached = !ret->refused && (went || strncmp(field[2], "TCP_", 4) == 0);
        ret->aside = front && !ret->refused && !ret->reached;
        ret->host[0] = 0;
        /* A name or an address as a proxy parsed it: nothing else goes into a record. */
        if (strcmp(field[3], "-") != 0 && strlen(field[3]) <= EGRESS_ENTRY_MAX &&
            strspn(field[3], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") == strlen(field[3]))
                memcpy(ret->host, field[3], strlen(field[3]) + 1);
        return 0;
}

