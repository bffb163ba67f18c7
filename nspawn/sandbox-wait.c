/* SPDX-License-Identifier: MIT */
/* Waiting for a sandbox unit to be over, by message: systemd says when the unit's state changes,
 * when a job of it ends and when it unloads it. One look at the state after the matches exist (the
 * unit may be gone already); after that, a look only when systemd has said something of the unit. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/sandbox.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"
#define UNIT_INTERFACE "org.freedesktop.systemd1.Unit"
#define UNIT_PATH_PREFIX "/org/freedesktop/systemd1/unit"
#define MATCH_MAX 512

typedef enum WaitState {
        WAIT_RUNNING,  /* loaded, not yet inactive or failed */
        WAIT_OVER,     /* loaded, inactive or failed: a failed one is reset */
        WAIT_UNLOADED, /* systemd holds nothing of it */
} WaitState;

typedef struct WaitGone {
        const char *unit;
        WaitState state;
        bool look; /* something of the unit changed that its signals do not carry: look again */
        bool subscribed;
        uint64_t deadline;
        sd_bus_slot *slots[3];
} WaitGone;

static void wait_gone_done(sd_bus *bus, WaitGone *w) {
        for (size_t i = 0; i < ELEMENTSOF(w->slots); i++)
                w->slots[i] = sd_bus_slot_unref(w->slots[i]);
        /* Only ours: a connection that was subscribed before keeps its subscription. */
        if (w->subscribed)
                (void) sd_bus_call_method(bus, SYSTEMD_NAME, MANAGER_PATH, MANAGER_INTERFACE, "Unsubscribe", NULL, NULL, NULL);
}

static uint64_t remaining(const WaitGone *w) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        return now < w->deadline ? w->deadline - now : 0;
}

static bool active_state_over(const char *state) {
        return strcmp(state, "inactive") == 0 || strcmp(state, "failed") == 0;
}

/* The unit object's PropertiesChanged: ActiveState is in the body (systemd emits its value). An
 * inactive unit may have a start job queued (just started, not yet running): look() tells. */
static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        WaitGone *w = userdata;
        const char *interface, *key, *state;

        (void) error;
        if (sd_bus_message_read(m, "s", &interface) < 0 || strcmp(interface, UNIT_INTERFACE) != 0 ||
            sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &key) < 0)
                        return 0;
                if (strcmp(key, "ActiveState") != 0) {
                        if (sd_bus_message_skip(m, "v") < 0)
                                return 0;
                } else if (sd_bus_message_read(m, "v", "s", &state) < 0)
                        return 0;
                else if (active_state_over(state))
                        w->look = true; /* over unless a job of it is still queued: look() */
                if (sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

/* UnitRemoved and JobRemoved, already filtered by the unit's name. */
static int on_manager_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        WaitGone *w = userdata;

        (void) error;
        if (sd_bus_message_is_signal(m, MANAGER_INTERFACE, "UnitRemoved"))
                w->state = WAIT_UNLOADED;
        else
                w->look = true; /* a job of the unit (its stop) ended */
        return 0;
}

__attribute__((format(printf, 5, 6))) static int add_match(sd_bus *bus, sd_bus_slot **slot, sd_bus_message_handler_t f, WaitGone *w,
                                                           const char *fmt, ...) {
        char match[MATCH_MAX];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(match, sizeof(match), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(match))
                return -ENAMETOOLONG;
        /* Synchronous: the bus has the match when this returns, so no later signal is missed. */
        return sd_bus_add_match(bus, slot, match, f, w);
}

/* The matches first, then Subscribe (PID 1 sends unit and job signals only to subscribers or to
 * clients that hold a reference), then the one look. */
static int wait_subscribe(sd_bus *bus, WaitGone *w) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_free char *path = NULL;
        int r;

        /* The unit's name goes into match rules between quotes: names from unit-name.c never hold
         * one, anything else is refused rather than escaped. */
        if (strpbrk(w->unit, "'\\,=") || sd_bus_path_encode(UNIT_PATH_PREFIX, w->unit, &path) < 0)
                return -EINVAL;
        r = add_match(bus, &w->slots[0], on_properties_changed, w,
                      "type='signal',sender='" SYSTEMD_NAME "',path='%s',interface='org.freedesktop.DBus.Properties',"
                      "member='PropertiesChanged',arg0='%s'",
                      path, UNIT_INTERFACE);
        if (r >= 0)
                r = add_match(bus, &w->slots[1], on_manager_signal, w,
                              "type='signal',sender='" SYSTEMD_NAME "',path='%s',interface='" MANAGER_INTERFACE "',member='UnitRemoved',arg0='%s'",
                              MANAGER_PATH, w->unit);
        if (r >= 0)
                r = add_match(bus, &w->slots[2], on_manager_signal, w,
                              "type='signal',sender='" SYSTEMD_NAME "',path='%s',interface='" MANAGER_INTERFACE "',member='JobRemoved',arg2='%s'",
                              MANAGER_PATH, w->unit);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, SYSTEMD_NAME, MANAGER_PATH, MANAGER_INTERFACE, "Subscribe", &error, NULL, NULL);
        if (r >= 0)
                w->subscribed = true;
        else if (!sd_bus_error_has_name(&error, "org.freedesktop.systemd1.AlreadySubscribed"))
                return r;
        return 0;
}

static int call_with_deadline(sd_bus *bus, const WaitGone *w, const char *path, const char *interface, const char *member,
                              sd_bus_error *error, sd_bus_message **ret, const char *types, const char *a, const char *b) {
        cleanup_bus_message sd_bus_message *m = NULL;
        uint64_t left = remaining(w);
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SYSTEMD_NAME, path, interface, member);
        if (r >= 0)
                r = b ? sd_bus_message_append(m, types, a, b) : sd_bus_message_append(m, types, a);
        if (r < 0)
                return r;
        /* A look at a deadline already past still gets a moment: 0 would mean sd-bus's default. */
        return sd_bus_call(bus, m, left > 0 ? left : USEC_PER_SEC / 10, error, ret);
}

/* A property of the unit's object into *reply; an object gone is a unit unloaded (w->state). */
static int get_property(sd_bus *bus, WaitGone *w, const char *path, const char *property, sd_bus_message **reply) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = call_with_deadline(bus, w, path, "org.freedesktop.DBus.Properties", "Get", &error, reply, "ss", UNIT_INTERFACE, property);
        if (r < 0 && sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT))
                w->state = WAIT_UNLOADED;
        return r;
}

/* A failed call of a look is no failure once it showed the unit unloaded. */
static int look_done(const WaitGone *w, int r) {
        if (w->state == WAIT_UNLOADED || r >= 0)
                return 0;
        return r;
}

/* The unit's state now, into w->state. Over is inactive or failed with no job queued: a unit whose
 * start job waits is inactive too. The job is read first: a unit without one then, and inactive
 * after, was over at the first look, whatever ran in between. */
static int look(sd_bus *bus, WaitGone *w) {
        cleanup_bus_error sd_bus_error error = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *unit = NULL, *job = NULL, *state = NULL;
        const char *path, *job_path, *active;
        uint32_t job_id = 0;
        int r;

        w->look = false;
        r = call_with_deadline(bus, w, MANAGER_PATH, MANAGER_INTERFACE, "GetUnit", &error, &unit, "s", w->unit, NULL);
        if (r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                w->state = WAIT_UNLOADED;
        if (r >= 0)
                r = sd_bus_message_read(unit, "o", &path);
        if (r >= 0)
                r = get_property(bus, w, path, "Job", &job);
        if (r >= 0)
                r = sd_bus_message_read(job, "v", "(uo)", &job_id, &job_path);
        if (r < 0 || job_id != 0)
                return look_done(w, r);
        r = get_property(bus, w, path, "ActiveState", &state);
        if (r >= 0)
                r = sd_bus_message_read(state, "v", "s", &active);
        if (r >= 0 && active_state_over(active))
                w->state = WAIT_OVER;
        return look_done(w, r);
}

/* Until something of the unit's arrives or the deadline passes. */
static int wait_signal(sd_bus *bus, WaitGone *w) {
        int r = sd_bus_process(bus, NULL);

        if (r != 0)
                return r < 0 ? r : 0;
        if (remaining(w) == 0)
                return -ETIME;
        r = sd_bus_wait(bus, remaining(w));
        if (r == -EINTR)
                return 0;
        return r < 0 ? r : 0;
}

int sandbox_reset_failed(sd_bus *bus, const char *unit) {
        return sd_bus_call_method(bus, SYSTEMD_NAME, MANAGER_PATH, MANAGER_INTERFACE, "ResetFailedUnit", NULL, NULL, "s", unit);
}

int sandbox_wait_gone(sd_bus *bus, const char *unit, uint64_t timeout_usec) {
        WaitGone w = {.unit = unit, .look = true, .deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec};
        int r = 0;

        /* timeout 0: one look, no subscription, nothing processed (callers in an event loop). */
        if (timeout_usec > 0)
                r = wait_subscribe(bus, &w);
        while (r >= 0 && w.state == WAIT_RUNNING) {
                if (w.look)
                        r = look(bus, &w);
                if (r >= 0 && w.state == WAIT_RUNNING)
                        r = timeout_usec > 0 ? wait_signal(bus, &w) : -ETIME;
        }
        wait_gone_done(bus, &w);
        if (r < 0)
                return r;
        if (w.state == WAIT_OVER)
                (void) sandbox_reset_failed(bus, unit);
        return 0;
}
