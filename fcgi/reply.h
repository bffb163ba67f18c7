/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

typedef struct Request Request;
typedef struct ReplyCapture ReplyCapture;
struct json_object;

/* Sends status and a JSON body (borrowed), and remembers the status for the request's record. */
/* "usage": {"cpu_ms", "memory_peak_bytes"} of the request (null for what was not counted) into
 * out. -ENOMEM. */
int reply_add_usage(const Request *req, struct json_object *out);

int reply_json(Request *req, int status, struct json_object *body);

/* Sends status and a body of len bytes (borrowed) of the given content type, and remembers the
 * status for the request's record. */
int reply_text(Request *req, int status, const char *content_type, const char *text, size_t len);

/* Sends the status and headers only, and remembers the status: content_type (NULL: none) and extra
 * (whole "Name: value\r\n" lines, or NULL). The body, if any, is the caller's to write (a stream). */
int reply_head(Request *req, int status, const char *content_type, const char *extra);

/* Sends {"error": "<message>"} with the given status; the message is remembered for the record.
 * Messages come from messages.h. */
/* Sends status and len raw bytes of content_type (a file's content). */
int reply_bytes(Request *req, int status, const char *content_type, const void *data, size_t len);

/* A body of len bytes written in pieces as they come (a file streamed): reply_body_begin() sends
 * the status and the headers, Content-Length len, and remembers the status; reply_body_write()
 * sends the next n bytes. With req->capture, the pieces are kept there instead, in one buffer of
 * len bytes allocated at the beginning (-ENOMEM; -EFBIG past len). -EIO once nginx's connection
 * fails (the client went). */
int reply_body_begin(Request *req, int status, const char *content_type, size_t len);
int reply_body_write(Request *req, const void *data, size_t n);

int reply_error(Request *req, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The 400 of a body validate_parse_body() refused with r: one that holds more values than
 * lib/json-limits.h allows says so, anything else is the contract's "invalid JSON body". */
int reply_body_refused(Request *req, int r);

/* The client went before its answer (nginx closed the connection): nothing is sent, the request is
 * recorded with status 499 and why. -ENOMEM. */
int reply_abandoned(Request *req);

/* With req->capture set, reply_json(), reply_error(), reply_text() and reply_bytes() send nothing:
 * they keep the status and the body (a reference) or a copy of the bytes (NUL-terminated) there,
 * replacing what an earlier answer kept. Releases what a capture holds; it is then empty. */
void reply_capture_done(ReplyCapture *c);
