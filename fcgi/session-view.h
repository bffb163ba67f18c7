/* SPDX-License-Identifier: MIT */
#pragma once

/* A session as the API shows it (docs/sessions.md): its object, who may see it, and the list of
 * them, with, on a cluster's member, the other members' (cluster/session-record.h). */

#include <stdbool.h>

#include "db/sessions.h"
#include "fcgi/request.h"
#include "fcgi/route.h"

typedef struct sqlite3 sqlite3;
struct json_object;

/* The session object: the whole one (with db, its network too), or (brief) the part reference 002
 * puts in a run's response. NULL on out of memory. */
struct json_object *session_json(const Session *s, bool brief, sqlite3 *db);

/* With API keys on, a session is its maker's: any other key (and one made while keys were off, by
 * none) sees no such session, exactly as if it did not exist. */
bool session_visible(const Request *req, const Context *ctx, const Session *s);

/* GET /v1/sessions: the sessions the request's key may see. Answered; -ENOMEM. */
int session_list(Request *req, Context *ctx);
