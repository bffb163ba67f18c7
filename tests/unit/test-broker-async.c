/* SPDX-License-Identifier: MIT */
/* The list replies' records as the asynchronous client reads them from the memfd a reply carries. */
#include <errno.h>
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

int main(void) {
        test_units();
        test_sessions();
        return tap_done();
}
