/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's file operations on its disk, the machine's /workspace: put, get, list and delete
 * (runner-session.c). */

#include <stddef.h>
#include <stdint.h>

struct json_object;
typedef struct Error Error;

/* Answers file request req (its "op" one of "put", "get", "list", "delete"; content: the bytes after
 * the JSON object, for "put") into reply, with the caller's file-system identity, beneath the
 * directory ws: a symlink in it cannot lead out. A "get" also opens the file, into *ret_fd (the
 * caller's), and its size at the open into *ret_size (the reply's "size"): those bytes are for
 * session_file_send();
 * one over the request's "max_bytes" is refused (413) unread. 0, or a negative errno with reterr's
 * status (400, 404, 413, 507, or 0 when the runner failed, not the request) and words set. */
int session_files(int ws, const char *op, struct json_object *req, const void *content, size_t len, struct json_object *reply,
                  int *ret_fd, uint64_t *ret_size, Error *reterr);

/* The first size bytes of the file fd to the connection conn, kernel to kernel (sendfile()), in
 * bounded pieces: 0; -ENODATA when the file ends first (the code shortened it), -ETIMEDOUT when the
 * worker takes nothing for two minutes, or the errno of the send (-EPIPE: the worker went). */
int session_file_send(int conn, int fd, uint64_t size);
