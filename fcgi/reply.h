/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Request Request;
struct json_object;

/* Sends status and a JSON body (borrowed), and remembers the status for the request's record. */
int reply_json(Request *req, int status, struct json_object *body);

/* Sends {"error": "<message>"} with the given status; the message is remembered for the record.
 * Messages come from messages.h. */
int reply_error(Request *req, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

