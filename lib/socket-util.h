/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest host part socket_address_parse() takes: a DNS name's. */
#define SOCKET_HOST_MAX 253

/* HOST:PORT taken apart: the host as written, without the brackets of an IPv6 literal. */
typedef struct SocketAddress {
        char host[SOCKET_HOST_MAX + 1];
        uint16_t port;
        bool bracketed; /* written [IPV6]:PORT */
} SocketAddress;

/* A TCP port in decimal, 1 to 65535, digits only (no sign, blank or leading zero) into *ret: 0 or
 * -EINVAL. Pure. */
int socket_port_parse(const char *s, uint16_t *ret);

/* "HOST:PORT" or "[IPV6]:PORT" into *ret: 0, or -EINVAL for a missing or invalid port, an empty or
 * overlong host, an IPv6 literal without brackets, or brackets around anything but the whole host.
 * The host is not resolved nor checked further (a name or an address: the caller's to say). Pure. */
int socket_address_parse(const char *s, SocketAddress *ret);

/* Whether the peer of the AF_UNIX socket fd runs as uid or as root (SO_PEERCRED); false when the
 * kernel cannot say. */
bool socket_peer_allowed(int fd, uid_t uid);
