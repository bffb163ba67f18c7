/* SPDX-License-Identifier: MIT */
/* sandboxd-egress-acl: Squid's external ACL helper for egress by name (squid.conf's
 * "external_acl_type sandboxd_egress"). Squid asks it about every tunnel (CONNECT) a sandbox's code
 * opens through it, before it resolves or connects anything, and again once it has peeked at the
 * tunnel's TLS client hello; the helper says OK or ERR. (Plain HTTP is the front's, HAProxy's,
 * which decides by the same rule in egress-list.lua.) It decides by name only: which addresses a
 * name resolves to is Squid's own check, after resolution (squid.conf's "inward" ACL).
 *
 * Each line Squid writes (concurrency on, so each starts with its channel):
 *
 *   CHANNEL CLIENT METHOD HOST PORT SNI HOST-HEADER [ACL-ARGUMENTS]
 *
 * CLIENT is the address the connection came from, which names the execution: the egress relay
 * connects to Squid from an address of its own for each execution, and writes that execution's
 * list (the entries of its request, which the worker checked against the host's and the key's) to
 * DIR/CLIENT before any of its connections is passed on. Absent values are "-". The answer:
 *
 *   CHANNEL OK log=NAME:PORT
 *   CHANNEL ERR message=WHY log=NAME:PORT
 *
 * A request is let through when its host is a name its execution's list covers, at its port; a
 * tunnel (CONNECT) whose TLS SNI names another host is not. (A Host header is checked too, should
 * a plain request ever come: Squid has replaced it with the URL's host before it asks.) Everything
 * else, an unknown client above all, is refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/egress.h"
#include "lib/fd-util.h"
#include "lib/macro.h"

#define LINE_MAX_BYTES 8192
#define FIELDS 7

/* An execution's list, from DIR/CLIENT: 0, -ENOENT for a client that is no execution's (or while
 * the directory is not there: the relay makes it), -EINVAL. */
static int client_list(const char *dir_path, const char *client, EgressList *ret) {
        cleanup_free char *text = NULL;
        cleanup_close int fd = -1, dir = -1;
        size_t len = 0;
        int r;

        /* An address (digits, dots, colons, hex) is a file name of that directory, never a path. */
        if (!client[0] || strspn(client, "0123456789abcdefABCDEF.:") != strlen(client))
                return -ENOENT;
        dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        fd = openat(dir, client, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = fd_read_all(fd, 64U << 10, -1, &text, &len);
        if (r < 0)
                return r;
        return egress_list_parse_text(text, len, ret, NULL);
}

/* Whether the Host header names host at port: "host" (for the scheme's default port, which Squid
 * has filled in already) or "host:port", in any case. Squid, a forward proxy, puts the URL's host in
 * the header before asking (RFC 9112, 3.2.2): this holds for what it forwards, whatever came. */
static bool host_header_matches(const char *header, const char *host, unsigned port) {
        char with_port[EGRESS_NAME_MAX + 8];

        if (strcasecmp(header, host) == 0)
                return port == 80;
        (void) snprintf(with_port, sizeof(with_port), "%s:%u", host, port);
        return strcasecmp(header, with_port) == 0;
}

/* The answer to one request's fields: its text after the channel, into buf. */
static void decide(const char *dir, char *const f[FIELDS - 1], char *buf, size_t size) {
        const char *client = f[0], *method = f[1], *host = f[2], *port_s = f[3], *sni = f[4], *host_header = f[5];
        char entry[EGRESS_ENTRY_MAX + 8];
        EgressList list = {};
        EgressRule what;
        char *end = NULL;
        unsigned long port;
        const char *why = NULL;
        int r;

        errno = 0;
        port = strtoul(port_s, &end, 10);
        if (errno != 0 || end == port_s || *end || port == 0 || port > 65535) {
                (void) snprintf(buf, size, "ERR message=no_port log=%s", host);
                return;
        }
        (void) snprintf(entry, sizeof(entry), "%s:%lu", host, port);
        if (egress_rule_parse(entry, strlen(entry), &what) < 0 || what.wildcard) {
                /* An address, or anything else that is no host name: egress is by name. */
                (void) snprintf(buf, size, "ERR message=not_a_name log=%s", entry);
                return;
        }
        r = client_list(dir, client, &list);
        if (r < 0)
                why = "unknown_client";
        else if (!egress_list_covers(&list, &what))
                why = "not_allowed";
        else if (strcmp(method, "CONNECT") == 0) {
                if (strcmp(sni, "-") != 0 && strcasecmp(sni, what.name) != 0)
                        why = "sni_mismatch";
        } else if (strcmp(host_header, "-") != 0 && !host_header_matches(host_header, what.name, (unsigned) port))
                /* Squid has put the URL's host there already: this holds for what it forwards. An
                 * HTTP/1.0 request with none gets the URL's too. */
                why = "host_mismatch";
        egress_list_done(&list);

        if (why)
                (void) snprintf(buf, size, "ERR message=%s log=%s", why, entry);
        else
                (void) snprintf(buf, size, "OK log=%s", entry);
}

int main(int argc, char *argv[]) {
        char line[LINE_MAX_BYTES], answer[LINE_MAX_BYTES];

        if (argc != 2) {
                (void) fprintf(stderr, "Usage: %s DIR (one file per client address: its allowed entries)\n", argv[0]);
                return 2;
        }
        (void) setvbuf(stdout, NULL, _IOLBF, 0);

        while (fgets(line, sizeof(line), stdin)) {
                char *f[FIELDS] = {}, *save = NULL, *p = line;
                size_t n = 0;

                line[strcspn(line, "\r\n")] = 0;
                for (char *tok; n < FIELDS && (tok = strtok_r(p, " ", &save)); p = NULL)
                        f[n++] = tok;
                if (n == 0)
                        continue;
                /* What follows is the ACL line's own arguments, which squid.conf gives none. */
                if (n != FIELDS)
                        (void) snprintf(answer, sizeof(answer), "ERR message=malformed");
                else
                        decide(argv[1], f + 1, answer, sizeof(answer));
                if (printf("%s %s\n", f[0], answer) < 0)
                        return 1;
        }
        return 0;
}
