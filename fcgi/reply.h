/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

typedef struct Request Request;
struct json_object;

/* Sends status and a JSON body (borrowed), and remembers the status for the request's record. */
/* "usage": {"cpu_ms", "memory_peak_bytes"} of the request (null for what was not counted) into
 * out. -ENOMEM. */
int reply_add_usage(const Request *req, struct json_object *out);

int reply_json(Request *req, int status, struct json_object *body);

/* Sends status and a body of len bytes (borrowed) of the given content type, and remembers the
 * status for the request's record. */
int reply_text(Request *req, int status, const char *content_type, const char *text, size_t len);

/* Sends {"error": "<message>"} with the given status; the message is remembered for the record.
 * Messages come from messages.h. */
/* Sends status and len raw bytes of content_type (a file's content). */
int reply_bytes(Request *req, int status, const char *content_type, const void *data, size_t len);

int reply_error(Request *req, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The client went before its answer (nginx closed the connection): nothing is sent, the request is
 * recorded with status 499 and why. -ENOMEM. */
int reply_abandoned(Request *req);
