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
