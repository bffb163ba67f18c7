/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "lib/listen-util.h"
#include "lib/log.h"
#include "lib/macro.h"

int listen_unix(const char *who, const char *path, int type, mode_t mode, int backlog) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
        const char *kind_name = kind == SOCK_SEQPACKET ? "SOCK_SEQPACKET" : "stream";
        cleanup_close int fd = -1;
        int n = sd_listen_fds(1);

        if (n == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, kind, 1, NULL, 0) > 0)
                return SD_LISTEN_FDS_START;
        if (n != 0)
                return log_error_errno(EINVAL, "%s: expected one listening %s socket from systemd, got %d socket(s)", who, kind_name, n);
        if (strlen(path) >= sizeof(sa.sun_path))
                return log_error_errno(ENAMETOOLONG, "%s: %s: too long for a socket's path", who, path);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return log_error_errno(errno, "%s: failed to create its socket", who);
        /* One left by an earlier run of the daemon: nothing listens on it any more. */
        (void) unlink(path);
        if (bind(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(path, mode) < 0 || listen(fd, backlog) < 0)
                return log_error_errno(errno, "%s: failed to listen on %s", who, path);
        return TAKE_FD(fd);
}
