/* SPDX-License-Identifier: MIT */
/* One structured journal entry per request: what `journalctl REQUEST_ID=<X-Request-Id>` shows. */
#include <stdint.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "fcgi/audit.h"
#include "fcgi/request.h"
#include "lib/time-util.h"

void audit_request(const Request *req) {
        char exit_code[32] = "", cpu_ms[32] = "", memory_peak[32] = "", rx[32] = "", tx[32] = "";
        int64_t duration_ms = req->duration_ms;

        if (req->has_exit_code)
                (void) snprintf(exit_code, sizeof(exit_code), "%i", req->exit_code);
        /* Empty when not counted: no figure rather than a zero that reads as one. */
        if (req->cpu_ms >= 0)
                (void) snprintf(cpu_ms, sizeof(cpu_ms), "%lld", (long long) req->cpu_ms);
        if (req->memory_peak_bytes >= 0)
                (void) snprintf(memory_peak, sizeof(memory_peak), "%lld", (long long) req->memory_peak_bytes);
        /* Only for a request that asked for network. */
        if (req->network_rx_bytes >= 0) {
                (void) snprintf(rx, sizeof(rx), "%lld", (long long) req->network_rx_bytes);
                (void) snprintf(tx, sizeof(tx), "%lld", (long long) req->network_tx_bytes);
        }
        if (duration_ms < 0)
                duration_ms = (int64_t) ((now_usec(CLOCK_MONOTONIC) - req->start_usec) / 1000);

        (void) sd_journal_send("MESSAGE=%s %s: %i%s%s", req->route, req->id, req->status,
                               req->error ? " " : "", req->error ? req->error : "",
                               "MESSAGE_ID=" AUDIT_MESSAGE_ID,
                               "PRIORITY=%i", req->status >= 500 ? LOG_WARNING : LOG_INFO,
                               "SYSLOG_IDENTIFIER=sandboxd",
                               "REQUEST_ID=%s", req->id,
                               "ROUTE=%s", req->route,
                               "SANDBOX_ID=%s", req->sandbox_id,
                               "MACHINE_ID=%s", req->machine_id,
                               "SESSION_ID=%s", req->session_id,
                               "API_KEY=%s", req->key_name,
                               "STATUS=%i", req->status,
                               "EXIT_CODE=%s", exit_code,
                               "DURATION_MS=%lld", (long long) duration_ms,
                               "CPU_MS=%s", cpu_ms,
                               "MEMORY_PEAK_BYTES=%s", memory_peak,
                               "ERROR=%s", req->error ? req->error : "",
                               "MCP_METHOD=%s", req->mcp_method,
                               "MCP_TOOL=%s", req->mcp_tool,
                               "NETWORK_RX_BYTES=%s", rx,
                               "NETWORK_TX_BYTES=%s", tx,
                               "NETWORK_HOSTS=%s", req->network_hosts ? req->network_hosts : "",
                               "NETWORK_REFUSED=%s", req->network_refused ? req->network_refused : "",
                               NULL);
}
