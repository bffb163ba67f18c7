/* SPDX-License-Identifier: MIT */
/* sandboxd-egress: the relay between the sandboxes that may reach the network and the egress proxy
 * (README, "Network: egress by name").
 *
 * A sandbox has no route anywhere. For an execution that asks for network, the runner binds a
 * listening socket in the sandbox's own network namespace (127.0.0.1:3128 there, where the code's
 * HTTP_PROXY points) and its worker hands it here, with the execution's list, over one
 * SOCK_SEQPACKET connection that lasts as long as the execution:
 *
 *   worker -> relay   {"id": REQUEST_ID, "allow": [ENTRY, ...]}, the listening socket alongside
 *   relay -> worker   {"address": "127.64.x.y"} once the list is written and the socket watched,
 *                     or {"error": WHY}
 *   worker -> relay   {"end": true} when the execution ended (or the connection closes: the
 *                     worker went, and so does what it registered)
 *   relay -> worker   {"rx_bytes", "tx_bytes", "connections", "refused", "hosts": [NAME, ...],
 *                     "refused_hosts": [NAME, ...]} (the names from the proxy's log,
 *                     egress-audit.c), then it closes.
 *
 * Each connection the code opens is accepted here and relayed to the proxy from an address of the
 * execution's own in 127.64.0.0/10, which names it to the proxies: each reads the list written
 * under that address (Squid's helper, egress-acl.c; the front's egress-list.lua). A tunnel (CONNECT)
 * goes to Squid's tunnel port, any other request to the front, HAProxy, the proxy of plain HTTP
 * (egress-pipe.c). The
 * code never reaches the proxy but through its own socket, so it can neither widen its list nor
 * speak as another execution. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "lib/egress.h"
#include "lib/env-file.h"
#include "lib/fd-util.h"
#include "lib/listen-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/socket-util.h"
#include "nspawn/egress/egress-relay.h"

DEFINE_JSON_CLEANUP

#define REGISTRATION_MAX (EGRESS_REQUEST_MAX * (EGRESS_ENTRY_MAX + 4) + 256)
#define EXECUTIONS_MAX 4096
/* 127.64.0.0/10: 4 million addresses, none of them 127.0.0.1, which local services answer on. */
#define ADDRESS_BASE 0x7f400000U
#define ADDRESS_COUNT 0x003fffffU

static bool address_in_use(const Relay *r, uint32_t a) {
        for (const Execution *x = r->executions; x; x = x->next)
                if (ntohl(x->address.s_addr) == a)
                        return true;
        return false;
}

/* The next address no execution holds: executions are few beside 4 million. */
static struct in_addr address_take(Relay *r) {
        uint32_t a;

        do {
                a = ADDRESS_BASE + 1 + r->next_address;
                r->next_address = (r->next_address + 1) % (ADDRESS_COUNT - 1);
        } while (address_in_use(r, a));
        return (struct in_addr){.s_addr = htonl(a)};
}

static void address_text(struct in_addr a, char buf[INET_ADDRSTRLEN]) {
        (void) inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* The execution's list, where the proxy's helper finds it: written whole, then renamed in place. */
static int list_write(const Relay *r, const Execution *x, struct json_object *allow) {
        char name[INET_ADDRSTRLEN], tmp[INET_ADDRSTRLEN + 8];
        cleanup_close int fd = -1;
        size_t n = json_object_array_length(allow);
        int ret = 0;

        address_text(x->address, name);
        (void) snprintf(tmp, sizeof(tmp), ".%s", name);
        fd = openat(r->lists_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        for (size_t i = 0; i < n && ret >= 0; i++) {
                struct json_object *e = json_object_array_get_idx(allow, i);

                ret = fd_write_all(fd, json_object_get_string(e), (size_t) json_object_get_string_len(e));
                if (ret >= 0)
                        ret = fd_write_all(fd, "\n", 1);
        }
        if (ret >= 0 && renameat(r->lists_fd, tmp, r->lists_fd, name) < 0)
                ret = -errno;
        if (ret < 0)
                (void) unlinkat(r->lists_fd, tmp, 0);
        return ret;
}

static void list_remove(const Relay *r, const Execution *x) {
        char name[INET_ADDRSTRLEN];

        address_text(x->address, name);
        (void) unlinkat(r->lists_fd, name, 0);
}

static void send_json(int fd, struct json_object *j) {
        size_t len = 0;
        const char *text = j ? json_object_to_json_string_length(j, JSON_C_TO_STRING_PLAIN, &len) : NULL;

        if (text)
                (void) fd_send_one(fd, text, len, -1, MSG_DONTWAIT);
}

/* No more of the execution's traffic: its socket and every connection closed. */
static void execution_stop(Execution *x) {
        x->listen_source = sd_event_source_disable_unref(x->listen_source);
        closep(&x->listen_fd);
        for (Pipe *p = x->pipes, *next; p; p = next) {
                next = p->next;
                pipe_free(p);
        }
}

/* The execution's end: its list gone first (no new connection is let through), then its socket
 * and connections; the worker told what it used, when it is still there to hear. */
void execution_free(Execution *x, bool report) {
        Relay *r = x->relay;

        list_remove(r, x);
        execution_stop(x);
        if (report) {
                cleanup_json struct json_object *j = json_object_new_object();

                if (j && json_object_object_add(j, "rx_bytes", json_object_new_int64((int64_t) x->rx_bytes)) >= 0 &&
                    json_object_object_add(j, "tx_bytes", json_object_new_int64((int64_t) x->tx_bytes)) >= 0 &&
                    json_object_object_add(j, "connections", json_object_new_int64(x->connections)) >= 0 &&
                    json_object_object_add(j, "refused", json_object_new_int64(x->refused)) >= 0 && audit_report(x, j) >= 0)
                        send_json(x->conn, j);
        }
        audit_free(x);
        sd_event_source_disable_unref(x->conn_source);
        closep(&x->conn);
        if (x->prev)
                x->prev->next = x->next;
        else
                r->executions = x->next;
        if (x->next)
                x->next->prev = x->prev;
        free(x);
}

/* A connection of the code's: relayed, unless the execution has as many open as it may. */
static int on_sandbox_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Execution *x = userdata;
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        (void) s;
        (void) revents;
        if (c < 0) {
                if (errno == EMFILE || errno == ENFILE)
                        relay_starved(x->relay);
                return 0;
        }
        x->connections++;
        if (x->n_pipes >= x->relay->max_connections) {
                x->refused++;
                (void) close(c);
                return 0;
        }
        (void) pipe_start(x, c);
        return 0;
}

static int on_audit_waited(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        execution_free(userdata, true);
        return 0;
}

/* What the worker says once registered: the end, or nothing more (its connection closed). The end
 * is answered once the proxy's log named every connection the execution made to it, or
 * AUDIT_WAIT_USEC passed; its traffic stops at once. */
static int on_worker_end(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Execution *x = userdata;
        char buf[256];
        ssize_t n = fd_receive_one(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL);

        (void) revents;
        if (n == -EAGAIN)
                return 0;
        /* A connection still open has its last transaction logged as it closes, now. */
        for (Pipe *p = x->pipes; n > 0 && !x->ending && p; p = p->next)
                if (!p->connecting)
                        audit_expect(x, p->up_port);
        if (n <= 0 || x->n_pending == 0 || x->ending) {
                execution_free(x, n > 0);
                return 0;
        }
        x->ending = true;
        execution_stop(x);
        list_remove(x->relay, x);
        /* Only its hang-up is heard from the worker now, which frees it at once. */
        if (sd_event_add_time_relative(x->relay->event, &x->end_timer, CLOCK_MONOTONIC, AUDIT_WAIT_USEC, 0, on_audit_waited, x) < 0)
                execution_free(x, true);
        (void) s;
        return 0;
}

/* The worker's registration: {"id", "allow"} with the listening socket. 0, or -errno with *why. */
static int registration_parse(const char *buf, size_t len, char id[64], struct json_object **ret_allow, const char **why) {
        cleanup_json struct json_object *j = json_tokener_parse(buf);
        struct json_object *v = NULL, *allow = NULL;
        size_t n;

        (void) len;
        if (!j || !json_object_is_type(j, json_type_object) || !json_object_object_get_ex(j, "id", &v) ||
            !json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 || json_object_get_string_len(v) >= 64 ||
            !json_object_object_get_ex(j, "allow", &allow) || !json_object_is_type(allow, json_type_array)) {
                *why = "not a registration";
                return -EINVAL;
        }
        n = json_object_array_length(allow);
        if (n == 0 || n > EGRESS_REQUEST_MAX) {
                *why = "an empty or overlong list";
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(allow, i);
                EgressRule rule;

                if (!json_object_is_type(e, json_type_string) ||
                    egress_rule_parse(json_object_get_string(e), (size_t) json_object_get_string_len(e), &rule) < 0) {
                        *why = "an entry that is no host name";
                        return -EINVAL;
                }
        }
        (void) snprintf(id, 64, "%s", json_object_get_string(v));
        *ret_allow = json_object_get(allow);
        return 0;
}

static void refuse(int fd, const char *why) {
        cleanup_json struct json_object *j = json_object_new_object();

        if (j && json_object_object_add(j, "error", json_object_new_string(why)) >= 0)
                send_json(fd, j);
}

/* A listening TCP socket, as the runner made it: anything else is refused. */
static bool listening_stream(int fd) {
        int type = 0, listening = 0;
        socklen_t len = sizeof(type), len2 = sizeof(listening);

        return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) >= 0 && type == SOCK_STREAM &&
               getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len2) >= 0 && listening;
}

static int on_worker_registration(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int execution_start(Relay *r, int conn, int listen_fd, const char *id, struct json_object *allow) {
        char text[INET_ADDRSTRLEN];
        cleanup_json struct json_object *ok = NULL;
        Execution *x = calloc(1, sizeof(*x));
        int ret;

        if (!x)
                return -ENOMEM;
        *x = (Execution){.relay = r, .conn = conn, .listen_fd = listen_fd, .address = address_take(r), .next = r->executions};
        (void) snprintf(x->id, sizeof(x->id), "%s", id);
        if (r->executions)
                r->executions->prev = x;
        r->executions = x;
        (void) fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
        ret = list_write(r, x, allow);
        if (ret >= 0)
                ret = sd_event_add_io(r->event, &x->listen_source, listen_fd, EPOLLIN, on_sandbox_connection, x);
        if (ret >= 0 && r->starved)
                ret = sd_event_source_set_enabled(x->listen_source, SD_EVENT_OFF);
        if (ret >= 0)
                ret = sd_event_add_io(r->event, &x->conn_source, conn, EPOLLIN, on_worker_end, x);
        if (ret < 0) {
                /* Both are the caller's still: it answers, and closes them. */
                x->conn = x->listen_fd = -1;
                execution_free(x, false);
                return ret;
        }
        address_text(x->address, text);
        ok = json_object_new_object();
        if (ok && json_object_object_add(ok, "address", json_object_new_string(text)) >= 0)
                send_json(conn, ok);
        return 0;
}

/* A worker's first message. */
static int on_worker_registration(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Relay *r = userdata;
        cleanup_json struct json_object *allow = NULL;
        char buf[REGISTRATION_MAX + 1], id[64];
        cleanup_close int listen_fd = -1;
        const char *why = NULL;
        ssize_t n;
        int ret;

        (void) revents;
        n = fd_receive_one(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT, &listen_fd);
        if (n == -EAGAIN)
                return 0;
        /* From here on the connection is the execution's, or closed. */
        sd_event_source_disable_unref(s);
        if (n <= 0) {
                (void) close(fd);
                return 0;
        }
        buf[n] = 0;
        ret = registration_parse(buf, (size_t) n, id, &allow, &why);
        if (ret >= 0 && (listen_fd < 0 || !listening_stream(listen_fd)))
                why = "no listening socket came with it", ret = -EINVAL;
        if (ret >= 0) {
                ret = execution_start(r, fd, listen_fd, id, allow);
                if (ret >= 0) {
                        TAKE_FD(listen_fd);
                        return 0;
                }
                why = "it could not be watched";
                (void) log_warning_errno(ret, "Egress: %s: failed to register: %s", id, strerror(-ret));
        }
        refuse(fd, why);
        (void) close(fd);
        return 0;
}

static void sources_enable(Relay *r, int enabled) {
        (void) sd_event_source_set_enabled(r->listen_source, enabled);
        for (Execution *x = r->executions; x; x = x->next)
                if (x->listen_source)
                        (void) sd_event_source_set_enabled(x->listen_source, enabled);
}

void relay_starved(Relay *r) {
        if (r->starved)
                return;
        r->starved = true;
        (void) log_warning_errno(EMFILE, "Egress: out of descriptors: no new connection is taken until one closes");
        sources_enable(r, SD_EVENT_OFF);
}

void relay_fed(Relay *r) {
        if (!r->starved)
                return;
        r->starved = false;
        sources_enable(r, SD_EVENT_ON);
}

static int on_listener(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Relay *r = userdata;
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        sd_event_source *registration = NULL;
        unsigned n = 0;

        (void) s;
        (void) revents;
        if (c < 0) {
                if (errno == EMFILE || errno == ENFILE)
                        relay_starved(r);
                return 0;
        }
        for (Execution *x = r->executions; x; x = x->next)
                n++;
        /* Only the workers' user registers; past the cap, nobody until some end. The source's one
         * reference is on_worker_registration()'s to drop. */
        if (!socket_peer_allowed(c, geteuid()) || n >= EXECUTIONS_MAX ||
            sd_event_add_io(r->event, &registration, c, EPOLLIN, on_worker_registration, r) < 0)
                (void) close(c);
        return 0;
}

/* The workers' socket: systemd's (sandboxd-egress.socket), or, without socket activation, one of
 * our own at path, for the workers' user only. */
static int open_listener(const char *path) {
        return listen_unix("Egress", path, SOCK_SEQPACKET | SOCK_NONBLOCK, 0600, 64);
}

int relay_parse_address(const char *s, struct sockaddr_in *ret) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        SocketAddress a;

        if (socket_address_parse(s, &a) < 0 || a.bracketed || inet_pton(AF_INET, a.host, &sa.sin_addr) != 1)
                return -EINVAL;
        sa.sin_port = htons(a.port);
        *ret = sa;
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Relay *r = userdata;

        (void) s;
        (void) si;
        /* Every execution's list goes with the relay: nothing it registered is let through after. */
        for (Execution *x = r->executions, *next; x; x = next) {
                next = x->next;
                execution_free(x, false);
        }
        return sd_event_exit(r->event, 0);
}

/* Its settings (the environment: the unit's), its lists' directory, its socket and its loop. */
static int relay_setup(Relay *r) {
        const char *lists = env_get_or("SANDBOXD_EGRESS_LISTS", "/run/sandboxd/egress");
        const char *proxy = env_get_or("SANDBOXD_EGRESS_PROXY", "127.0.0.1:3129");
        const char *front = env_get_or("SANDBOXD_EGRESS_FRONT", "127.0.0.1:3131");
        const char *max = env_get_or("SANDBOXD_EGRESS_MAX_CONNECTIONS", "32");
        const char *audit = env_get_or("SANDBOXD_EGRESS_AUDIT", "127.0.0.1:3130");
        const char *rate = env_get_or("SANDBOXD_EGRESS_RATE_BYTES", "104857600");
        unsigned long m;
        char *end = NULL;
        sigset_t mask;
        int ret;

        /* It parses what the workers send: never as root. */
        if (geteuid() == 0)
                return log_error_errno(EPERM, "Egress: refusing to run as root");
        errno = 0;
        m = strtoul(max, &end, 10);
        if (errno || *end || m < 1 || m > 4096)
                return log_error_errno(EINVAL, "Egress: SANDBOXD_EGRESS_MAX_CONNECTIONS=%s is not a number from 1 to 4096", max);
        r->max_connections = (unsigned) m;
        errno = 0;
        r->rate = strtoull(rate, &end, 10);
        if (errno || *end || !isdigit((unsigned char) rate[0]))
                return log_error_errno(EINVAL, "Egress: SANDBOXD_EGRESS_RATE_BYTES=%s is not a number of bytes a second (0: no limit)", rate);
        if (relay_parse_address(proxy, &r->proxy) < 0)
                return log_error_errno(EINVAL, "Egress: SANDBOXD_EGRESS_PROXY=%s is not ADDRESS:PORT", proxy);
        if (relay_parse_address(front, &r->front) < 0)
                return log_error_errno(EINVAL, "Egress: SANDBOXD_EGRESS_FRONT=%s is not ADDRESS:PORT", front);
        if (mkdir(lists, 0755) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Egress: failed to make %s", lists);
        r->lists_fd = open(lists, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (r->lists_fd < 0)
                return log_error_errno(errno, "Egress: failed to open %s", lists);
        r->listen_fd = open_listener(env_get_or("SANDBOXD_EGRESS_SOCKET", "/run/sandboxd/egress.sock"));
        if (r->listen_fd < 0)
                return r->listen_fd;

        (void) signal(SIGPIPE, SIG_IGN);
        if (sigemptyset(&mask) < 0 || sigaddset(&mask, SIGTERM) < 0 || sigaddset(&mask, SIGINT) < 0 || sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Egress: failed to block signals");
        ret = sd_event_new(&r->event);
        if (ret >= 0)
                ret = sd_event_add_signal(r->event, NULL, SIGTERM, on_signal, r);
        if (ret >= 0)
                ret = sd_event_add_signal(r->event, NULL, SIGINT, on_signal, r);
        if (ret >= 0)
                ret = sd_event_add_io(r->event, &r->listen_source, r->listen_fd, EPOLLIN, on_listener, r);
        if (ret < 0)
                return log_error_errno(ret, "Egress: failed to set up its event loop");
        /* Every execution's names are recorded: without the proxy's log, no relay. */
        ret = audit_open(r, audit);
        if (ret < 0)
                return log_error_errno(ret, "Egress: failed to listen for the proxy's log on SANDBOXD_EGRESS_AUDIT=%s (a loopback ADDRESS:PORT)", audit);
        return 0;
}

int main(void) {
        Relay r = {.listen_fd = -1, .lists_fd = -1, .audit_fd = -1};
        int ret;

        if (relay_setup(&r) < 0)
                return EXIT_FAILURE;
        (void) sd_notify(0, "READY=1");
        ret = sd_event_loop(r.event);
        if (ret < 0)
                (void) log_error_errno(ret, "Egress: its event loop failed");
        return ret < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
