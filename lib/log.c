/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "lib/log.h"

/* Per thread: each of a worker's threads serves one request. */
static _Thread_local char log_request_id[64];
static _Thread_local char log_route[64];

void log_set_request(const char *request_id, const char *route) {
        (void) snprintf(log_request_id, sizeof(log_request_id), "%s", request_id ? request_id : "");
        (void) snprintf(log_route, sizeof(log_route), "%s", route ? route : "");
}

int log_internal(int level, int error, const char *file, const char *line, const char *func, const char *fmt, ...) {
        char message[2048], prio[32], rid[96], route[96], err[32];
        struct iovec iov[8];
        size_t n = 0;
        va_list ap;

        error = abs(error);
        va_start(ap, fmt);
        (void) vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);

#define IOV(s) (iov[n++] = (struct iovec){.iov_base = (void *) (s), .iov_len = strlen(s)})
        {
                char *m = NULL;

                if (asprintf(&m, "MESSAGE=%s", message) < 0)
                        return -error;
                IOV(m);
                (void) snprintf(prio, sizeof(prio), "PRIORITY=%i", level);
                IOV(prio);
                IOV("SYSLOG_IDENTIFIER=sandboxd");
                if (log_request_id[0]) {
                        (void) snprintf(rid, sizeof(rid), "REQUEST_ID=%s", log_request_id);
                        IOV(rid);
                        (void) snprintf(route, sizeof(route), "ROUTE=%s", log_route);
                        IOV(route);
                }
                if (error > 0) {
                        (void) snprintf(err, sizeof(err), "ERRNO=%i", error);
                        IOV(err);
                }
                (void) sd_journal_sendv_with_location(file, line, func, iov, (int) n);
                free(m);
        }
#undef IOV
        return -error;
}

void log_pool_event(int level, const char *event, const char *machine_id, const char *fmt, ...) {
        char message[1024];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);

        (void) sd_journal_send("MESSAGE=%s", message,
                               "MESSAGE_ID=" LOG_POOL_MESSAGE_ID,
                               "PRIORITY=%i", level,
                               "SYSLOG_IDENTIFIER=sandboxd",
                               "POOL_EVENT=%s", event,
                               "MACHINE_ID=%s", machine_id ? machine_id : "",
                               "REQUEST_ID=%s", log_request_id,
                               NULL);
}

void log_session_event(const char *event, const char *session_id, const char *request_id, const char *detail) {
        (void) sd_journal_send("MESSAGE=session %s: %s%s%s", session_id, event, detail ? ": " : "", detail ? detail : "",
                               "MESSAGE_ID=" LOG_SESSION_MESSAGE_ID,
                               "PRIORITY=%i", LOG_INFO,
                               "SYSLOG_IDENTIFIER=sandboxd",
                               "SESSION_EVENT=%s", event,
                               "SESSION_ID=%s", session_id,
                               "REQUEST_ID=%s", request_id ? request_id : log_request_id,
                               "DETAIL=%s", detail ? detail : "",
                               NULL);
}
