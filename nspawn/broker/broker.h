/* SPDX-License-Identifier: MIT */
#pragma once

/* The broker: the only sandboxd process that keeps root, and the only one that talks to systemd.
 * It starts, kills, lists and collects sandboxd's own units, built from its own configuration, for
 * the unprivileged workers and pool manager. It parses no HTTP input: it takes fixed-layout requests
 * (broker-proto.h) from peers running as the workers' user, and refuses everyone else. */

#include <stddef.h>
#include <sys/types.h>

#include "nspawn/broker/broker-proto.h"

typedef struct Config Config;
typedef struct SandboxResult SandboxResult;

/* Serves listen_fd (a SOCK_SEQPACKET socket) until SIGTERM. Peers must run as uid or as root. */
int broker_main(const Config *config, int listen_fd, uid_t uid);

/* The client side. *conn is a connection made on first use and remade once if the broker went away;
 * the caller closes it. Each returns 0 or a negative errno; why (if given) gets the broker's reason. */
int broker_start_warm(int *conn, const char *id, int listen_fd, char *why, size_t why_size);
int broker_kill(int *conn, const char *id);
int broker_reset_failed(int *conn, const char *id);
/* sandboxd's own units, into *ret (a large struct: keep it off small stacks). */
int broker_list(int *conn, BrokerReply *ret);

/* Runs a tool sandbox from image on input, on a connection of its own, and waits for its end. On
 * success *ret is filled as sandbox_run() fills it, and is the caller's. */
int broker_run_tool(const char *id, const char *request_id, const char *image, unsigned timeout_s,
                    const char *input, size_t input_len, SandboxResult *ret, char *why, size_t why_size);
