/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* All of buf to fd, across short writes and EINTR. 0 or a negative errno (-EIO if write() made no
 * progress). */
int fd_write_all(int fd, const void *buf, size_t len);

/* Exactly len bytes of fd from offset into buf (pread: the file offset is left alone). 0, a negative
 * errno, or -EPROTO when the file ends first. */
int fd_pread_exact(int fd, void *buf, size_t len, off_t offset);
