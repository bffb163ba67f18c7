/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/fd-util.h"
#include "lib/macro.h"
#include "tests/unit/route-stub.h"
#include "tests/unit/tap.h"

static void test_write_all(void) {
        static char big[200000], back[sizeof(big)];
        int fd = memfd_create("test", MFD_CLOEXEC), pipefd[2];

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (char) (i * 7);
        tap_is_int(fd_write_all(fd, big, sizeof(big)), 0, "all of a large buffer is written");
        tap_is_int(fd_pread_exact(fd, back, sizeof(back), 0), 0, "and read back whole");
        tap_ok(memcmp(big, back, sizeof(big)) == 0, "byte for byte");
        tap_is_int(fd_write_all(fd, big, 0), 0, "nothing to write is not an error");
        (void) close(fd);

        tap_ok(pipe2(pipefd, O_CLOEXEC) == 0, "a pipe");
        (void) close(pipefd[0]);
        (void) signal(SIGPIPE, SIG_IGN);
        tap_is_int(fd_write_all(pipefd[1], "x", 1), -EPIPE, "a pipe nobody reads: -EPIPE");
        (void) close(pipefd[1]);
        tap_is_int(fd_write_all(-1, "x", 1), -EBADF, "a bad descriptor: -EBADF");
}

static void test_pread_exact(void) {
        char buf[16] = "";
        int fd = memfd_create("test", MFD_CLOEXEC);

        (void) fd_write_all(fd, "hello world", 11);
        tap_is_int(fd_pread_exact(fd, buf, 5, 6), 0, "a range inside the file");
        tap_is_str(buf, "world", "is the bytes at that offset");
        tap_is_int(fd_pread_exact(fd, buf, 6, 6), -EPROTO, "past the end of the file: -EPROTO");
        tap_is_int(fd_pread_exact(fd, buf, 0, 100), 0, "nothing to read is not an error");
        (void) close(fd);
        tap_is_int(fd_pread_exact(-1, buf, 1, 0), -EBADF, "a bad descriptor: -EBADF");
}

int main(void) {
        test_write_all();
        test_pread_exact();
        return tap_done();
}
