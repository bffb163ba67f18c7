/* SPDX-License-Identifier: MIT */
/* What the egress proxy did for each execution, from its access log: the names its code reached
 * and those refused, for the execution's report to its worker (egress-relay.c), which records
 * them with the request.
 *
 * Squid sends each line of its log as one UDP datagram to the relay on the host's loopback
 * (squid.conf.in's "access_log udp://"), as soon as a tunnel ends; the front (HAProxy, the proxy of
 * plain HTTP) sends each request's end in the same form. A line names the
 * execution by the address its connection came from (the relay's, one for each execution), and
 * the connection by its port: an execution that ends waits for the lines of the connections it
 * made, at most AUDIT_WAIT_USEC, so that what its last connections did is in its report. A
 * connection carries one transaction, whose line is its last: a tunnel, or one plain request (the
 * front closes each connection after its answer, haproxy.cfg.in). Another
 * local process could send lines here too; it could add names to a record, never let anything
 * through. */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "lib/egress.h"
#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/egress/audit-line.h"
#include "nspawn/egress/egress-relay.h"

/* name into the set, unless it is there; one past AUDIT_NAMES_MAX is counted in *dropped, so
 * that a record says it is not whole. */
static void names_add(char **set, unsigned *n, unsigned *dropped, const char *name) {
        for (unsigned i = 0; i < *n; i++)
                if (strcmp(set[i], name) == 0)
                        return;
        if (*n >= AUDIT_NAMES_MAX)
                (*dropped)++;
        else if ((set[*n] = strdup(name)))
                (*n)++;
}

static void pending_drop(Execution *x, uint16_t port) {
        for (size_t i = 0; i < x->n_pending; i++)
                if (x->pending[i] == port) {
                        x->pending[i] = x->pending[--x->n_pending];
                        return;
                }
}

static Execution *execution_by_address(Relay *r, struct in_addr a) {
        for (Execution *x = r->executions; x; x = x->next)
                if (x->address.s_addr == a.s_addr)
                        return x;
        return NULL;
}

static void audit_take(Relay *r, const AuditLine *l) {
        Execution *x = execution_by_address(r, l->address);

        if (!x)
                return; /* one that ended: its report went without it */
        /* A step that decided nothing (a tunnel's peek) is not its connection's last line; the
         * front's line of a request that never went to its host is, with nothing to count. */
        if (l->refused || l->reached || l->aside || !l->host[0])
                pending_drop(x, l->port);
        if (l->refused)
                x->refused++;
        if (l->host[0] && l->refused)
                names_add(x->refused_hosts, &x->n_refused_hosts, &x->dropped_refused_hosts, l->host);
        else if (l->host[0] && l->reached)
                names_add(x->hosts, &x->n_hosts, &x->dropped_hosts, l->host);
        if (x->ending && x->n_pending == 0)
                execution_free(x, true);
}

static int on_audit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Relay *r = userdata;

        (void) s;
        (void) revents;
        for (;;) {
                char buf[2048], *save = NULL;
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

                if (n < 0)
                        return 0; /* EAGAIN: all read; anything else: the next datagram will say */
                buf[n] = 0;
                for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        AuditLine l;

                        if (audit_line_parse(line, &l) >= 0)
                                audit_take(r, &l);
                }
        }
}

int audit_open(Relay *r, const char *address) {
        struct sockaddr_in sa;
        cleanup_close int fd = -1;

        /* Loopback only: nothing from outside the host is read as the proxy's. */
        if (relay_parse_address(address, &sa) < 0 || (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
                return -EINVAL;
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        r->audit_fd = TAKE_FD(fd);
        return sd_event_add_io(r->event, &r->audit_source, r->audit_fd, EPOLLIN, on_audit, r);
}

void audit_expect(Execution *x, uint16_t port) {
        uint16_t *p;

        if (x->relay->audit_fd < 0 || port == 0 || x->n_pending >= AUDIT_PENDING_MAX)
                return;
        for (size_t i = 0; i < x->n_pending; i++)
                if (x->pending[i] == port)
                        return;
        p = realloc(x->pending, (x->n_pending + 1) * sizeof(*p));
        if (!p)
                return;
        x->pending = p;
        x->pending[x->n_pending++] = port;
}

/* The set, and "+N more" last when N names did not fit. */
static struct json_object *names_json(char *const *set, unsigned n, unsigned dropped) {
        struct json_object *a = json_object_new_array();
        char more[32];

        for (unsigned i = 0; a && i < n; i++)
                if (json_object_array_add(a, json_object_new_string(set[i])) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        (void) snprintf(more, sizeof(more), "+%u more", dropped);
        if (a && dropped > 0 && json_object_array_add(a, json_object_new_string(more)) < 0) {
                json_object_put(a);
                return NULL;
        }
        return a;
}

void audit_forget(Execution *x, uint16_t port) {
        pending_drop(x, port);
}

int audit_report(const Execution *x, struct json_object *j) {
        if (json_object_object_add(j, "hosts", names_json(x->hosts, x->n_hosts, x->dropped_hosts)) < 0 ||
            json_object_object_add(j, "refused_hosts", names_json(x->refused_hosts, x->n_refused_hosts, x->dropped_refused_hosts)) < 0)
                return -ENOMEM;
        return 0;
}

void audit_free(Execution *x) {
        for (unsigned i = 0; i < x->n_hosts; i++)
                free(x->hosts[i]);
        for (unsigned i = 0; i < x->n_refused_hosts; i++)
                free(x->refused_hosts[i]);
        x->n_hosts = x->n_refused_hosts = 0;
        free(x->pending);
        x->pending = NULL;
        x->n_pending = 0;
        x->end_timer = sd_event_source_disable_unref(x->end_timer);
        x->refill_timer = sd_event_source_disable_unref(x->refill_timer);
}
