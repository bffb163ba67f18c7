/* SPDX-License-Identifier: MIT */
/* sandboxd-front-watch: keeps the front's HAProxy current from etcd's registry of members
 * (cluster/member-record.h), through HAProxy's runtime API, without a reload (README, "Several
 * hosts"). Event-driven: it reads the registry once, then follows etcd's watch of it (on a thread
 * of cluster/follow.h's, the retries timers of its sd-event loop); each change becomes a few
 * commands:
 *   - a member that registers: a server of backend "work" (executions, tool calls, new sessions,
 *     balanced leastconn by the member's agent check), and its address in the map that sends a
 *     session's routes to the member its id names;
 *   - a member that drains: its server drained (no new work; its sessions still reach it);
 *   - a member whose lease ended: both removed; its sessions then answer 503 (the front's config).
 * It also writes the servers and the map into files that HAProxy reads when it starts, so that a
 * restarted HAProxy routes at once, before the watcher (restarted with it) has looked again, and
 * the members' /metrics for Prometheus's file-based service discovery (prometheus.json).
 *
 * Settings from the environment: SANDBOXD_ETCD (etcd's client URLs), SANDBOXD_FRONT_SOCKET (HAProxy's
 * admin socket) and SANDBOXD_FRONT_DIR (where members.cfg and members.map live). */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "cluster/etcd.h"
#include "cluster/follow.h"
#include "cluster/haproxy-cli.h"
#include "cluster/member-record.h"
#include "lib/env-file.h"
#include "lib/fd-util.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/socket-util.h"

#define BACKEND "work"
#define MEMBERS_MAX 256
/* What a server of "work" is checked with: its nginx every second (two failures take it out, one
 * success brings it back), and its weight and drain from the member's agent. The same in
 * members.cfg, through the front config's defaults. */
#define SERVER_CHECKS "check inter 1s fall 2 rise 1 agent-check agent-inter 1s"

typedef struct Entry {
        MemberRecord rec;
        char ip[64]; /* the address resolved, for HAProxy, which takes no name at run time */
        unsigned port;
        char agent_ip[64];
        unsigned agent_port;
        bool seen;    /* in the registry as last read */
        bool settled; /* HAProxy has it as its record says: checks on, ready or drain (not maintenance) */
} Entry;

typedef struct Front {
        const char *socket, *dir;
        Etcd *etcd;
        char map[512];
        Entry entries[MEMBERS_MAX];
        size_t n;
} Front;

/* One command: 0, or -EREMOTEIO when its output is not what success says, which is logged unless
 * quiet (a refusal the caller expects and answers). */
static int vcli(Front *f, bool quiet, const char *fmt, va_list ap) {
        cleanup_free char *command = NULL, *out = NULL;
        Error err = {};
        int r;

        r = vasprintf(&command, fmt, ap);
        if (r < 0)
                return -ENOMEM;
        r = haproxy_cli(f->socket, command, &out, &err);
        if (r < 0)
                return log_warning_errno(r, "Front: %s", error_message(&err, r));
        /* Successes say nothing, or these; anything else is HAProxy's refusal. */
        if (out[strspn(out, "\n")] != 0 && !strstr(out, "New server registered") && !strstr(out, "Server deleted") &&
            !strstr(out, "IP changed") && !strstr(out, "no need to change")) {
                out[strcspn(out, "\n")] = 0;
                if (!quiet)
                        log_warning("Front: HAProxy refused '%s': %s", command, out);
                return -EREMOTEIO;
        }
        return 0;
}

static int cli(Front *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli(Front *f, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vcli(f, false, fmt, ap);
        va_end(ap);
        return r;
}

static int cli_quiet(Front *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cli_quiet(Front *f, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vcli(f, true, fmt, ap);
        va_end(ap);
        return r;
}

/* HOST:PORT into a numeric address and a port (HAProxy's runtime API takes no name). A name is
 * resolved here, on the Follow's thread: the loop never waits for it. */
static int resolve(const char *address, char *ip, size_t size, unsigned *ret_port) {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
        SocketAddress a;
        int r;

        if (socket_address_parse(address, &a) < 0)
                return -EINVAL;
        r = getaddrinfo(a.host, NULL, &hints, &ai);
        if (r != 0)
                return -EADDRNOTAVAIL;
        r = getnameinfo(ai->ai_addr, ai->ai_addrlen, ip, (socklen_t) size, NULL, 0, NI_NUMERICHOST);
        freeaddrinfo(ai);
        if (r != 0)
                return -EADDRNOTAVAIL;
        *ret_port = a.port;
        return 0;
}

static Entry *entry_find(Front *f, const char *name) {
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->entries[i].rec.name, name) == 0)
                        return &f->entries[i];
        return NULL;
}

/* members.cfg and members.map as they are now, each written whole and renamed into place. */
static int write_file(const char *dir, const char *name, const char *text) {
        cleanup_free char *path = NULL, *tmp = NULL;
        FILE *out;

        if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.tmp", dir, name) < 0)
                return -ENOMEM;
        out = fopen(tmp, "we");
        if (!out)
                return -errno;
        if (fputs(text, out) < 0 || fflush(out) != 0 || fsync(fileno(out)) < 0) {
                (void) fclose(out);
                (void) unlink(tmp);
                return -EIO;
        }
        if (fclose(out) != 0 || rename(tmp, path) < 0) {
                (void) unlink(tmp);
                return -errno;
        }
        return 0;
}

static void files_write(Front *f) {
        cleanup_free char *cfg = NULL, *map = NULL, *sd = NULL;
        size_t cfg_len = 0, map_len = 0, sd_len = 0;
        FILE *c = open_memstream(&cfg, &cfg_len), *m = open_memstream(&map, &map_len), *p = open_memstream(&sd, &sd_len);
        int r;

        if (!c || !m || !p) {
                if (c)
                        (void) fclose(c);
                if (m)
                        (void) fclose(m);
                if (p)
                        (void) fclose(p);
                return;
        }
        /* Prometheus's file-based service discovery (file_sd_configs): each member's /metrics. */
        fprintf(p, "[");
        fprintf(c, "# Written by sandboxd-front-watch from etcd's registry of members; HAProxy reads it when it\n"
                   "# starts (the watcher changes the running HAProxy itself). Do not edit.\n"
                   "backend " BACKEND " from " BACKEND "-settings\n");
        fprintf(m, "# Written by sandboxd-front-watch: a member's name, and where its nginx is.\n");
        for (size_t i = 0; i < f->n; i++) {
                const Entry *e = &f->entries[i];

                /* Always its full weight: the agent's "ready N%" is a share of it, and its "drain" drains. */
                fprintf(c, "    server %s %s:%u weight 100 agent-addr %s agent-port %u\n", e->rec.name, e->ip, e->port, e->agent_ip,
                        e->agent_port);
                fprintf(m, "%s %s/%u\n", e->rec.name, e->ip, e->port);
                fprintf(p, "%s\n  {\"targets\": [\"%s\"], \"labels\": {\"job\": \"sandboxd\", \"member\": \"%s\"}}", i > 0 ? "," : "",
                        e->rec.address, e->rec.name);
        }
        fprintf(p, "\n]\n");
        if (fclose(c) != 0 || fclose(m) != 0 || fclose(p) != 0)
                return;
        r = write_file(f->dir, "members.cfg", cfg);
        if (r >= 0)
                r = write_file(f->dir, "members.map", map);
        if (r >= 0)
                r = write_file(f->dir, "prometheus.json", sd);
        if (r < 0)
                (void) log_warning_errno(r, "Front: cannot write the members' files in %s: a restarted HAProxy waits for the watcher", f->dir);
}

/* No new work for it; what runs on it finishes (a lease can end while its nginx is well: a restart
 * of sandboxd-member, etcd out of reach). HAProxy deletes a server only once it has no
 * connection: one that stays is in maintenance, and server_add() takes it up again. */
static void server_remove(Front *f, const char *name) {
        (void) cli(f, "set server " BACKEND "/%s state maint", name);
        (void) cli(f, "del server " BACKEND "/%s", name);
}

/* The server's checks on, and its state as its record says. */
static int server_enable(Front *f, const Entry *e) {
        /* A server added at run time starts in maintenance, its checks off. */
        (void) cli(f, "enable health " BACKEND "/%s", e->rec.name);
        (void) cli(f, "enable agent " BACKEND "/%s", e->rec.name);
        return cli(f, "set server " BACKEND "/%s state %s", e->rec.name, e->rec.draining ? "drain" : "ready");
}

static int server_add(Front *f, const Entry *e) {
        int r = cli(f, "add server " BACKEND "/%s %s:%u weight 100 " SERVER_CHECKS " agent-addr %s agent-port %u", e->rec.name, e->ip,
                    e->port, e->agent_ip, e->agent_port);

        /* One left in maintenance (its connections outlived its removal): given the new address. */
        if (r < 0 && (cli(f, "set server " BACKEND "/%s addr %s port %u", e->rec.name, e->ip, e->port) < 0 ||
                      cli(f, "set server " BACKEND "/%s agent-addr %s", e->rec.name, e->agent_ip) < 0 ||
                      cli(f, "set server " BACKEND "/%s agent-port %u", e->rec.name, e->agent_port) < 0))
                return r;
        return server_enable(f, e);
}

/* "set map" changes an entry and refuses a new one ("entry not found"), which "add map" adds. */
static void map_set(Front *f, const Entry *e) {
        if (cli_quiet(f, "set map %s %s %s/%u", f->map, e->rec.name, e->ip, e->port) < 0)
                (void) cli(f, "add map %s %s %s/%u", f->map, e->rec.name, e->ip, e->port);
}

/* A member's record, new or changed. */
/* The numeric addresses of rec: e's when rec names the same as e's record did, else resolved. A
 * member's record changes with its counts, up to five times a second under load: its addresses
 * are resolved when they change, not at each of those. */
static int entry_resolve(const Entry *e, const MemberRecord *rec, Entry *next) {
        int r;

        if (e && e->rec.address[0] && strcmp(e->rec.address, rec->address) == 0 && strcmp(e->rec.agent, rec->agent) == 0) {
                memcpy(next->ip, e->ip, sizeof(next->ip));
                memcpy(next->agent_ip, e->agent_ip, sizeof(next->agent_ip));
                next->port = e->port;
                next->agent_port = e->agent_port;
                return 0;
        }
        r = resolve(rec->address, next->ip, sizeof(next->ip), &next->port);
        if (r >= 0)
                r = resolve(rec->agent, next->agent_ip, sizeof(next->agent_ip), &next->agent_port);
        return r;
}

static int member_apply(Front *f, const MemberRecord *rec) {
        Entry *e = entry_find(f, rec->name), next = {.rec = *rec, .seen = true};
        int r;

        r = entry_resolve(e, rec, &next);
        if (r < 0) {
                log_warning("Front: member %s's address %s or %s does not resolve; leaving it out", rec->name, rec->address, rec->agent);
                return 0;
        }
        if (e && strcmp(e->ip, next.ip) == 0 && e->port == next.port && strcmp(e->agent_ip, next.agent_ip) == 0 &&
            e->agent_port == next.agent_port) {
                bool settled = e->settled && e->rec.draining == rec->draining;

                if (e->rec.draining != rec->draining)
                        log_info("Front: member %s %s", rec->name, rec->draining ? "drains" : "is ready again");
                *e = next;
                e->settled = settled || server_enable(f, e) >= 0;
                return 1;
        }
        if (e)
                server_remove(f, rec->name);
        else if (f->n == MEMBERS_MAX) {
                log_warning("Front: more than %d members; leaving %s out", MEMBERS_MAX, rec->name);
                return 0;
        } else
                e = &f->entries[f->n++];
        *e = next;
        log_info("Front: member %s at %s:%u joins%s", rec->name, next.ip, next.port, rec->draining ? ", draining" : "");
        e->settled = server_add(f, e) >= 0;
        map_set(f, e);
        return 1;
}

static void member_gone(Front *f, const char *name) {
        Entry *e = entry_find(f, name);

        if (!e)
                return;
        log_info("Front: member %s left the registry; its sessions answer 503 until it is back", name);
        server_remove(f, name);
        (void) cli(f, "del map %s %s", f->map, name);
        *e = f->entries[--f->n];
}

static int on_change(const char *key, const char *value, int64_t revision, void *userdata) {
        Front *f = userdata;
        MemberRecord rec;

        (void) revision;
        if (!value) {
                member_gone(f, key + strlen(MEMBER_PREFIX));
                files_write(f);
                return 0;
        }
        if (member_record_parse(value, &rec) < 0 || strcmp(rec.name, key + strlen(MEMBER_PREFIX)) != 0) {
                log_warning("Front: ignoring %s, which is no member's record", key);
                return 0;
        }
        if (member_apply(f, &rec) > 0)
                files_write(f);
        return 0;
}

/* What HAProxy has now (servers of "work", from members.cfg or an earlier watcher), as entries to
 * compare the registry with. */
static void haproxy_read(Front *f) {
        cleanup_free char *out = NULL;
        Error err = {};
        char *line, *save = NULL;

        f->n = 0;
        if (haproxy_cli(f->socket, "show servers state " BACKEND, &out, &err) < 0) {
                log_warning("Front: %s", error_message(&err, -EIO));
                return;
        }
        for (line = strtok_r(out, "\n", &save); line && f->n < MEMBERS_MAX; line = strtok_r(NULL, "\n", &save)) {
                HaproxyServerState st;
                Entry *e;

                if (haproxy_server_state_parse(line, &st) < 0 || !member_name_valid(st.name))
                        continue;
                e = &f->entries[f->n++];
                /* Not settled: whatever state an earlier watcher left it in (maintenance, after a
                 * removal its connections outlived), member_apply() sets the record's again. */
                *e = (Entry){.port = st.port, .agent_port = st.agent_port};
                memcpy(e->rec.name, st.name, strlen(st.name) + 1); /* member_name_valid(): it fits */
                (void) snprintf(e->ip, sizeof(e->ip), "%s", st.addr);
                (void) snprintf(e->agent_ip, sizeof(e->agent_ip), "%s", st.agent_addr);
        }
}

/* The registry read whole and HAProxy made to match it; the revision to watch from into *ret. */
static int sync_all(Front *f, Etcd *etcd, int64_t *ret) {
        EtcdKv *kvs = NULL;
        size_t n = 0;
        Error err = {};
        int r = etcd_range_prefix(etcd, MEMBER_PREFIX, &kvs, &n, ret, &err);

        if (r < 0)
                return log_warning_errno(r, "Front: cannot read the registry: %s", error_message(&err, r));
        haproxy_read(f);
        for (size_t i = 0; i < n; i++)
                (void) on_change(kvs[i].key, kvs[i].value, *ret, f);
        /* Members HAProxy has that the registry no longer lists. */
        for (size_t i = 0; i < f->n;) {
                bool listed = false;

                for (size_t k = 0; k < n; k++)
                        listed = listed || strcmp(kvs[k].key + strlen(MEMBER_PREFIX), f->entries[i].rec.name) == 0;
                if (listed) {
                        i++;
                        continue;
                }
                member_gone(f, f->entries[i].rec.name);
        }
        etcd_kvs_free(kvs, n);
        /* The map's keys of members that left while nobody watched. */
        for (size_t i = 0; i < f->n; i++)
                map_set(f, &f->entries[i]);
        files_write(f);
        log_info("Front: %zu member%s in the registry", f->n, f->n == 1 ? "" : "s");
        return 0;
}

static int front_sync(void *userdata, int64_t *ret_revision) {
        Front *f = userdata;
        int r = sync_all(f, f->etcd, ret_revision);

        if (r >= 0)
                (void) sd_notifyf(0, "STATUS=Following etcd's registry: %zu member%s", f->n, f->n == 1 ? "" : "s");
        return r;
}

static int front_watch(void *userdata, int64_t from) {
        Front *f = userdata;
        Error err = {};
        int r = etcd_watch_prefix(f->etcd, MEMBER_PREFIX, from, 0, on_change, f, &err);

        log_warning("Front: the watch ended (%s); reading the registry again", error_message(&err, r));
        return r;
}

/* etcd unreachable: HAProxy keeps routing as it was, its checks see dead members, and the next
 * round waits its backoff. A watch etcd compacted away from under: read it all again at once. */
static const FollowOps front_ops = {.sync = front_sync, .watch = front_watch};

int main(void) {
        static Front f;
        sd_event *event = NULL;
        sigset_t mask;
        int r;

        f.socket = env_get_or("SANDBOXD_FRONT_SOCKET", "/run/haproxy/sandboxd-front.sock");
        f.dir = env_get_or("SANDBOXD_FRONT_DIR", "/var/lib/sandboxd-front");
        (void) snprintf(f.map, sizeof(f.map), "%s/members.map", f.dir);
        r = etcd_new(env_get_or("SANDBOXD_ETCD", ""), &f.etcd);
        if (r < 0) {
                (void) log_error_errno(r, "Front: SANDBOXD_ETCD names no etcd (http://HOST:PORT, comma-separated)");
                return EXIT_FAILURE;
        }
        /* The loop takes SIGTERM and SIGINT (sd-event's default for a signal: leave the loop); the
         * etcd and HAProxy work is the Follow's thread's, which inherits the mask. */
        if (sigemptyset(&mask) < 0 || sigaddset(&mask, SIGTERM) < 0 || sigaddset(&mask, SIGINT) < 0 ||
            pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
                return EXIT_FAILURE;
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = follow_start(event, &front_ops, &f);
        if (r < 0) {
                (void) log_error_errno(r, "Front: cannot set up its loop");
                return EXIT_FAILURE;
        }
        /* Ready at once: HAProxy routes by what it has meanwhile, and etcd out of reach at boot must
         * not hold up the start of haproxy.service's restart, which restarts this too. */
        (void) sd_notify(0, "READY=1");
        r = sd_event_loop(event);
        /* The Follow's thread may be in a watch: the process's end takes it and the loop, without
         * the atexit handlers exit() would run under it (libcurl's, OpenSSL's). */
        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}
