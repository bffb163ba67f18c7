/* SPDX-License-Identifier: MIT */
/* sandboxd-broker: the only sandboxd process that keeps root, and the only one that talks to systemd.
 * It starts, kills, lists and collects sandboxd's own units, built from its own configuration, for
 * the unprivileged workers and pool manager, and parses no HTTP input: it takes fixed-layout
 * requests (broker-proto.h) on the socket systemd passes it (sandboxd-broker.socket) from peers
 * running as the workers' user, and hangs up on everyone else. What a sandbox is (command, mounts,
 * limits, users) comes from the broker's own configuration; a request only says which of sandboxd's
 * units to act on. Linked with libc and libsystemd only.
 *
 * This file is the event loop and its clients (broker.h says how a request is served). Each
 * connection may have several requests in progress; each is answered when its work is over, in
 * the order the work ends. Idle, the loop sleeps: it arms no timer but a request's own deadline. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/fd-util.h"
#include "lib/listen-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/socket-util.h"
#include "nspawn/broker/broker.h"
#include "nspawn/broker/session-list.h"

/* Connections at once; past it the listener waits (the kernel's backlog holds new ones). */
#define CLIENTS_MAX 128
/* Requests in progress on one connection; past it that connection is not read until one ends. */
#define CLIENT_REQUESTS_MAX 16

struct Client {
        Broker *broker;
        int fd; /* -1 once the peer hung up or was dropped */
        sd_event_source *source;
        unsigned n_requests;
        bool reading; /* its messages are being read: not freed under that loop */
        Client *next;
};

static void client_update(Client *c);

static void clients_unlink(Broker *b, Client *c) {
        for (Client **p = &b->clients; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        b->n_clients--;
        /* Room again for a connection the backlog holds. */
        if (!b->stopping)
                (void) sd_event_source_set_enabled(b->listen_source, SD_EVENT_ON);
}

/* Its connection ends now; the client goes once its last request is answered. */
static void client_close(Client *c) {
        c->source = sd_event_source_disable_unref(c->source);
        closep(&c->fd);
        if (c->n_requests == 0 && !c->reading) {
                clients_unlink(c->broker, c);
                free(c);
        }
}

/* A client that does not read its replies is dropped, not waited for. */
static int send_reply(int fd, const BrokerReply *rep, int pass_fd) {
        return fd_send_one(fd, rep, sizeof(*rep), pass_fd, MSG_DONTWAIT);
}

/* The one place an Error becomes the reply's fixed-size words on the wire. */
static void reply_fail(BrokerReply *rep, int r, const Error *err) {
        rep->error = r < 0 ? r : -EIO;
        (void) snprintf(rep->message, sizeof(rep->message), "%s", error_message(err, rep->error));
}

void request_reply(Request *q, int r) {
        Client *c = TAKE_PTR(q->client);

        if (!c)
                return;
        if (r < 0)
                reply_fail(&q->rep, r, &q->err);
        if (c->fd >= 0 && send_reply(c->fd, &q->rep, q->out_fd) < 0)
                client_close(c);
        closep(&q->out_fd);
        c->n_requests--;
        if (c->fd < 0 && c->n_requests == 0)
                client_close(c);
        else if (c->fd >= 0)
                client_update(c);
}

static void request_unlink(Request **list, Request *q) {
        for (Request **p = list; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        break;
                }
        q->next = NULL;
}

static bool same_unit(const Request *a, const char *id) {
        return a->req.id[0] && strcmp(a->req.id, id) == 0;
}

static void request_run(Request *q);

/* Stopping, the broker ends once no request is left but tool calls: their processes end with the
 * unit, as a tool call in flight fails with its broker (sandboxd-broker.service). */
static void exit_if_drained(Broker *b) {
        if (!b->stopping || b->waiting)
                return;
        for (Request *q = b->running; q; q = q->next)
                if (q->req.op != BROKER_RUN_TOOL)
                        return;
        (void) sd_event_exit(b->event, 0);
}

/* The first request that waited for one about id to end, started. */
static void request_run_next(Broker *b, const char *id) {
        for (Request *q = b->waiting; q; q = q->next)
                if (same_unit(q, id)) {
                        request_unlink(&b->waiting, q);
                        request_run(q);
                        return;
                }
}

void request_free(Request *q) {
        Broker *b;
        char id[sizeof(q->req.id)];

        if (!q)
                return;
        assert(!q->job && !q->step);
        b = q->broker;
        request_reply(q, -ECANCELED);
        request_unlink(&b->running, q);
        memcpy(id, q->req.id, sizeof(id));
        closep(&q->passed_fd);
        closep(&q->out_fd);
        closep(&q->child_fd);
        q->child = sd_event_source_unref(q->child);
        q->then = sd_bus_message_unref(q->then);
        free(q);
        if (id[0])
                request_run_next(b, id);
        exit_if_drained(b);
}

void request_finish(Request *q, int r) {
        request_reply(q, r);
        request_free(q);
}

static int request_start(Request *q) {
        switch (q->req.op) {
        case BROKER_START_WARM:
                return machine_start_warm(q);
        case BROKER_KILL:
                return machine_kill(q);
        case BROKER_RESET_FAILED:
                return machine_reset_failed(q);
        case BROKER_LIST:
                return machine_list(q);
        case BROKER_RUN_TOOL:
                return machine_run_tool(q);
        case BROKER_SESSION_START:
        case BROKER_SESSION_CREATE:
                return session_start(q);
        case BROKER_SESSION_STOP:
        case BROKER_SESSION_DELETE:
                return session_stop(q);
        case BROKER_SESSION_LIST:
                return session_list_units(q);
        default:
                return -EINVAL;
        }
}

/* q started: answered now if it failed at once, else when its work ends. */
static void request_run(Request *q) {
        int r;

        q->next = q->broker->running;
        q->broker->running = q;
        r = request_start(q);
        if (r < 0)
                request_finish(q, r);
}

/* A checked request of c's, started, or queued behind one about the same unit. */
static void request_new(Client *c, const BrokerRequest *req, int passed_fd) {
        Request *q = calloc(1, sizeof(*q));

        if (!q) {
                BrokerReply rep = {};

                (void) close(passed_fd);
                reply_fail(&rep, -ENOMEM, NULL);
                (void) send_reply(c->fd, &rep, -1);
                return;
        }
        *q = (Request){.broker = c->broker, .client = c, .req = *req, .passed_fd = passed_fd, .out_fd = -1, .child_fd = -1};
        c->n_requests++;
        for (Request *p = c->broker->running; p; p = p->next)
                if (same_unit(p, q->req.id)) {
                        Request **tail = &c->broker->waiting;

                        while (*tail)
                                tail = &(*tail)->next;
                        *tail = q;
                        return;
                }
        request_run(q);
}

/* One message of c's: a request, or a reason to refuse it. false: c is gone. */
static bool client_receive(Client *c) {
        BrokerRequest req = {};
        BrokerReply rep = {};
        cleanup_close int passed = -1;
        ssize_t n;
        int r;

        /* Whatever descriptors come with a message are closed unless it is a request that uses one. */
        n = fd_receive_one(c->fd, &req, sizeof(req), MSG_DONTWAIT, &passed);
        if (n == -EAGAIN)
                return false;
        /* The end of the connection, an empty message or a broken socket: none is a request. */
        if (n == 0 || (n < 0 && n != -EMSGSIZE && n != -EXFULL)) {
                client_close(c);
                return false;
        }
        r = n < 0 ? -EPROTO : broker_request_check(&req, (size_t) n);
        if (r < 0) {
                (void) log_warning_errno(r, "Broker: refused a malformed request (op %u)", n >= 8 ? req.op : 0);
                reply_fail(&rep, r, NULL);
                if (send_reply(c->fd, &rep, -1) < 0 || r == -EPROTO) {
                        client_close(c);
                        return false;
                }
                return true;
        }
        request_new(c, &req, TAKE_FD(passed));
        return true;
}

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Client *c = userdata;

        (void) s;
        (void) fd;
        (void) revents;
        /* A request answered (or the connection closed) meanwhile cannot free c under this loop. */
        c->reading = true;
        /* Until nothing is queued, or c has as many requests in progress as it may. */
        while (c->fd >= 0 && c->n_requests < CLIENT_REQUESTS_MAX && client_receive(c))
                ;
        c->reading = false; /* NOLINT(clang-analyzer-unix.Malloc): c->reading keeps c from being freed under this loop */
        if (c->fd < 0)
                client_close(c);
        else
                client_update(c);
        return 0;
}

/* c is read while it may start more requests. */
static void client_update(Client *c) {
        if (c->source && !c->broker->stopping)
                (void) sd_event_source_set_enabled(c->source, c->n_requests < CLIENT_REQUESTS_MAX ? SD_EVENT_ON : SD_EVENT_OFF);
}

static int on_listener(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Broker *b = userdata;
        cleanup_close int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        Client *c;

        (void) s;
        (void) revents;
        if (cfd < 0)
                return 0;
        if (!socket_peer_allowed(cfd, b->uid)) {
                (void) log_warning_errno(EPERM, "Broker: refused a connection from a process not of sandboxd");
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return 0;
        *c = (Client){.broker = b, .fd = cfd, .next = b->clients};
        if (sd_event_add_io(b->event, &c->source, cfd, EPOLLIN, on_client, c) < 0) {
                free(c);
                return 0;
        }
        TAKE_FD(cfd);
        b->clients = c;
        if (++b->n_clients >= CLIENTS_MAX)
                (void) sd_event_source_set_enabled(b->listen_source, SD_EVENT_OFF);
        return 0;
}

void broker_close_for_child(Broker *b) {
        for (Client *c = b->clients; c; c = c->next)
                closep(&c->fd);
        closep(&b->listen_fd);
}

/* The socket systemd passes (sandboxd-broker.socket); without socket activation (development), one
 * of our own. Anyone may connect: peers are checked with SO_PEERCRED. */
static int open_listener(void) {
        return listen_unix("Broker", BROKER_SOCKET, SOCK_SEQPACKET, 0666, 64);
}

static int lookup_user(const char *name, uid_t *ret) {
        struct passwd *pw;

        errno = 0;
        pw = getpwnam(name);
        if (!pw)
                return log_error_errno(errno ? errno : ESRCH, "User '%s' (SANDBOXD_USER) does not exist", name);
        if (pw->pw_uid == 0)
                return log_error_errno(EPERM, "SANDBOXD_USER must not be root");
        *ret = pw->pw_uid;
        return 0;
}

/* The reservations, beside the sessions' disks (root's only, kept across reboots as sessions are).
 * Ranges of machines whose units are gone without their ExecStopPost= (the host or its systemd went
 * down with them) are given up now, before any start: the loop serves nobody yet. */
static int open_uid_ranges(Broker *b) {
        (void) snprintf(b->uid_dir, sizeof(b->uid_dir), "%s/uid-ranges", b->config->session_dir);
        if (mkdir(b->uid_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Broker: failed to make %s", b->uid_dir);
        b->uid_dir_fd = open(b->uid_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->uid_dir_fd < 0)
                return log_error_errno(errno, "Broker: failed to open %s", b->uid_dir);
        if (broker_bus(b)) {
                session_list_release_stale_ranges(b->bus, b->uid_dir_fd);
                session_list_ask_sweep(b->bus);
        }
        return 0;
}

/* Tests only: the broker's own environment, which no API client reaches (broker.h). */
static void read_test_settings(Broker *b) {
        const char *v = getenv("SANDBOXD_TEST_DISK_FORMAT_DELAY_S");

        if (v && *v) {
                b->test_format_delay_s = (unsigned) strtoul(v, NULL, 10) % 600;
                log_warning("Broker: SANDBOXD_TEST_DISK_FORMAT_DELAY_S=%u, a test's setting: session disks are formatted late",
                            b->test_format_delay_s);
        }
}

/* What is in progress is finished first (a session's start half done would leave its disk made and
 * no machine); nothing new is taken meanwhile. systemd's stop timeout bounds the wait. */
static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Broker *b = userdata;

        (void) s;
        (void) si;
        b->stopping = true;
        (void) sd_event_source_set_enabled(b->listen_source, SD_EVENT_OFF);
        for (Client *c = b->clients; c; c = c->next)
                if (c->source)
                        (void) sd_event_source_set_enabled(c->source, SD_EVENT_OFF);
        exit_if_drained(b);
        return 0;
}

/* systemctl reload: nothing it may change is the broker's, but it says which of its settings wait
 * for a restart. */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) s;
        (void) userdata;
        (void) daemon_reload("sandboxd-broker", NULL, si);
        daemon_notify_status(NULL);
        return 0;
}

/* SIGTERM and SIGINT end the loop; SIGHUP is a reload; SIGCHLD is the tool calls' processes'
 * (sd_event_add_child). */
static int setup_loop(Broker *b) {
        int r;

        if (sigemptyset(&b->signal_mask) < 0 || sigaddset(&b->signal_mask, SIGTERM) < 0 || sigaddset(&b->signal_mask, SIGINT) < 0 ||
            sigaddset(&b->signal_mask, SIGHUP) < 0 || sigaddset(&b->signal_mask, SIGCHLD) < 0 || sigprocmask(SIG_BLOCK, &b->signal_mask, NULL) < 0)
                return log_error_errno(errno, "Broker: failed to block signals");
        (void) signal(SIGPIPE, SIG_IGN);
        r = sd_event_new(&b->event);
        if (r >= 0)
                r = sd_event_add_signal(b->event, NULL, SIGTERM, on_signal, b);
        if (r >= 0)
                r = sd_event_add_signal(b->event, NULL, SIGINT, on_signal, b);
        if (r >= 0)
                r = sd_event_add_signal(b->event, NULL, SIGHUP, on_reload, b);
        if (r < 0)
                return log_error_errno(r, "Broker: failed to set up its event loop");
        return 0;
}

static int setup_listener(Broker *b) {
        int r;

        b->listen_fd = open_listener();
        if (b->listen_fd < 0)
                return b->listen_fd;
        r = sd_event_add_io(b->event, &b->listen_source, b->listen_fd, EPOLLIN, on_listener, b);
        if (r < 0)
                return log_error_errno(r, "Broker: failed to watch its socket");
        return 0;
}

int main(int argc, char *argv[]) {
        Config config;
        Broker b = {.config = &config, .uid_dir_fd = -1, .listen_fd = -1};
        int r;

        r = daemon_reload_main(argc, argv);
        if (r >= 0)
                return r;
        if (daemon_start("sandboxd-broker", true, &config) < 0 || lookup_user(config.user, &b.uid) < 0 || setup_loop(&b) < 0 ||
            open_uid_ranges(&b) < 0 || setup_listener(&b) < 0)
                return EXIT_FAILURE;
        read_test_settings(&b);
        (void) sd_notify(0, "READY=1");
        daemon_notify_status(NULL);

        r = sd_event_loop(b.event);
        if (r < 0)
                (void) log_error_errno(r, "Broker: its event loop failed");
        (void) sd_notify(0, "STOPPING=1");
        /* Tool calls in progress end with the process (and their sandboxes with the unit's stop): their
         * clients see the connection close. */
        broker_bus_done(&b);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
