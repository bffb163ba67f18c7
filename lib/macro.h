/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define USEC_PER_SEC ((uint64_t) 1000000ULL)
#define USEC_PER_MSEC ((uint64_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

static inline void freep(void *p) {
        free(*(void **) p);
}

/* p = mfree(p): frees and forgets in one step. */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

/* Closes only fd >= 0 and keeps errno, so it can run on any exit path; leaves -1 behind, so that a
 * second call (an explicit one, then the cleanup at the end of the scope) cannot close the number
 * again once another descriptor has taken it. */
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                (void) close(*fd);
                errno = saved;
                *fd = -1;
        }
}

#define cleanup_free __attribute__((cleanup(freep)))
#define cleanup_close __attribute__((cleanup(closep)))
#define cleanup_json __attribute__((cleanup(json_object_putp)))
#define cleanup_stmt __attribute__((cleanup(sqlite3_finalizep)))
#define cleanup_bus_message __attribute__((cleanup(sd_bus_message_unrefp)))
#define cleanup_bus_error __attribute__((cleanup(sd_bus_error_free)))
#define cleanup_bus_slot __attribute__((cleanup(sd_bus_slot_unrefp)))

/* json-c has no pointer-to-pointer unref; json_object_put(NULL) is a no-op. */
#define DEFINE_JSON_CLEANUP                                              \
        static inline void json_object_putp(struct json_object **j) {   \
                (void) json_object_put(*j);                              \
        }

static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
