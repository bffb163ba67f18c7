/* SPDX-License-Identifier: MIT */
/* The list replies' records as the asynchronous client reads them from the memfd a reply carries,
 * and the queue's policy: slow requests never take the room of starts and kills. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/broker/broker-async.h"
#include "tests/unit/tap.h"

/* A memfd holding size bytes of buf. */
static int memfd_of(const void *buf, size_t size) {
        int fd = memfd_create("test-broker-async", MFD_CLOEXEC);

        if (fd >= 0 && fd_write_all(fd, buf, size) < 0)
                closep(&fd);
        return fd;
}

static void test_units(void) {
        BrokerUnit good[2] = {{.id = "machine-aaaaaaaaaaaa", .state = "active"}, {.id = "tool-bbbbbbbbbbbb", .state = "failed"}};
        BrokerUnit unterminated[1];
        static const struct {
                const char *name;
                int which; /* 0: good, 1: unterminated id */
                uint32_t n_units;
                size_t bytes;
                int want;
        } cases[] = {
                {"two records", 0, 2, 2 * sizeof(BrokerUnit), 0},
                {"none", 0, 0, 0, 0},
                {"fewer bytes than records", 0, 2, sizeof(BrokerUnit), -EPROTO},
                {"more bytes than records", 0, 1, 2 * sizeof(BrokerUnit), -EPROTO},
                {"a record cut short", 0, 1, sizeof(BrokerUnit) - 1, -EPROTO},
                {"an id without its end", 1, 1, sizeof(BrokerUnit), -EPROTO},
        };

        memset(unterminated, 'x', sizeof(unterminated));
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BrokerReply rep = {.n_units = cases[i].n_units};
                cleanup_close int fd = memfd_of(cases[i].which ? (void *) unterminated : (void *) good, cases[i].bytes);
                cleanup_free BrokerUnit *units = NULL;
                size_t n = 99;
                int r = broker_units_read(&rep, fd, &units, &n);

                tap_is_int(r, cases[i].want, "units: %s", cases[i].name);
                if (r == 0)
                        tap_ok(n == cases[i].n_units && (n == 0 || strcmp(units[n - 1].id, good[n - 1].id) == 0), "units: %s: as sent", cases[i].name);
                else
                        tap_ok(n == 99 && !units, "units: %s: nothing handed over", cases[i].name);
        }
        {
                BrokerReply rep = {.n_units = 0};
                BrokerUnit *units = NULL;
                size_t n = 0;

                tap_is_int(broker_units_read(&rep, -1, &units, &n), -EPROTO, "units: a reply without its memfd");
        }
}

static void test_sessions(void) {
        static const struct {
                const char *name;
                const char *id;
                int want;
        } cases[] = {
                {"a session's id", "session-aaaaaaaaaaaa", 0},
                {"a machine's id", "machine-aaaaaaaaaaaa", -EPROTO},
                {"an id too short", "session-aaaa", -EPROTO},
                {"an id that climbs", "session-../../etc/x", -EPROTO},
                {"no id", "", -EPROTO},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BrokerSession s = {.mounted = 1};
                BrokerReply rep = {.n_units = 1};
                cleanup_close int fd = -1;
                cleanup_free BrokerSession *list = NULL;
                size_t n = 0;

                (void) snprintf(s.id, sizeof(s.id), "%s", cases[i].id);
                fd = memfd_of(&s, sizeof(s));
                tap_is_int(broker_sessions_read(&rep, fd, &list, &n), cases[i].want, "sessions: %s", cases[i].name);
        }
}

static void test_may_send(void) {
        static const struct {
                const char *name;
                BrokerOp op;
                unsigned inflight, inflight_slow;
                bool want;
        } cases[] = {
                {"a start, nothing in flight", BROKER_START_WARM, 0, 0, true},
                {"a kill behind the slow lane full", BROKER_KILL, 16, 16, true},
                {"a start behind the slow lane full", BROKER_START_WARM, 16, 16, true},
                {"a reset behind the slow lane full", BROKER_RESET_FAILED, 31, 16, true},
                {"a session's stop, the slow lane full", BROKER_SESSION_STOP, 16, 16, false},
                {"a session's delete, the slow lane full", BROKER_SESSION_DELETE, 20, 16, false},
                {"a list, the slow lane full", BROKER_LIST, 16, 16, false},
                {"a session's list, the slow lane full", BROKER_SESSION_LIST, 17, 16, false},
                {"a session's stop, room in both", BROKER_SESSION_STOP, 15, 15, true},
                {"a session's stop, every connection taken", BROKER_SESSION_STOP, 32, 0, false},
                {"a kill, every connection taken", BROKER_KILL, 32, 16, false},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                tap_ok(broker_async_may_send(cases[i].op, cases[i].inflight, cases[i].inflight_slow, 32, 16) == cases[i].want,
                       "may send: %s", cases[i].name);
}

/* A pause storm: 40 stops queued, then a start and a kill, sent in queue order while their lane has
 * room (as calls_start() does). The start and the kill go at once; the stops fill their lane only. */
static void test_storm(void) {
        BrokerOp queue[42];
        bool sent[ELEMENTSOF(queue)] = {};
        unsigned inflight = 0, inflight_slow = 0;

        for (size_t i = 0; i < 40; i++)
                queue[i] = BROKER_SESSION_STOP;
        queue[40] = BROKER_START_WARM;
        queue[41] = BROKER_KILL;
        for (size_t i = 0; i < ELEMENTSOF(queue) && inflight < 32; i++) {
                if (!broker_async_may_send(queue[i], inflight, inflight_slow, 32, 16))
                        continue;
                sent[i] = true;
                inflight++;
                inflight_slow += broker_op_slow(queue[i]);
        }
        tap_ok(sent[40] && sent[41], "storm: the start and the kill behind 40 stops are sent");
        tap_is_int((int) inflight_slow, 16, "storm: the stops in flight are their lane's");
        tap_ok(sent[15] && !sent[16], "storm: the stops go in order");
}

int main(void) {
        test_units();
        test_sessions();
        test_may_send();
        test_storm();
        return tap_done();
}
