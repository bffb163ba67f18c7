/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Config Config;
struct json_object;

/* A worker's link to the egress relay (nspawn/egress/egress-relay.c) for one execution that asks
 * for network: opened before a machine is claimed, so that no code runs without the way out it
 * asked for; the sandbox's socket handed over once the runner sent it; ended with the execution. */
typedef struct EgressLink {
        int fd; /* the relay's connection; -1: none */
        bool registered, answered; /* the registration sent; the relay's answer to it read */
        /* What it is registered as, once the runner's socket came: the execution's or session's
         * name, for the relay's log, and its list (borrowed, both). */
        const char *id;
        struct json_object *allow;
        /* Its end's report: bytes to the sandbox and from it, connections made and refused, and
         * the names reached and refused (comma-separated, malloc'd; NULL: none said). */
        uint64_t rx_bytes, tx_bytes, connections, refused;
        char *hosts, *refused_hosts;
} EgressLink;

#define EGRESS_LINK_NULL ((EgressLink){.fd = -1})

/* Connects to the relay: 0, or -errno when none listens (egress is unavailable here). */
int egress_link_open(const Config *c, EgressLink *ret);

/* After the request went to the runner (input sent, write side shut): the runner's socket received
 * from runner_fd (its first byte, RUNNER_EGRESS_MARK) and registered with the relay as l->id with
 * l->allow. Waits until deadline (CLOCK_MONOTONIC µs) or until client_fd hangs up (-1: none). 0;
 * -EPROTO when the runner sent no socket; -EREMOTEIO when the relay refused it or went; -ETIME,
 * -ECANCELED, -errno. */
int egress_link_start(EgressLink *l, int runner_fd, int client_fd, uint64_t deadline);

/* The execution ended: the relay told so, its report read into l (0 and NULL when it said
 * nothing), the link closed. Waits at most a second: the relay answers once the proxy's log named
 * the execution's last connections, at most a quarter of a second later. */
void egress_link_end(EgressLink *l);

/* The link closed, and what l holds freed. */
void egress_link_close(EgressLink *l);
#define cleanup_egress_link __attribute__((cleanup(egress_link_close)))
