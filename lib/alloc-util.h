/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stdlib.h>

/* The array p of *cap elements of size bytes, n of them used, with room for one more: p itself,
 * or a copy twice as large (from first) when it is full, *cap updated; NULL when that fails (p is
 * then as it was). */
static inline void *array_room(void *p, size_t *cap, size_t n, size_t size, size_t first) {
        size_t want = *cap ? *cap * 2 : first;
        void *more;

        if (n < *cap)
                return p;
        more = reallocarray(p, want, size);
        if (more)
                *cap = want;
        return more;
}

/* Room for one more element in array p (cap elements, n used): 0, or -ENOMEM with p as it was. One
 * growth rule for every list read whole, without a limit that would drop any. */
#define ARRAY_GROW(p, cap, n, first)                                               \
        ({                                                                         \
                void *_more = array_room((p), &(cap), (n), sizeof(*(p)), (first)); \
                _more ? ((p) = _more, 0) : -ENOMEM;                                \
        })
