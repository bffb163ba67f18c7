/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Request Request;
typedef struct Context Context;
typedef struct EgressLink EgressLink;
struct json_object;

/* Whether the code of a request that asks for network (allow: its "network"."allow", entries
 * checked by validate_network_field()) may reach each name it lists: within the operator's
 * egress.allow and its API key's own list (README, "Network: egress by name"). 1 when it may; 0
 * when answered: 400 naming the first entry that may not, 503 when the operator's file cannot be
 * read; -errno when the answer could not be sent. */
int egress_request_allowed(Request *req, Context *ctx, struct json_object *allow);

/* What a request that asks for network meets before anything is claimed: egress_request_allowed(),
 * then the egress relay, which will carry its code's traffic, linked in *ret: its code never runs
 * with less than it asked for. 1 when it may go on (*ret the caller's); 0 when answered (503 when
 * no relay runs here); -errno when the answer could not be sent. */
int egress_request_admit(Request *req, Context *ctx, struct json_object *allow, EgressLink *ret);

/* The code of req ran: the relay told so (egress_link_end()), and its report is req's, for its
 * usage, its record and its journal entry. */
void egress_request_ended(Request *req, EgressLink *l);
