/* SPDX-License-Identifier: MIT */
/* session_usage_ask(): the pool manager's ask of a session's runner, on an sd-event loop, against a
 * fake runner served by the same loop. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "lib/fd-util.h"
#include "lib/macro.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/session-usage.h"
#include "tests/unit/tap.h"

typedef struct Case {
        const char *name;
        const char *greeting; /* what the runner says first */
        bool hang_up;         /* it closes right after its greeting */
        const char *reply;    /* NULL: it never answers */
        int want;
        long long cpu_ms;
} Case;

typedef struct Runner {
        const Case *c;
        int conn;
        sd_event_source *io;
        bool got_request; /* it read the request to its end (the write side closed) */
        bool done;
        int r;
        int64_t cpu_ms;
} Runner;

static int on_request(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Runner *rn = userdata;
        char buf[256];
        ssize_t n;

        (void) s;
        (void) revents;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                ;
        if (n != 0)
                return 0;
        rn->got_request = true;
        rn->io = sd_event_source_disable_unref(rn->io);
        if (rn->c->reply) {
                (void) fd_write_all(fd, rn->c->reply, strlen(rn->c->reply));
                closep(&rn->conn);
        }
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Runner *rn = userdata;

        (void) revents;
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        rn->conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (rn->conn < 0)
                return 0;
        (void) fd_write_all(rn->conn, rn->c->greeting, strlen(rn->c->greeting));
        if (rn->c->hang_up)
                closep(&rn->conn);
        else
                (void) sd_event_add_io(sd_event_source_get_event(s), &rn->io, rn->conn, EPOLLIN, on_request, rn);
        return 0;
}

static void on_done(int r, int64_t cpu_ms, void *userdata) {
        Runner *rn = userdata;

        rn->done = true;
        rn->r = r;
        rn->cpu_ms = cpu_ms;
}

static void run_case(const Case *c, const char *path) {
        sd_event *e = NULL;
        sd_event_source *listener = NULL;
        cleanup_close int lfd = -1;
        Runner rn = {.c = c, .conn = -1};

        if (sd_event_new(&e) < 0 || pool_listen(path, &lfd) < 0 || sd_event_add_io(e, &listener, lfd, EPOLLIN, on_accept, &rn) < 0) {
                tap_ok(false, "%s: set up", c->name);
                goto done;
        }
        tap_is_int(session_usage_ask(e, path, 200 * USEC_PER_MSEC, on_done, &rn, NULL), 0, "%s: asked", c->name);
        tap_ok(!rn.done, "%s: not answered from the call itself", c->name);
        while (!rn.done && sd_event_run(e, USEC_PER_SEC) > 0)
                ;
        tap_ok(rn.done, "%s: answered from the loop", c->name);
        tap_is_int(rn.r, c->want, "%s: %s", c->name, c->want == 0 ? "read" : "refused");
        if (c->want == 0)
                tap_is_int(rn.cpu_ms, c->cpu_ms, "%s: its cpu_ms", c->name);
        if (c->reply)
                tap_ok(rn.got_request, "%s: the runner got the request whole", c->name);
done:
        rn.io = sd_event_source_disable_unref(rn.io);
        closep(&rn.conn);
        listener = sd_event_source_disable_unref(listener);
        e = sd_event_unref(e);
        (void) unlink(path);
}

int main(void) {
        static const Case cases[] = {
                {"answers", POOL_GREETING, false, "{\"status\":200,\"cpu_ms\":42,\"cpu_source\":\"cgroup\"}", 0, 42},
                {"answers nothing used", POOL_GREETING, false, "{\"status\":200,\"cpu_ms\":0}", 0, 0},
                {"refuses the op", POOL_GREETING, false, "{\"status\":400,\"error\":\"unknown op\"}", -EBADMSG, 0},
                {"answers garbage", POOL_GREETING, false, "ready", -EBADMSG, 0},
                {"hangs up after its greeting", POOL_GREETING, true, NULL, -EHOSTDOWN, 0},
                {"hangs up without a greeting", "", true, NULL, -EHOSTDOWN, 0},
                {"greets wrongly", "hello\n", false, NULL, -EHOSTDOWN, 0},
                {"never answers", POOL_GREETING, false, NULL, -ETIME, 0},
                {"never greets", "", false, NULL, -ETIME, 0},
        };
        char path[64];
        sd_event *e = NULL;

        (void) snprintf(path, sizeof(path), "/tmp/test-usage-ask-%d.sock", (int) getpid());
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                run_case(&cases[i], path);

        /* Nobody listens: refused at once, and done is never called. */
        if (sd_event_new(&e) >= 0) {
                Runner rn = {.conn = -1};

                tap_is_int(session_usage_ask(e, path, USEC_PER_SEC, on_done, &rn, NULL), -EHOSTDOWN, "nobody listens: -EHOSTDOWN at once");
                tap_ok(!rn.done, "nobody listens: no callback");
                e = sd_event_unref(e);
        }
        return tap_done();
}
