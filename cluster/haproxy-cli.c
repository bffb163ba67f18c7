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
#include "lib/socket-util.h"

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

/* The fields of a server's line that the watcher reads (0-based; doc/management.txt, "show servers
 * state"): be_id be_name srv_id srv_name srv_addr, twelve numbers from srv_op_state to
 * srv_f_forced_id, srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr
 * srv_agent_addr srv_agent_port. Later versions may add fields after these. */
enum {
        STATE_NAME = 3,
        STATE_ADDR = 4,
        STATE_PORT = 18,
        STATE_AGENT_ADDR = 23,
        STATE_AGENT_PORT = 24,
        STATE_FIELDS = 25,
};

/* text's fields (split at spaces) into fields, each NUL-terminated in copy: how many, at most max. */
static size_t split_fields(char *copy, char **fields, size_t max) {
        size_t n = 0;
        char *save = NULL;

        for (char *f = strtok_r(copy, " \t", &save); f && n < max; f = strtok_r(NULL, " \t", &save))
                fields[n++] = f;
        return n;
}

static int copy_field(char *dst, size_t size, const char *src) {
        size_t len = strlen(src);

        if (len == 0 || len >= size)
                return -EBADMSG;
        memcpy(dst, src, len + 1);
        return 0;
}

int haproxy_server_state_parse(const char *line, HaproxyServerState *ret) {
        char copy[1024], *fields[STATE_FIELDS];
        HaproxyServerState s = {};
        uint16_t port, agent_port;
        size_t n;

        if (line[0] == '#' || strlen(line) >= sizeof(copy))
                return line[0] == '#' ? -ENOENT : -EBADMSG;
        memcpy(copy, line, strlen(line) + 1);
        n = split_fields(copy, fields, ELEMENTSOF(fields));
        /* The format's version, alone on the first line; a blank line. */
        if (n <= 1)
                return -ENOENT;
        if (n < STATE_FIELDS || socket_port_parse(fields[STATE_PORT], &port) < 0 ||
            socket_port_parse(fields[STATE_AGENT_PORT], &agent_port) < 0 || copy_field(s.name, sizeof(s.name), fields[STATE_NAME]) < 0 ||
            copy_field(s.addr, sizeof(s.addr), fields[STATE_ADDR]) < 0 ||
            copy_field(s.agent_addr, sizeof(s.agent_addr), fields[STATE_AGENT_ADDR]) < 0)
                return -EBADMSG;
        s.port = port;
        s.agent_port = agent_port;
        *ret = s;
        return 0;
}
