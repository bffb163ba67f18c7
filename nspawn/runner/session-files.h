/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's file operations on its disk, the machine's /workspace: put, get, list and delete
 * (runner-session.c). */

#include <stddef.h>

struct json_object;
typedef struct Error Error;

/* Answers file request req (its "op" one of "put", "get", "list", "delete"; content: the bytes after
 * the JSON object, for "put") into reply, with the caller's file-system identity, beneath the
 * directory ws: a symlink in it cannot lead out. A "get" also gives the file's bytes, in *ret_body
 * (the caller's to free) and *ret_body_len. 0, or a negative errno with reterr's status (400, 404,
 * 507, or 0 when the runner failed, not the request) and words set. */
int session_files(int ws, const char *op, struct json_object *req, const void *content, size_t len, struct json_object *reply,
                  char **ret_body, size_t *ret_body_len, Error *reterr);
