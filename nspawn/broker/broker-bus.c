/* SPDX-License-Identifier: MIT */
/* The broker's calls to systemd, none of which waits: each is sent, and the request's next step
 * runs from the event loop when the reply comes. A call whose answer is a job (a start, a stop) is
 * followed the way systemd's own tools do it: JobRemoved is subscribed to once per connection,
 * before any call on it (the bus delivers in order, so no job can end unseen), and each request
 * waits for the job path its call returned, with a deadline of its own. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "lib/log.h"
#include "lib/macro.h"
#include "nspawn/broker/broker.h"

#define SYSTEMD "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
/* How long systemd may take to answer one call (not its job). */
#define BUS_CALL_TIMEOUT_USEC (25 * USEC_PER_SEC)

int broker_fail(Error *err, int r, const sd_bus_error *error) {
        r = r < 0 ? r : -EIO;
        return error_set(err, r, "%s", error && sd_bus_error_is_set(error) ? error->message : strerror(-r));
}

static void job_unlink(Request *q) {
        for (Request **p = &q->broker->job_waiters; *p; p = &(*p)->job_next)
                if (*p == q) {
                        *p = q->job_next;
                        break;
                }
        q->job_next = NULL;
        q->job = mfree(q->job);
        q->job_timer = sd_event_source_disable_unref(q->job_timer);
}

/* q's job is over (result: systemd's word for how), or will never be heard of (NULL, r). */
static void job_over(Request *q, const char *result, int r) {
        RequestStep step = TAKE_PTR(q->step);

        job_unlink(q);
        if (result && strcmp(result, "done") == 0)
                r = 0;
        else if (result)
                r = error_set(&q->err, -EIO, "job %s", result);
        step(q, r, NULL);
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Broker *b = userdata;
        const char *path, *unit, *result;
        uint32_t id;

        (void) error;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        for (Request *q = b->job_waiters; q; q = q->job_next)
                if (strcmp(q->job, path) == 0) {
                        job_over(q, result, 0);
                        break;
                }
        return 0;
}

static int on_job_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Request *q = userdata;

        (void) s;
        (void) usec;
        job_over(q, NULL, error_set(&q->err, -ETIME, "systemd's job for '%s' did not end in time", q->unit[0] ? q->unit : q->req.id));
        return 0;
}

/* Every job waited for on a connection that is gone: none will be heard of again. */
static void jobs_lost(Broker *b) {
        while (b->job_waiters)
                job_over(b->job_waiters, NULL, error_set(&b->job_waiters->err, -ECONNRESET, "the connection to systemd was lost"));
}

/* sd-bus says so once every call in flight on the connection has had its (failed) reply. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Broker *b = userdata;

        (void) error;
        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected")) {
                (void) log_warning_errno(ECONNRESET, "Broker: lost the system bus, connecting anew on next use");
                b->bus_lost = true;
                jobs_lost(b);
        }
        return 0;
}

static int bus_open(Broker *b) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_attach_event(bus, b->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, on_message, b);
        /* Before any call on this connection: a job cannot end before the match exists. */
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, SYSTEMD, MANAGER_PATH, MANAGER_INTERFACE, "JobRemoved", on_job_removed, NULL, b);
        if (r < 0) {
                (void) sd_bus_flush_close_unref(bus);
                return r;
        }
        b->bus = bus;
        b->bus_lost = false;
        return 0;
}

sd_bus *broker_bus(Broker *b) {
        int r;

        if (b->bus && !b->bus_lost)
                return b->bus;
        jobs_lost(b);
        if (b->bus) {
                (void) sd_bus_detach_event(b->bus);
                b->bus = sd_bus_flush_close_unref(b->bus);
        }
        r = bus_open(b);
        if (r < 0)
                (void) log_error_errno(r, "Broker: failed to connect to the system bus");
        return b->bus;
}

void broker_bus_done(Broker *b) {
        if (!b->bus)
                return;
        (void) sd_bus_detach_event(b->bus);
        b->bus = sd_bus_flush_close_unref(b->bus);
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Request *q = userdata;
        RequestStep step = TAKE_PTR(q->step);
        int r = 0;

        (void) error;
        if (sd_bus_message_is_method_error(m, NULL)) {
                r = sd_bus_message_get_errno(m);
                r = broker_fail(&q->err, r > 0 ? -r : -EIO, sd_bus_message_get_error(m));
        }
        step(q, r, r < 0 ? NULL : m);
        return 0;
}

int broker_call(Request *q, sd_bus_message *m, RequestStep step) {
        sd_bus *bus = broker_bus(q->broker);
        int r;

        if (!bus)
                return broker_fail(&q->err, -ENOTCONN, NULL);
        q->step = step;
        /* Floating: the call belongs to the connection, and q waits for its reply, whatever it is
         * (a connection that goes gives every call in flight an error reply first). */
        r = sd_bus_call_async(bus, NULL, m, on_reply, q, BUS_CALL_TIMEOUT_USEC);
        if (r < 0) {
                q->step = NULL;
                return broker_fail(&q->err, r, NULL);
        }
        return 0;
}

static int manager_message(sd_bus *bus, const char *member, const char *types, va_list ap, sd_bus_message **ret) {
        cleanup_bus_message sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SYSTEMD, MANAGER_PATH, MANAGER_INTERFACE, member);
        if (r >= 0)
                r = sd_bus_message_appendv(m, types, ap);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int broker_call_manager(Request *q, RequestStep step, const char *member, const char *types, ...) {
        cleanup_bus_message sd_bus_message *m = NULL;
        sd_bus *bus = broker_bus(q->broker);
        va_list ap;
        int r;

        if (!bus)
                return broker_fail(&q->err, -ENOTCONN, NULL);
        va_start(ap, types);
        r = manager_message(bus, member, types, ap, &m);
        va_end(ap);
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        return broker_call(q, m, step);
}

void broker_call_manager_forget(Broker *b, const char *member, const char *types, ...) {
        cleanup_bus_message sd_bus_message *m = NULL;
        sd_bus *bus = broker_bus(b);
        va_list ap;
        int r;

        if (!bus)
                return;
        va_start(ap, types);
        r = manager_message(bus, member, types, ap, &m);
        va_end(ap);
        if (r >= 0)
                (void) sd_bus_call_async(bus, NULL, m, NULL, NULL, BUS_CALL_TIMEOUT_USEC);
}

/* The reply to a call that made a job: its path, then the wait for its removal. */
static void on_job_queued(Request *q, int r, sd_bus_message *reply) {
        RequestStep step = TAKE_PTR(q->then_step);
        const char *job;

        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &job);
        if (r >= 0) {
                q->job = strdup(job);
                r = q->job ? 0 : -ENOMEM;
        }
        if (r >= 0)
                r = sd_event_add_time_relative(q->broker->event, &q->job_timer, CLOCK_MONOTONIC, q->job_timeout_usec, 0, on_job_timeout, q);
        if (r < 0) {
                q->job = mfree(q->job);
                step(q, q->err.message[0] ? r : broker_fail(&q->err, r, NULL), NULL);
                return;
        }
        q->step = step;
        q->job_next = q->broker->job_waiters;
        q->broker->job_waiters = q;
}

int broker_call_job(Request *q, sd_bus_message *m, uint64_t timeout_usec, RequestStep step) {
        q->then_step = step;
        q->job_timeout_usec = timeout_usec;
        return broker_call(q, m, on_job_queued);
}

static void on_unit_stopped(Request *q, int r, sd_bus_message *reply) {
        RequestStep step = TAKE_PTR(q->then_stop);

        (void) reply;
        if (r == -ENOENT) { /* no such unit: nothing to stop */
                q->err.message[0] = 0;
                r = 0;
        }
        step(q, r, NULL);
}

int broker_stop_unit(Request *q, const char *unit, uint64_t timeout_usec, RequestStep step) {
        cleanup_bus_message sd_bus_message *m = NULL;
        sd_bus *bus = broker_bus(q->broker);
        int r;

        if (!bus)
                return broker_fail(&q->err, -ENOTCONN, NULL);
        r = sd_bus_message_new_method_call(bus, &m, SYSTEMD, MANAGER_PATH, MANAGER_INTERFACE, "StopUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "replace");
        if (r < 0)
                return broker_fail(&q->err, r, NULL);
        q->then_stop = step;
        return broker_call_job(q, m, timeout_usec, on_unit_stopped);
}
