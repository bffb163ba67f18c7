/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/log.h"
#include "lib/macro.h"
#include "lib/settings.h"
#include "lib/time-util.h"

/* The value a reload's SIGHUP carries (sigqueue()), and how long its command waits for the answer. */
#define RELOAD_VALUE 0x5e771e5
#define RELOAD_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define NAMES_MAX 1024

/* The file as the daemon started (its environment came from it) and as its last reload read it. */
static SettingsFile arg_settings_start, arg_settings_applied;
/* The settings of the file that changed and wait for a restart, space-separated. */
static char arg_settings_pending[NAMES_MAX];
/* The file a reload reads, for config_parse()'s getter. */
static const SettingsFile *reload_now;

static const char *get_env(const char *name) {
        return getenv(name);
}

static const char *get_reloaded(const char *name) {
        return settings_restart_value(&arg_settings_start, reload_now, name, getenv(name));
}

/* The reference for reloads; should the file have changed since systemd read it, what changed waits
 * for a restart. A file the daemon cannot read leaves reloads nothing to compare with. */
static void settings_start(const char *who) {
        int r;

        r = settings_file_read(SETTINGS_FILE, &arg_settings_start);
        if (r >= 0)
                r = settings_file_read(SETTINGS_FILE, &arg_settings_applied);
        if (r < 0) {
                (void) log_warning_errno(r, "%s: failed to read '%s', ignoring: a reload will not apply it", who, SETTINGS_FILE);
                return;
        }
        if (settings_changed(&arg_settings_start, &arg_settings_applied, &arg_settings_start, get_env, false, arg_settings_pending,
                             sizeof(arg_settings_pending)) > 0)
                log_warning("%s: settings %s of '%s' changed while it started: restart it to apply them", who, arg_settings_pending, SETTINGS_FILE);
}

int daemon_start(const char *who, bool root_allowed, Config *ret) {
        const char *bad = NULL;
        int r;

        r = config_parse(get_env, ret, &bad);
        if (r < 0)
                return log_error_errno(r, "%s: invalid setting %s='%s'", who, bad, getenv(bad));
        config_host_apply(ret);
        if (!root_allowed && geteuid() == 0)
                return log_error_errno(EPERM, "%s must not run as root: run it as SANDBOXD_USER (User= of its unit)", who);
        settings_start(who);
        return 0;
}

/* Waits for pid's answer to a reload: its result (0 or -errno), or -ETIMEDOUT. */
static int reload_wait(pid_t pid, const sigset_t *mask) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + RELOAD_TIMEOUT_USEC;

        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC), left = deadline > now ? deadline - now : 0;
                struct timespec ts = {.tv_sec = (time_t) (left / USEC_PER_SEC), .tv_nsec = (long) (left % USEC_PER_SEC) * 1000};
                siginfo_t si;

                if (left == 0)
                        return -ETIMEDOUT;
                if (sigtimedwait(mask, &si, &ts) < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? -ETIMEDOUT : negative_errno();
                }
                if (si.si_pid == pid && si.si_code == SI_QUEUE)
                        return si.si_value.sival_int > 0 ? -si.si_value.sival_int : 0;
        }
}

int daemon_reload_main(int argc, char *argv[]) {
        sigset_t mask;
        char *end = NULL;
        long pid;
        int r;

        if (argc < 2)
                return -1;
        pid = argc == 3 && strcmp(argv[1], "--reload") == 0 ? strtol(argv[2], &end, 10) : 0;
        if (pid <= 1 || pid > INT32_MAX || *end) {
                (void) fprintf(stderr, "Usage: %s [--reload MAINPID]\n", argv[0]);
                return 2;
        }
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGUSR1);
        r = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? negative_errno() : 0;
        if (r >= 0 && sigqueue((pid_t) pid, SIGHUP, (union sigval){.sival_int = RELOAD_VALUE}) < 0)
                r = negative_errno();
        if (r >= 0)
                r = reload_wait((pid_t) pid, &mask);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to reload process %ld: %s", pid, r == -ETIMEDOUT ? "it did not answer in time" : strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}

bool daemon_reload_asked(const struct signalfd_siginfo *si) {
        return si && si->ssi_signo == SIGHUP && si->ssi_code == SI_QUEUE && si->ssi_int == RELOAD_VALUE;
}

/* Only to a sender of this daemon's user or root's (systemd runs ExecReload= as the unit's User=):
 * SIGUSR1 ends a process that did not ask. */
static void reload_answer(const struct signalfd_siginfo *si, int r) {
        if (daemon_reload_asked(si) && (si->ssi_uid == 0 || si->ssi_uid == getuid()) &&
            sigqueue((pid_t) si->ssi_pid, SIGUSR1, (union sigval){.sival_int = r < 0 ? -r : 0}) < 0)
                (void) log_warning_errno(errno, "Failed to answer the reload of process %u, ignoring", si->ssi_pid);
}

/* The file now against what the daemon runs with: the live settings applied into *running, the
 * others named. 0, or -EINVAL (nothing applied) when the file sets a value the daemon refuses. */
static int reload_apply(const char *who, SettingsFile *now, Config *running) {
        char live[NAMES_MAX], pending[NAMES_MAX];
        const char *bad = NULL;
        Config c;
        int r;

        reload_now = now;
        r = config_parse(get_reloaded, &c, &bad);
        if (r < 0)
                return log_error_errno(r, "%s: failed to reload the settings: invalid setting %s in '%s', keeping the running ones", who, bad,
                                       SETTINGS_FILE);
        r = settings_changed(&arg_settings_start, &arg_settings_applied, now, get_env, true, live, sizeof(live));
        if (r >= 0)
                r = settings_changed(&arg_settings_start, &arg_settings_applied, now, get_env, false, pending, sizeof(pending));
        if (r < 0)
                return log_error_errno(r, "%s: failed to reload the settings: too many of them changed, keeping the running ones", who);

        /* What settings_is_live() names, and nothing else. */
        if (running)
                running->api_keys = c.api_keys;

        settings_file_done(&arg_settings_applied);
        arg_settings_applied = *now;
        *now = (SettingsFile){};
        memcpy(arg_settings_pending, pending, sizeof(pending));
        log_info("%s: reloaded the settings of '%s'%s%s", who, SETTINGS_FILE, live[0] && running ? ", applied " : "", running ? live : "");
        if (pending[0])
                log_warning("%s: settings %s of '%s' apply on restart only (systemctl restart sandboxd.target): running with the old values", who,
                            pending, SETTINGS_FILE);
        return 0;
}

int daemon_reload(const char *who, Config *running, const struct signalfd_siginfo *si) {
        SettingsFile now = {};
        int r;

        r = settings_file_read(SETTINGS_FILE, &now);
        if (r < 0)
                (void) log_error_errno(r, "%s: failed to reload the settings: cannot read '%s', keeping the running ones", who, SETTINGS_FILE);
        else
                r = reload_apply(who, &now, running);
        settings_file_done(&now);
        reload_answer(si, r);
        return r;
}

void daemon_notify_status(const char *what) {
        char settings[NAMES_MAX + 64];

        if (settings_status_format(&arg_settings_applied.stamp, arg_settings_pending, settings, sizeof(settings)) < 0)
                settings[0] = 0;
        (void) sd_notifyf(0, "STATUS=%s%s%s", what ? what : "", what && settings[0] ? "; " : "", settings);
}
