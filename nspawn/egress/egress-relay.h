/* SPDX-License-Identifier: MIT */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct json_object;

/* sandboxd-egress: the relay between the sandboxes and the egress proxy (egress-relay.c). */

typedef struct Relay Relay;
typedef struct Execution Execution;
typedef struct Pipe Pipe;

/* The names an execution's report lists, each of those reached and refused. */
#define AUDIT_NAMES_MAX 32
/* How long the end of an execution that made connections waits for the proxy's log of them. */
#define AUDIT_WAIT_USEC UINT64_C(250000)
/* The ports awaited at most, per execution: past that, they are not waited for. */
#define AUDIT_PENDING_MAX 256

/* One direction's bytes in transit: a kernel pipe that splice() fills from one socket and drains
 * into the other, so that the bytes are never copied through the relay. */
typedef struct PipeBuffer {
        int r, w;    /* the pipe's ends */
        size_t len;  /* the bytes in it */
        size_t size; /* its capacity */
        bool full;   /* a splice into it found no room though len < size: it holds smaller pieces */
        bool large;  /* one of the relay's large pipes (PIPE_LARGE_BYTES) */
        bool eof;    /* its reader's side ended; once empty, the writer's side is shut */
} PipeBuffer;

/* One of a sandbox's connections: its end (down, in the sandbox's network namespace) and the one
 * to the proxy (up), made from the execution's own address. */
struct Pipe {
        Execution *x;
        int down, up;
        uint16_t up_port; /* up's own port, which the proxy's log names */
        sd_event_source *down_source, *up_source;
        bool choosing;           /* no up yet: waiting for down's first byte, which says where to */
        bool connecting;         /* up's connect() is in progress */
        bool up_shut, down_shut; /* their write sides, shut once their buffer ended */
        PipeBuffer to_up, to_down;
        Pipe *next, *prev;
};

/* One execution, as its worker registered it: its listening socket, its list, its connections. */
struct Execution {
        Relay *relay;
        int conn; /* the worker's connection: its end is the execution's */
        sd_event_source *conn_source;
        int listen_fd; /* bound in the sandbox's network namespace */
        sd_event_source *listen_source;
        struct in_addr address; /* the proxy sees its connections come from it (127.64/10) */
        char id[64];
        uint64_t rx_bytes, tx_bytes;   /* to the sandbox, from it */
        unsigned n_pipes;              /* at once */
        unsigned connections, refused; /* in all, and those refused: past the limit, or by the proxy */
        Pipe *pipes;
        /* From the proxy's log (egress-audit.c): the names its requests and tunnels reached, and
         * those refused, AUDIT_NAMES_MAX of each at most. */
        char *hosts[AUDIT_NAMES_MAX], *refused_hosts[AUDIT_NAMES_MAX];
        unsigned n_hosts, n_refused_hosts;
        unsigned dropped_hosts, dropped_refused_hosts; /* names past AUDIT_NAMES_MAX */
        /* The ports of its connections to the proxy that the log has not named yet: once the worker
         * said the end, it is answered when none is left, or after AUDIT_WAIT_USEC. */
        uint16_t *pending;
        size_t n_pending;
        bool ending;
        sd_event_source *end_timer;
        /* Its bandwidth (Relay.rate): bytes it may still relay, in either direction, as of
         * tokens_at (CLOCK_MONOTONIC µs); once none are left its connections are not read until
         * refill_timer. */
        uint64_t tokens, tokens_at;
        uint64_t tokens_frac; /* what the time since tokens_at earned beyond whole bytes, in bytes·µs */
        sd_event_source *refill_timer;
        Execution *next, *prev;
};

struct Relay {
        sd_event *event;
        int listen_fd; /* the workers' socket */
        sd_event_source *listen_source;
        int audit_fd; /* the proxy's access log comes here (UDP, SANDBOXD_EGRESS_AUDIT); -1: none */
        sd_event_source *audit_source;
        int lists_fd;             /* the directory of the executions' lists, which both proxies read */
        struct sockaddr_in proxy; /* Squid's port for tunnels (CONNECT) */
        struct sockaddr_in front; /* HAProxy's, the proxy of every other request */
        unsigned max_connections; /* one execution's connections at once */
        uint64_t rate;            /* bytes a second one execution may relay, both ways; 0: no limit */
        uint32_t next_address;    /* the next of 127.64/10 to try */
        bool starved;             /* out of descriptors: the listening sources are off until one frees */
        unsigned large_pipes;     /* pipes of PIPE_LARGE_BYTES open now */
        Execution *executions;
};

/* egress-pipe.c: a connection accepted from a sandbox, relayed to the proxy. 0, or -errno (the
 * connection closed). */
int pipe_start(Execution *x, int down);
/* Each of x's connections watched again for what it can do now (its bandwidth refilled). */
void pipes_rearm(Execution *x);
/* Closes both ends and frees p, its bytes counted already. */
void pipe_free(Pipe *p);

/* egress-audit.c: the proxy's log, one line a datagram ("ADDRESS PORT STATUS HOST BUMP_MODE"),
 * read at address (ADDRESS:PORT on loopback) into the executions it names. 0 or -errno. */
int audit_open(Relay *r, const char *address);
/* A connection of x's to the proxy, from port: awaited in the log (once; again at the end for one
 * still open, whose last transaction is logged as it closes). audit_forget(): one that never
 * reached the proxy, which logs nothing of it. */
void audit_expect(Execution *x, uint16_t port);
void audit_forget(Execution *x, uint16_t port);
/* x's names and counts, for its report. */
int audit_report(const Execution *x, struct json_object *j);
/* What x holds for its audit, freed. */
void audit_free(Execution *x);

/* egress-relay.c: "ADDRESS:PORT" (IPv4) into *ret: 0 or -EINVAL. */
int relay_parse_address(const char *s, struct sockaddr_in *ret);

/* egress-relay.c: the report to x's worker, and x freed (report false: no report). */
void execution_free(Execution *x, bool report);

/* egress-relay.c: out of descriptors (EMFILE, ENFILE), the sockets that accept are no longer
 * watched, so that the loop does not spin on them; relay_fed() watches them again once a pipe has
 * freed some. */
void relay_starved(Relay *r);
void relay_fed(Relay *r);
