/* SPDX-License-Identifier: MIT */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* sandboxd-egress: the relay between the sandboxes and the egress proxy (egress-relay.c). */

typedef struct Relay Relay;
typedef struct Execution Execution;
typedef struct Pipe Pipe;

/* What each relayed connection buffers in each direction. */
#define PIPE_BUFFER_BYTES (64U << 10)

typedef struct PipeBuffer {
        char data[PIPE_BUFFER_BYTES];
        size_t start, end; /* the bytes not yet written: data[start, end) */
        bool eof;          /* its reader's side ended; once empty, the writer's side is shut */
} PipeBuffer;

/* One of a sandbox's connections: its end (down, in the sandbox's network namespace) and the one
 * to the proxy (up), made from the execution's own address. */
struct Pipe {
        Execution *x;
        int down, up;
        sd_event_source *down_source, *up_source;
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
        unsigned connections, refused; /* in all, and those past the limit */
        Pipe *pipes;
        Execution *next, *prev;
};

struct Relay {
        sd_event *event;
        int listen_fd; /* the workers' socket */
        sd_event_source *listen_source;
        int lists_fd; /* the directory of the executions' lists, which the proxy's helper reads */
        struct sockaddr_in proxy;
        unsigned max_connections; /* one execution's connections at once */
        uint32_t next_address;    /* the next of 127.64/10 to try */
        bool starved;             /* out of descriptors: the listening sources are off until one frees */
        Execution *executions;
};

/* egress-pipe.c: a connection accepted from a sandbox, relayed to the proxy. 0, or -errno (the
 * connection closed). */
int pipe_start(Execution *x, int down);
/* Closes both ends and frees p, its bytes counted already. */
void pipe_free(Pipe *p);

/* egress-relay.c: out of descriptors (EMFILE, ENFILE), the sockets that accept are no longer
 * watched, so that the loop does not spin on them; relay_fed() watches them again once a pipe has
 * freed some. */
void relay_starved(Relay *r);
void relay_fed(Relay *r);
