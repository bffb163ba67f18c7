/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/session-usage.h"

#define USAGE_REQUEST "{\"op\":\"usage\"}\n"
/* pool_exchange() reads in 64 KiB steps: a cap below that would refuse any reply. */
#define USAGE_REPLY_MAX (1 << 20)

/* The integer after "key": in text (NUL-terminated): 0, or -EBADMSG. */
static int find_int(const char *text, const char *key, int64_t *ret) {
        const char *p = strstr(text, key);
        char *end = NULL;
        long long v;

        if (!p)
                return -EBADMSG;
        p += strlen(key);
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoll(p, &end, 10);
        if (errno != 0 || (*end != ',' && *end != '}'))
                return -EBADMSG;
        *ret = v;
        return 0;
}

int session_usage_parse(const char *reply, size_t len, int64_t *ret_cpu_ms) {
        cleanup_free char *text = NULL;
        int64_t status = 0, cpu = 0;

        if (!reply || len == 0 || memchr(reply, 0, len) || reply[0] != '{')
                return -EBADMSG;
        text = strndup(reply, len);
        if (!text)
                return -ENOMEM;
        if (find_int(text, "\"status\":", &status) < 0 || status != 200 || find_int(text, "\"cpu_ms\":", &cpu) < 0)
                return -EBADMSG; /* NOLINT(clang-analyzer-unix.Malloc): text is cleanup_free, unseen by clang-analyzer 14 */
        *ret_cpu_ms = cpu;
        return 0;
}

int session_usage_fetch(const char *socket_path, uint64_t deadline, int64_t *ret_cpu_ms) {
        cleanup_close int fd = -1;
        cleanup_free char *reply = NULL;
        size_t len = 0;
        int r;

        r = pool_connect(socket_path, &fd);
        if (r >= 0)
                r = pool_wait_greeting(fd, deadline);
        if (r >= 0)
                r = pool_exchange(fd, USAGE_REQUEST, strlen(USAGE_REQUEST), -1, deadline, USAGE_REPLY_MAX, &reply, &len);
        if (r < 0)
                return -EHOSTDOWN;
        return session_usage_parse(reply, len, ret_cpu_ms);
}
