/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* All of buf to fd, across short writes and EINTR. 0 or a negative errno (-EIO if write() made no
 * progress). */
int fd_write_all(int fd, const void *buf, size_t len);

/* Everything fd gives until its end, NUL-terminated, into *ret (the caller's) and its length into
 * *ret_len. EINTR is retried; on a non-blocking fd, EAGAIN waits for it to be readable, at most
 * timeout_ms each time (-1: no limit), then -ETIMEDOUT. More than max bytes: -EFBIG. 0 or a negative
 * errno, nothing returned then. */
int fd_read_all(int fd, size_t max, int timeout_ms, char **ret, size_t *ret_len);

/* Exactly len bytes of fd from offset into buf (pread: the file offset is left alone). 0, a negative
 * errno, or -EPROTO when the file ends first. */
int fd_pread_exact(int fd, void *buf, size_t len, off_t offset);

/* One message of size bytes on sock (SOCK_SEQPACKET or SOCK_DGRAM), with fd alongside when fd >= 0
 * (SCM_RIGHTS; the caller keeps its own copy). flags are sendmsg()'s; MSG_NOSIGNAL is always added.
 * 0 or a negative errno. */
int fd_send_one(int sock, const void *msg, size_t size, int fd, int flags);

/* One message of at most size bytes from sock into buf, and the descriptor that came with it into
 * *ret_fd (-1 if none; the caller's). Descriptors are the receiver's the moment they arrive: every
 * one but the first is closed, and the first too when ret_fd is NULL or the call fails, or the
 * message was empty. Returns the message's length (0: the peer closed, or sent an empty message),
 * -EMSGSIZE if it was longer than size, -EXFULL if more descriptors came than fit, or a negative
 * errno of recvmsg() (-EAGAIN with MSG_DONTWAIT). flags are recvmsg()'s; MSG_CMSG_CLOEXEC is added. */
ssize_t fd_receive_one(int sock, void *buf, size_t size, int flags, int *ret_fd);
