/* SPDX-License-Identifier: MIT */
#pragma once

/* sandboxctl logs ID across a cluster's members (README, "Several hosts"): a request's journal
 * entries are on the member that ran it. sandboxctl, not finding them on its own member, asks
 * every member through etcd: it puts LOGS_ASK_PREFIX<nonce> = {"request_id": ID, "lease": L} under a
 * short lease L of its own; each member's mirror (cluster/mirror.c) sees it, and the one whose
 * journal has the request puts its entries, a JSON list of lib/journal-entry.h's objects, at
 * LOGS_ANSWER_PREFIX<nonce>/<member> under the same lease, which sandboxctl watches for. The lease
 * takes both away within seconds. Whoever may write etcd may read the requests' logs: etcd is the
 * administrators'. */

#include <stdint.h>

#define LOGS_ASK_PREFIX "/sandboxd/logs/ask/"
#define LOGS_ANSWER_PREFIX "/sandboxd/logs/answer/"
#define LOGS_REQUEST_ID_MAX 65

/* The ask as JSON into *ret (caller frees): -EINVAL for a request id that is not [0-9a-f-], -ENOMEM.
 * Pure. */
int logs_ask_format(const char *request_id, int64_t lease, char **ret);

/* An ask into request_id and *ret_lease: 0, or -EBADMSG. Pure. */
int logs_ask_parse(const char *json, char request_id[static LOGS_REQUEST_ID_MAX], int64_t *ret_lease);

/* The request's entries in this host's journal, as a JSON list (caller frees): -ENOENT when there
 * are none. */
int logs_entries(const char *request_id, char **ret);
