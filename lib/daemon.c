/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/config.h"
#include "lib/daemon.h"
#include "lib/log.h"

static const char *get_env(const char *name) {
        return getenv(name);
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
        return 0;
}
