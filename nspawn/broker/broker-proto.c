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
