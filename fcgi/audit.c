/* SPDX-License-Identifier: MIT */
/* One structured journal entry per request: what `journalctl REQUEST_ID=<X-Request-Id>` shows. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "fcgi/audit.h"
#include "fcgi/request.h"
#include "lib/time-util.h"

/* The fields of an entry, at most. */
#define AUDIT_FIELDS_MAX 28

/* One field more of the entry, "NAME=value" formatted into fields[*n] (the caller frees them); a
 * field that cannot be made (no memory) is left out. */
static void field(struct iovec *iov, char **fields, size_t *n, const char *fmt, ...) {
        va_list ap;
        char *f = NULL;
        int len;

        if (*n >= AUDIT_FIELDS_MAX)
                return;
        va_start(ap, fmt);
        len = vasprintf(&f, fmt, ap);
        va_end(ap);
        if (len < 0)
                return;
        fields[*n] = f;
        iov[*n] = (struct iovec){.iov_base = f, .iov_len = (size_t) len};
        (*n)++;
}

void audit_request(const Request *req) {
        char exit_code[32] = "", cpu_ms[32] = "", memory_peak[32] = "";
        int64_t duration_ms = req->duration_ms;
        struct iovec iov[AUDIT_FIELDS_MAX];
        char *fields[AUDIT_FIELDS_MAX];
        size_t n = 0;

        if (req->has_exit_code)
                (void) snprintf(exit_code, sizeof(exit_code), "%i", req->exit_code);
        /* Empty when not counted: no figure rather than a zero that reads as one. */
        if (req->cpu_ms >= 0)
                (void) snprintf(cpu_ms, sizeof(cpu_ms), "%lld", (long long) req->cpu_ms);
        if (req->memory_peak_bytes >= 0)
                (void) snprintf(memory_peak, sizeof(memory_peak), "%lld", (long long) req->memory_peak_bytes);
        if (duration_ms < 0)
                duration_ms = (int64_t) ((now_usec(CLOCK_MONOTONIC) - req->start_usec) / 1000);

        field(iov, fields, &n, "MESSAGE=%s %s: %i%s%s", req->route, req->id, req->status, req->error ? " " : "", req->error ? req->error : "");
        field(iov, fields, &n, "MESSAGE_ID=" AUDIT_MESSAGE_ID);
        field(iov, fields, &n, "PRIORITY=%i", req->status >= 500 ? LOG_WARNING : LOG_INFO);
        field(iov, fields, &n, "SYSLOG_IDENTIFIER=sandboxd");
        field(iov, fields, &n, "REQUEST_ID=%s", req->id);
        field(iov, fields, &n, "ROUTE=%s", req->route);
        field(iov, fields, &n, "SANDBOX_ID=%s", req->sandbox_id);
        field(iov, fields, &n, "MACHINE_ID=%s", req->machine_id);
        field(iov, fields, &n, "SESSION_ID=%s", req->session_id);
        field(iov, fields, &n, "API_KEY=%s", req->key_name);
        field(iov, fields, &n, "STATUS=%i", req->status);
        field(iov, fields, &n, "EXIT_CODE=%s", exit_code);
        field(iov, fields, &n, "DURATION_MS=%lld", (long long) duration_ms);
        field(iov, fields, &n, "CPU_MS=%s", cpu_ms);
        if (req->claim_usec > 0)
                field(iov, fields, &n, "CLAIM_USEC=%llu", (unsigned long long) req->claim_usec);
        if (req->exchange_usec > 0)
                field(iov, fields, &n, "EXCHANGE_USEC=%llu", (unsigned long long) req->exchange_usec);
        field(iov, fields, &n, "MEMORY_PEAK_BYTES=%s", memory_peak);
        field(iov, fields, &n, "ERROR=%s", req->error ? req->error : "");
        field(iov, fields, &n, "MCP_METHOD=%s", req->mcp_method);
        field(iov, fields, &n, "MCP_TOOL=%s", req->mcp_tool);
        /* Only a request that asked for network has these: an entry without them had none. */
        if (req->network_rx_bytes >= 0) {
                field(iov, fields, &n, "NETWORK_RX_BYTES=%lld", (long long) req->network_rx_bytes);
                field(iov, fields, &n, "NETWORK_TX_BYTES=%lld", (long long) req->network_tx_bytes);
                field(iov, fields, &n, "NETWORK_HOSTS=%s", req->network_hosts ? req->network_hosts : "");
                field(iov, fields, &n, "NETWORK_REFUSED=%s", req->network_refused ? req->network_refused : "");
        }
        (void) sd_journal_sendv(iov, (int) n);
        for (size_t i = 0; i < n; i++)
                free(fields[i]);
}
