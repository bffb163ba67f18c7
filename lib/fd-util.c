/* SPDX-License-Identifier: MIT */
/* The read and write loops that the broker, its client and the runner all need. */
#include <errno.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/macro.h"

int fd_write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int fd_pread_exact(int fd, void *buf, size_t len, off_t offset) {
        char *p = buf;

        while (len > 0) {
                ssize_t n = pread(fd, p, len, offset);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EPROTO;
                p += n;
                len -= (size_t) n;
                offset += n;
        }
        return 0;
}
