/* SPDX-License-Identifier: MIT */
/* What the broker accepts. Everything here is checked before root acts on it. */
#include <errno.h>
#include <string.h>

#include "lib/image-name.h"
#include "nspawn/broker/broker-proto.h"

static int terminated(const char *s, size_t size) {
        return memchr(s, 0, size) != NULL;
}

int broker_id_valid(const char *id, const char *prefix) {
        const char *rest;
        size_t n;

        if (!prefix)
                return broker_id_valid(id, "machine") || broker_id_valid(id, "tool");
        /* A cluster member's sessions carry its name too (unit-name.h). */
        if (strcmp(prefix, "session") == 0)
                return session_id_valid(id);
        n = strlen(prefix);
        if (strncmp(id, prefix, n) != 0 || id[n] != '-')
                return 0;
        rest = id + n + 1;
        if (strlen(rest) != SANDBOX_ID_RANDOM_CHARS)
                return 0;
        for (; *rest; rest++)
                if (!((*rest >= 'a' && *rest <= 'z') || (*rest >= '2' && *rest <= '7')))
                        return 0;
        return 1;
}

static int request_id_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return 0;
        return 1;
}

int broker_request_check(const BrokerRequest *req, size_t size) {
        char name[sizeof(req->image)];

        if (size != sizeof(*req) || req->magic != BROKER_MAGIC)
                return -EPROTO;
        if (!terminated(req->id, sizeof(req->id)) || !terminated(req->request_id, sizeof(req->request_id)) ||
            !terminated(req->image, sizeof(req->image)))
                return -EINVAL;

        switch (req->op) {
        case BROKER_START_WARM:
                return broker_id_valid(req->id, "machine") ? 0 : -EINVAL;
        case BROKER_RUN_TOOL:
                if (!broker_id_valid(req->id, "tool") || !request_id_valid(req->request_id) ||
                    req->timeout_s == 0 || req->timeout_s > BROKER_TOOL_TIMEOUT_MAX_S)
                        return -EINVAL;
                /* The canonical name only: no path, no tag, nothing to resolve. */
                if (image_name_from_ref(req->image, name, sizeof(name)) < 0 || strcmp(name, req->image) != 0)
                        return -EINVAL;
                return 0;
        case BROKER_KILL:
        case BROKER_RESET_FAILED:
                return broker_id_valid(req->id, NULL) ? 0 : -EINVAL;
        case BROKER_LIST:
        case BROKER_SESSION_LIST:
                return req->id[0] == 0 ? 0 : -EINVAL;
        case BROKER_SESSION_START:
        case BROKER_SESSION_STOP:
        case BROKER_SESSION_DELETE:
        case BROKER_SESSION_CREATE:
                return broker_id_valid(req->id, "session") ? 0 : -EINVAL;
        default:
                return -EINVAL;
        }
}

ErrorCount broker_failure_count(BrokerOp op, int r) {
        /* Every operation its own counter: a zero left in this table would count as an sqlite error. */
        static const ErrorCount which[_BROKER_OP_MAX] = {
                [0] = _ERROR_COUNT_NONE,
                [BROKER_START_WARM] = ERROR_COUNT_BROKER_START,
                [BROKER_RUN_TOOL] = ERROR_COUNT_BROKER_RUN_TOOL,
                [BROKER_KILL] = ERROR_COUNT_BROKER_KILL,
                [BROKER_RESET_FAILED] = ERROR_COUNT_BROKER_RESET_FAILED,
                [BROKER_LIST] = ERROR_COUNT_BROKER_LIST,
                [BROKER_SESSION_START] = ERROR_COUNT_BROKER_SESSION_START,
                [BROKER_SESSION_STOP] = ERROR_COUNT_BROKER_SESSION_STOP,
                [BROKER_SESSION_DELETE] = ERROR_COUNT_BROKER_SESSION_DELETE,
                [BROKER_SESSION_CREATE] = ERROR_COUNT_BROKER_SESSION_CREATE,
                [BROKER_SESSION_LIST] = ERROR_COUNT_BROKER_LIST,
        };

        if (r >= 0 || op <= 0 || op >= _BROKER_OP_MAX)
                return _ERROR_COUNT_NONE;
        /* What was asked holds: the unit or the session's machine is gone already. */
        if ((op == BROKER_KILL || op == BROKER_RESET_FAILED || op == BROKER_SESSION_STOP || op == BROKER_SESSION_DELETE) && r == -ENOENT)
                return _ERROR_COUNT_NONE;
        /* The request was wrong, not the broker: no such image, or one without python3. */
        if (op == BROKER_RUN_TOOL && (r == -ENOENT || r == -ENOEXEC))
                return _ERROR_COUNT_NONE;
        return which[op];
}

uint64_t broker_op_timeout_usec(BrokerOp op, unsigned timeout_s) {
        const uint64_t sec = 1000000ULL;

        switch (op) {
        case BROKER_KILL:
        case BROKER_RESET_FAILED:
                return 5 * sec;
        case BROKER_LIST:
        case BROKER_SESSION_LIST:
                return 10 * sec;
        case BROKER_START_WARM:
                return 30 * sec;
        /* A new disk formatted (60 s at most), a machine started or stopped and its disk unmounted. */
        case BROKER_SESSION_START:
        case BROKER_SESSION_CREATE:
        case BROKER_SESSION_STOP:
        case BROKER_SESSION_DELETE:
                return 90 * sec;
        /* The tool sandbox's own limits (ready, then the call's timeout, and the broker's 10 s over
         * them), the 17 s its stop and the broker's following may take on top, and a margin. */
        case BROKER_RUN_TOOL:
                return ((uint64_t) BROKER_TOOL_READY_MAX_S + (timeout_s ? timeout_s : BROKER_TOOL_TIMEOUT_MAX_S) + 10 + 17 + 30) * sec;
        default:
                return 5 * sec;
        }
}
