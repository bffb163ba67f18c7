/* SPDX-License-Identifier: MIT */
#pragma once

/* A response as a server-sent event stream (text/event-stream), for a client that asked for one
 * with its Accept header: the code's output as it is written, "stdout" and "stderr" events, a
 * comment while nothing comes so that no proxy takes the stream for dead, and last a "result" event
 * whose data is the body the same request answers unstreamed. Errors found before the code starts
 * (a bad body, a key, a quota, no sandbox) are answered as any response is, with their status. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fcgi/request.h"

typedef struct EventStream {
        Request *req;
        OutputListener listener;
        /* Each stream's last bytes that end in a cut UTF-8 sequence, held for the next chunk. */
        uint8_t carry[2][4];
        size_t carry_len[2];
        bool begun; /* the headers are sent: the answer's body is the "result" event */
        bool gone;  /* the client could not be written to */
        /* A gone client's run goes on (a session's): its answer, kept for its record, as JSON. */
        bool keep_result;
        char *result;
} EventStream;

/* Whether req asked for a stream: its Accept header names text/event-stream. A request made within
 * the worker (an MCP tool call, whose answer is captured) never is. */
bool event_stream_wanted(const Request *req);

/* A stream for req, made its output listener and its to free (request_done()); nothing is sent
 * before event_stream_begin(). NULL if out of memory. */
EventStream *event_stream_new(Request *req);

/* The status and headers: from here on, req's answer is the stream's "result" event (reply.c). */
int event_stream_begin(EventStream *es);

/* The "result" event with body's text (len bytes), after what is left of the output. */
int event_stream_result(EventStream *es, const char *body, size_t len);

void event_stream_free(EventStream *es);

/* A client that stops reading a stream must not hold the worker's thread, its machine or its
 * session's turn past its deadline: a write to nginx that waits longer than this fails, and the
 * client counts as gone. nginx's own send_timeout is as long. */
#define EVENT_STREAM_SEND_TIMEOUT_S 60

/* Bounds the writes on a stream's connection to nginx (fd) to EVENT_STREAM_SEND_TIMEOUT_S each. */
void event_stream_bound_writes(int fd);

/* The data of a chunk's event: {"data": text, "base64": false} for UTF-8, base64 with true for
 * anything else. NULL if out of memory; the caller's to free. Pure. */
char *event_stream_chunk_json(const uint8_t *data, size_t len);
