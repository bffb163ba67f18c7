/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/socket-util.h"

int socket_port_parse(const char *s, uint16_t *ret) {
        unsigned long v = 0;

        /* By hand rather than strtoul(), which takes blanks, a sign and "0x". */
        if (s[0] < '1' || s[0] > '9')
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*p - '0');
                if (v > 65535)
                        return -EINVAL;
        }
        *ret = (uint16_t) v;
        return 0;
}

int socket_address_parse(const char *s, SocketAddress *ret) {
        const char *colon = strrchr(s, ':'), *host = s;
        size_t len;
        bool bracketed = s[0] == '[';
        uint16_t port;

        if (!colon || socket_port_parse(colon + 1, &port) < 0)
                return -EINVAL;
        len = (size_t) (colon - s);
        if (bracketed) {
                /* "[" HOST "]" ":" PORT: the bracket closes just before the port's colon. */
                if (len < 3 || s[len - 1] != ']')
                        return -EINVAL;
                host = s + 1;
                len -= 2;
        }
        /* An empty host, one of brackets in the wrong place, or an IPv6 literal left bare, whose
         * last group would pass for the port. */
        if (len == 0 || len > SOCKET_HOST_MAX || memchr(host, '[', len) || memchr(host, ']', len) ||
            (!bracketed && memchr(host, ':', len)) || (bracketed && !memchr(host, ':', len)))
                return -EINVAL;
        *ret = (SocketAddress){.port = port, .bracketed = bracketed};
        memcpy(ret->host, host, len);
        ret->host[len] = 0;
        return 0;
}

bool socket_peer_allowed(int fd, uid_t uid) {
        struct ucred cred;
        socklen_t len = sizeof(cred);

        return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) >= 0 && (cred.uid == uid || cred.uid == 0);
}
