/* SPDX-License-Identifier: MIT */
#pragma once

#include <syslog.h>

#define LOG_STRINGIFY_(x) #x
#define LOG_STRINGIFY(x) LOG_STRINGIFY_(x)

/* The only way sandboxd writes to the journal. Every entry carries SYSLOG_IDENTIFIER=sandboxd and,
 * while a request is handled, its REQUEST_ID and ROUTE. Returns -abs(error). */
int log_internal(int level, int error, const char *file, const char *line, const char *func, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));

#define log_full_errno(level, error, ...) \
        log_internal(level, error, "CODE_FILE=" __FILE__, "CODE_LINE=" LOG_STRINGIFY(__LINE__), __func__, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)

/* Without an errno: no ERRNO= field, and nothing to return. */
#define log_full(level, ...) ((void) log_full_errno(level, 0, __VA_ARGS__))
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/* The request being handled by the calling thread (copied into a thread-local); NULL clears it. A
 * worker serves each request on a thread of its own (fcgi/worker.c), many at once. */
void log_set_request(const char *request_id, const char *route);

/* A pool event (created, ready, claimed, destroyed, failed) with POOL_EVENT and SANDBOX_ID fields,
 * MESSAGE_ID=LOG_POOL_MESSAGE_ID. */
#define LOG_POOL_MESSAGE_ID "3a7e9c1b5d2f4e8a9b6c0d1e2f3a4b5c"

void log_pool_event(int level, const char *event, const char *machine_id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A session event (create, run, exec, upload, download, list, remove, pause, resume, expire, delete,
 * reset) with SESSION_EVENT, SESSION_ID and REQUEST_ID (the request being handled when NULL),
 * MESSAGE_ID=LOG_SESSION_MESSAGE_ID. */
#define LOG_SESSION_MESSAGE_ID "5b8d2e4f6a1c4d3e8f7a9b0c1d2e3f4a"

void log_session_event(const char *event, const char *session_id, const char *request_id, const char *detail);
