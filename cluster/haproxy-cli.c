/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cluster/haproxy-cli.h"
#include "lib/fd-util.h"
#include "lib/macro.h"

/* HAProxy answers a command in microseconds; a socket that says nothing for this long is stuck. */
#define CLI_TIMEOUT_MS 5000
#define CLI_ANSWER_MAX (4U << 20)

int haproxy_cli(const char *path, const char *command, char **ret, Error *err) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        cleanup_close int fd = -1;
        cleanup_free char *line = NULL;
        size_t len;
        int r;

        if (strpbrk(command, "\n;"))
                return error_set(err, -EINVAL, "a command for HAProxy holds a line break or ';'");
        if (strlen(path) >= sizeof(sa.sun_path))
                return error_set(err, -ENAMETOOLONG, "HAProxy's socket path is too long");
        memcpy(sa.sun_path, path, strlen(path) + 1);
        if (asprintf(&line, "%s\n", command) < 0)
                return error_set(err, -ENOMEM, "out of memory");
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return error_set(err, negative_errno(), "cannot reach HAProxy at %s: %m", path);
        r = fd_write_all(fd, line, strlen(line));
        if (r < 0)
                return error_set(err, r, "cannot send HAProxy a command");
        r = fd_read_all(fd, CLI_ANSWER_MAX, CLI_TIMEOUT_MS, ret, &len);
        if (r < 0)
                return error_set(err, r, "no answer from HAProxy to '%s'", command);
        return 0;
}
