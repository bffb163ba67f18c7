/* SPDX-License-Identifier: MIT */
#pragma once

/* A runner's answer to a streamed request (the worker asked with "stream": true): the output as the
 * code writes it, then the reply, each a frame: its type byte, its length in decimal, "\n", then
 * that many bytes. An answer that begins with "{" is a reply with no frames at all (a request the
 * runner refused before it knew it was streamed). Pure: both ends and the unit tests use it. */

#include <stddef.h>

#define STREAM_FRAME_STDOUT 'o'
#define STREAM_FRAME_STDERR 'e'
#define STREAM_FRAME_REPLY 'r'
/* The longest header: a type byte, 20 digits and the newline, and a NUL. */
#define STREAM_FRAME_HEADER_MAX 24

/* The header of a frame of len bytes into buf: its length. */
size_t stream_frame_header(char type, size_t len, char buf[static STREAM_FRAME_HEADER_MAX]);

/* The frame at the start of buf (len bytes so far): its type, where its data starts and how long
 * it is, and the bytes it takes in all (> 0); 0 while it is not all there yet; -EBADMSG for bytes
 * that are no frame (an unknown type, a length that is not decimal or is over max_data). */
int stream_frame_next(const char *buf, size_t len, size_t max_data, char *ret_type, size_t *ret_data_off, size_t *ret_data_len,
                      size_t *ret_total);
