/* SPDX-License-Identifier: MIT */
/* What the broker (root) accepts from the unprivileged processes: only well-formed requests about
 * sandboxd's own units. */
#include <errno.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/broker/broker-proto.h"
#include "tests/unit/tap.h"

typedef struct IdCase {
        const char *id;
        const char *prefix; /* NULL: either kind */
        int valid;
} IdCase;

static const IdCase id_cases[] = {
        {"machine-abcdefghijkl", "machine", 1},
        {"machine-234567234567", "machine", 1},
        {"tool-abcdefghijkl", "tool", 1},
        {"machine-abcdefghijkl", NULL, 1},
        {"tool-aaaaaaaaaaaa", NULL, 1},
        {"tool-abcdefghijkl", "machine", 0},
        {"machine-abcdefghijkl", "tool", 0},
        {"sandbox-api", NULL, 0},           /* the service itself */
        {"machine-abcdefghijk", NULL, 0},   /* 11 */
        {"machine-abcdefghijklm", NULL, 0}, /* 13 */
        {"machine-abcdefghijk1", NULL, 0},  /* not base32 */
        {"machine-abcdefghijk8", NULL, 0},
        {"machine-Abcdefghijkl", NULL, 0},
        {"machine-abcdefghijk-", NULL, 0},
        {"machine_abcdefghijkl", NULL, 0},
        {"machineabcdefghijkl", NULL, 0},
        {"xmachine-abcdefghijkl", NULL, 0},
        {"machine--abcdefghijk", NULL, 0},
        {"machine-abcdefghijkl.service", NULL, 0},
        {"dbus-abcdefghijkl", NULL, 0},
        {"", NULL, 0},
        {"-abcdefghijkl", NULL, 0},
        /* A cluster member's sessions carry its name; machines and tools never do. */
        {"session-abcdefghijkl", "session", 1},
        {"session-m1-abcdefghijkl", "session", 1},
        {"session-m1-abcdefghijkl", NULL, 0},
        {"machine-m1-abcdefghijkl", "machine", 0},
        {"session-m-1-abcdefghijkl", "session", 0},
        {"session-m1-abcdefghijk", "session", 0},
};

static void test_ids(void) {
        for (size_t i = 0; i < ELEMENTSOF(id_cases); i++) {
                const IdCase *c = &id_cases[i];

                tap_is_int(broker_id_valid(c->id, c->prefix), c->valid, "id '%s' of kind %s: %s", c->id,
                           c->prefix ? c->prefix : "any", c->valid ? "valid" : "refused");
        }
}

static BrokerRequest make(BrokerOp op, const char *id) {
        BrokerRequest r = {.magic = BROKER_MAGIC, .op = op};

        (void) strncpy(r.id, id, sizeof(r.id) - 1);
        return r;
}

static BrokerRequest tool(const char *image, const char *request_id, unsigned timeout_s) {
        BrokerRequest r = make(BROKER_RUN_TOOL, "tool-abcdefghijkl");

        (void) strncpy(r.image, image, sizeof(r.image) - 1);
        (void) strncpy(r.request_id, request_id, sizeof(r.request_id) - 1);
        r.timeout_s = timeout_s;
        return r;
}

static void check(const BrokerRequest *r, int want, const char *what) {
        tap_is_int(broker_request_check(r, sizeof(*r)), want, "%s", what);
}

static void test_ops(void) {
        BrokerRequest r;

        r = make(BROKER_START_WARM, "machine-abcdefghijkl");
        check(&r, 0, "START_WARM of a sandbox id");
        r = make(BROKER_START_WARM, "tool-abcdefghijkl");
        check(&r, -EINVAL, "START_WARM of a tool id is refused");
        r = make(BROKER_KILL, "machine-abcdefghijkl");
        check(&r, 0, "KILL of a warm sandbox");
        r = make(BROKER_KILL, "tool-abcdefghijkl");
        check(&r, 0, "KILL of a tool sandbox");
        r = make(BROKER_KILL, "sandbox-api");
        check(&r, -EINVAL, "KILL of the service itself is refused");
        r = make(BROKER_KILL, "dbus");
        check(&r, -EINVAL, "KILL of another unit is refused");
        r = make(BROKER_RESET_FAILED, "systemd-journald");
        check(&r, -EINVAL, "RESET_FAILED of another unit is refused");
        r = make(BROKER_RESET_FAILED, "machine-abcdefghijkl");
        check(&r, 0, "RESET_FAILED of a sandbox");
        r = make(BROKER_LIST, "");
        check(&r, 0, "LIST");
        r = make(BROKER_LIST, "machine-abcdefghijkl");
        check(&r, -EINVAL, "LIST takes no id");
        r = make(BROKER_SESSION_LIST, "");
        check(&r, 0, "SESSION_LIST");
        r = make(BROKER_SESSION_LIST, "session-abcdefghijkl");
        check(&r, -EINVAL, "SESSION_LIST takes no id");
        r = make(BROKER_SESSION_LIST, "../../etc");
        check(&r, -EINVAL, "SESSION_LIST takes no path");
        r = make(0, "machine-abcdefghijkl");
        check(&r, -EINVAL, "op 0 is refused");
        r = make(_BROKER_OP_MAX, "machine-abcdefghijkl");
        check(&r, -EINVAL, "an op past the last is refused");
        r = make((BrokerOp) 0xffffffffU, "machine-abcdefghijkl");
        check(&r, -EINVAL, "op 2^32-1 is refused");
}

static void test_tool(void) {
        BrokerRequest r;

        r = tool("demo-agent", "0123456789abcdef0123456789abcdef", 30);
        check(&r, 0, "RUN_TOOL of an image name");
        r = tool("demo-agent", "0123456789abcdef0123456789abcdef", 120);
        check(&r, 0, "RUN_TOOL at the longest timeout");
        r = tool("demo-agent", "0123456789abcdef0123456789abcdef", 121);
        check(&r, -EINVAL, "RUN_TOOL past the longest timeout");
        r = tool("demo-agent", "0123456789abcdef0123456789abcdef", 0);
        check(&r, -EINVAL, "RUN_TOOL with no timeout");
        r = tool("../etc", "0123456789abcdef0123456789abcdef", 30);
        check(&r, -EINVAL, "RUN_TOOL of a path");
        r = tool("registry/demo-agent", "0123456789abcdef0123456789abcdef", 30);
        check(&r, -EINVAL, "RUN_TOOL of a reference, not its name");
        r = tool("demo-agent:latest", "0123456789abcdef0123456789abcdef", 30);
        check(&r, -EINVAL, "RUN_TOOL of a tagged reference");
        r = tool(".hidden", "0123456789abcdef0123456789abcdef", 30);
        check(&r, -EINVAL, "RUN_TOOL of a dot name");
        r = tool("", "0123456789abcdef0123456789abcdef", 30);
        check(&r, -EINVAL, "RUN_TOOL of no image");
        r = tool("demo-agent", "", 30);
        check(&r, -EINVAL, "RUN_TOOL without a request id");
        r = tool("demo-agent", "abc\nMESSAGE=forged", 30);
        check(&r, -EINVAL, "RUN_TOOL with a request id that would forge journal fields");
        r = tool("demo-agent", "0123456789abcdef0123456789abcdef", 30);
        memcpy(r.id, "machine-abcdefghijkl", sizeof("machine-abcdefghijkl"));
        check(&r, -EINVAL, "RUN_TOOL of a warm sandbox's id");
}

static void test_framing(void) {
        BrokerRequest r = make(BROKER_KILL, "machine-abcdefghijkl");

        tap_is_int(broker_request_check(&r, sizeof(r) - 1), -EPROTO, "a short message is not a request");
        tap_is_int(broker_request_check(&r, sizeof(r) + 1), -EPROTO, "a long message is not a request");
        tap_is_int(broker_request_check(&r, 0), -EPROTO, "an empty message is not a request");
        r.magic = BROKER_MAGIC + 1;
        tap_is_int(broker_request_check(&r, sizeof(r)), -EPROTO, "another layout's magic is not a request");

        r = make(BROKER_KILL, "machine-abcdefghijkl");
        memset(r.id, 'a', sizeof(r.id));
        check(&r, -EINVAL, "an id with no terminating NUL");
        r = make(BROKER_KILL, "machine-abcdefghijkl");
        memset(r.image, 'a', sizeof(r.image));
        check(&r, -EINVAL, "an image with no terminating NUL, even where the op does not use it");
        r = make(BROKER_KILL, "machine-abcdefghijkl");
        memset(r.request_id, 'a', sizeof(r.request_id));
        check(&r, -EINVAL, "a request id with no terminating NUL");
}

/* Each operation's failures counted as the broker's, under its own label: never as an sqlite
 * error, which a zero left in the table would make of them. */
static void test_failure_counts(void) {
        for (BrokerOp op = 1; op < _BROKER_OP_MAX; op++) {
                ErrorCount c = broker_failure_count(op, -EIO);

                tap_ok(c > ERROR_COUNT_SQLITE && c < _ERROR_COUNT_MAX && error_count_label(c) && error_count_label(c)[0],
                       "op %d: a failure counts as a broker error with a label (%s)", (int) op, c >= 0 ? error_count_label(c) : "none");
        }
        tap_is_int(broker_failure_count(BROKER_SESSION_START, -EIO), ERROR_COUNT_BROKER_SESSION_START, "a session start's own counter");
        tap_is_int(broker_failure_count(BROKER_SESSION_DELETE, -ENOENT), _ERROR_COUNT_NONE, "deleting what is gone holds");
        tap_is_int(broker_failure_count(BROKER_SESSION_CREATE, -ENOENT), ERROR_COUNT_BROKER_SESSION_CREATE, "a create that fails counts");
        tap_is_int(broker_failure_count(BROKER_KILL, 0), _ERROR_COUNT_NONE, "a success counts nothing");
        tap_is_int(broker_failure_count(BROKER_RUN_TOOL, -ENOEXEC), _ERROR_COUNT_NONE, "an image without python3 is the request's fault");
}

typedef struct TimeoutCase {
        BrokerOp op;
        unsigned timeout_s;
        uint64_t at_least_s; /* what the broker may take on systemd's side for this op */
        uint64_t at_most_s;  /* what a caller should wait for it */
} TimeoutCase;

/* A kill is given up on within seconds, a session's disk is given its format and its machine's
 * start, a tool call its sandbox's own limits and stop: never less than the broker may take. */
static const TimeoutCase timeout_cases[] = {
        {BROKER_KILL, 0, 1, 5},
        {BROKER_RESET_FAILED, 0, 1, 5},
        {BROKER_LIST, 0, 1, 10},
        {BROKER_SESSION_LIST, 0, 1, 10},
        {BROKER_START_WARM, 0, 25, 30},
        {BROKER_SESSION_CREATE, 0, 60 + 25, 90},
        {BROKER_SESSION_START, 0, 25, 90},
        {BROKER_SESSION_STOP, 0, 15 + 30, 90},
        {BROKER_SESSION_DELETE, 0, 15 + 30, 90},
        {BROKER_RUN_TOOL, 1, BROKER_TOOL_READY_MAX_S + 1 + 10 + 17, BROKER_TOOL_READY_MAX_S + 1 + 60},
        {BROKER_RUN_TOOL, BROKER_TOOL_TIMEOUT_MAX_S, BROKER_TOOL_READY_MAX_S + BROKER_TOOL_TIMEOUT_MAX_S + 10 + 17,
         BROKER_TOOL_READY_MAX_S + BROKER_TOOL_TIMEOUT_MAX_S + 60},
        {(BrokerOp) 0, 0, 1, 5},
        {_BROKER_OP_MAX, 0, 1, 5},
};

static void test_timeouts(void) {
        for (size_t i = 0; i < ELEMENTSOF(timeout_cases); i++) {
                const TimeoutCase *c = &timeout_cases[i];
                uint64_t t = broker_op_timeout_usec(c->op, c->timeout_s);

                tap_ok(t >= c->at_least_s * USEC_PER_SEC && t <= c->at_most_s * USEC_PER_SEC,
                       "op %d (timeout %u s): the client waits %llu us, within [%llu, %llu] s", (int) c->op, c->timeout_s,
                       (unsigned long long) t, (unsigned long long) c->at_least_s, (unsigned long long) c->at_most_s);
        }
        tap_ok(broker_op_timeout_usec(BROKER_RUN_TOOL, 100) > broker_op_timeout_usec(BROKER_RUN_TOOL, 10),
               "a longer tool call is waited for longer");
}

int main(void) {
        test_timeouts();
        test_failure_counts();
        test_ids();
        test_ops();
        test_tool();
        test_framing();
        return tap_done();
}
