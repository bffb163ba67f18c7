/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Request Request;
typedef struct Context Context;
struct json_object;

/* Whether the code of a request that asks for network (allow: its "network"."allow", entries
 * checked by validate_network_field()) may reach each name it lists: within the operator's
 * egress.allow and its API key's own list (README, "Network: egress by name"). 1 when it may; 0
 * when answered: 400 naming the first entry that may not, 503 when the operator's file cannot be
 * read; -errno when the answer could not be sent. */
int egress_request_allowed(Request *req, Context *ctx, struct json_object *allow);

/* What a request that asks for network meets before anything is claimed: egress_request_allowed(),
 * then a proxy to carry its code's traffic. None runs on this host yet, so a request allowed is
 * answered 503: its code is never run with less than it asked for. 1 when it may go on; 0 when
 * answered; -errno when the answer could not be sent. */
int egress_request_admit(Request *req, Context *ctx, struct json_object *allow);
