/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's file routes (route-sessions.c dispatches them) and a new session's files. */

typedef struct Request Request;
typedef struct Context Context;
typedef struct SessionRoute SessionRoute;
typedef struct Error Error;
struct json_object;

/* GET (streamed; over SANDBOXD_SESSION_UPLOAD_BYTES: 413, unread), PUT or DELETE of
 * /v1/sessions/{id}/files/{path}, for a session the caller found and may see. Answered; -ENOMEM. */
int route_session_file(Request *req, Context *ctx, const SessionRoute *route);

/* GET /v1/sessions/{id}/files?dir=PATH: one level of a directory. Answered; -ENOMEM. */
int route_session_files(Request *req, Context *ctx, const SessionRoute *route);

/* One entry of a new session's "files" (validated already, so only an allocation or the machine
 * can fail), written into its running machine: 0, or -errno with *err saying why (-EIO: the runner
 * refused it). */
int session_put_file(const char *id, struct json_object *e, Error *err);
