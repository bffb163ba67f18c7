/* SPDX-License-Identifier: MIT */
/* The workers' and the pool manager's side of the broker. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/error-count.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "nspawn/broker/broker-client.h"
#include "nspawn/sandbox.h"

/* Non-blocking: a broker that does not accept (its backlog full) is an error now, not a wait. */
static int broker_connect(int *ret) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = BROKER_SOCKET};
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = negative_errno();

                (void) close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

/* Until fd has events, or deadline (CLOCK_MONOTONIC) passed: 0 or -ETIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd p = {.fd = fd, .events = events};
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                if (now >= deadline)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (r > 0)
                        return 0;
                if (r < 0 && errno != EINTR)
                        return negative_errno();
        }
}

static int send_request(int fd, const BrokerRequest *req, int pass_fd, uint64_t deadline) {
        for (;;) {
                int r = fd_send_one(fd, req, sizeof(*req), pass_fd, MSG_DONTWAIT);

                if (r != -EAGAIN)
                        return r;
                r = wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
        }
}

/* One reply by deadline; *ret_fd (if not NULL) gets the fd that came with it, or -1. */
static int recv_reply(int fd, BrokerReply *ret, int *ret_fd, uint64_t deadline) {
        cleanup_close int got = -1;
        ssize_t n;

        for (;;) {
                int r;

                n = fd_receive_one(fd, ret, sizeof(*ret), MSG_DONTWAIT, &got);
                if (n != -EAGAIN)
                        break;
                r = wait_fd(fd, POLLIN, deadline);
                if (r < 0)
                        return r;
        }
        if (n < 0 && n != -EMSGSIZE && n != -EXFULL)
                return (int) n;
        if (n != (ssize_t) sizeof(*ret))
                return -EPROTO; /* 0: the broker closed the connection */
        ret->message[sizeof(ret->message) - 1] = 0;
        ret->result[sizeof(ret->result) - 1] = 0;
        if (ret_fd)
                *ret_fd = TAKE_FD(got);
        return 0;
}

static void count_failure(BrokerOp op, int r) {
        ErrorCount which = broker_failure_count(op, r);

        if (which != _ERROR_COUNT_NONE)
                error_count_inc(which);
}

/* A request and its reply on *conn, connecting (once more if the broker restarted and the request
 * may be sent twice) as needed, all within the op's deadline; *ret_fd (if not NULL) gets the descriptor the reply carried, or -1. A
 * connection whose reply did not come is closed: a late reply must not be taken for the next one's. */
static int call_once_more(int *conn, const BrokerRequest *req, int pass_fd, BrokerReply *ret, int *ret_fd) {
        uint64_t timeout = broker_op_timeout_usec((BrokerOp) req->op, req->timeout_s);
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        /* A tool call in flight fails with its broker: sent again, it would run twice. */
        int attempts = req->op == BROKER_RUN_TOOL ? 1 : 2;
        int r = -ENOTCONN;

        for (int attempt = 0; attempt < attempts; attempt++) {
                if (*conn < 0) {
                        r = broker_connect(conn);
                        if (r < 0)
                                return r;
                }
                r = send_request(*conn, req, pass_fd, deadline);
                if (r >= 0)
                        r = recv_reply(*conn, ret, ret_fd, deadline);
                if (r >= 0)
                        return ret->error;
                closep(conn);
                *conn = -1;
                if (r == -ETIMEDOUT)
                        break;
        }
        if (r == -ETIMEDOUT)
                (void) snprintf(ret->message, sizeof(ret->message), "the broker did not answer within %" PRIu64 " s",
                                timeout / USEC_PER_SEC);
        return r;
}

static int call(int *conn, const BrokerRequest *req, int pass_fd, BrokerReply *ret, int *ret_fd) {
        int r = call_once_more(conn, req, pass_fd, ret, ret_fd);

        count_failure((BrokerOp) req->op, r);
        return r;
}

static BrokerRequest request(BrokerOp op, const char *id) {
        BrokerRequest req = {.magic = BROKER_MAGIC, .op = op};

        if (id)
                (void) snprintf(req.id, sizeof(req.id), "%s", id);
        return req;
}

/* The one place the reply's words on the wire become the caller's Error: the broker's reason, or
 * the errno's when there is none (the broker was not reached). Returns r. */
static int error_from_reply(const BrokerReply *rep, int r, Error *reterr) {
        r = r < 0 ? r : -EIO;
        return error_set(reterr, r, "%s", rep->message[0] ? rep->message : strerror(-r));
}

int broker_start_warm(int *conn, const char *id, int listen_fd, Error *reterr) {
        BrokerRequest req = request(BROKER_START_WARM, id);
        BrokerReply rep = {};
        int r = call(conn, &req, listen_fd, &rep, NULL);

        return r < 0 ? error_from_reply(&rep, r, reterr) : 0;
}

int broker_session_start(int *conn, const char *id, bool create, int listen_fd, Error *reterr) {
        BrokerRequest req = request(create ? BROKER_SESSION_CREATE : BROKER_SESSION_START, id);
        BrokerReply rep = {};
        int r = call(conn, &req, listen_fd, &rep, NULL);

        return r < 0 ? error_from_reply(&rep, r, reterr) : 0;
}

int broker_session_stop(int *conn, const char *id, bool delete, Error *reterr) {
        BrokerRequest req = request(delete ? BROKER_SESSION_DELETE : BROKER_SESSION_STOP, id);
        BrokerReply rep = {};
        int r = call(conn, &req, -1, &rep, NULL);

        return r < 0 ? error_from_reply(&rep, r, reterr) : 0;
}

int broker_kill(int *conn, const char *id) {
        BrokerRequest req = request(BROKER_KILL, id);
        BrokerReply rep;

        return call(conn, &req, -1, &rep, NULL);
}

int broker_run_tool(const char *id, const char *request_id, const char *image, unsigned timeout_s,
                    const char *input, size_t input_len, SandboxResult *ret, Error *reterr) {
        BrokerRequest req = request(BROKER_RUN_TOOL, id);
        cleanup_close int conn = -1, in = -1, out = -1;
        cleanup_free char *reply = NULL, *diag = NULL;
        /* Large for a stack that serves many waiting requests: one per thread, which runs one at once. */
        static _Thread_local BrokerReply rep;
        int r;

        (void) snprintf(req.request_id, sizeof(req.request_id), "%s", request_id);
        (void) snprintf(req.image, sizeof(req.image), "%s", image);
        req.timeout_s = timeout_s;
        memset(&rep, 0, sizeof(rep));

        in = memfd_create("sandboxd-tool-input", MFD_CLOEXEC);
        if (in < 0)
                return negative_errno();
        if (write(in, input, input_len) != (ssize_t) input_len)
                return errno > 0 ? -errno : -EIO;

        r = call(&conn, &req, in, &rep, &out);
        if (r < 0)
                return error_from_reply(&rep, r, reterr);
        if (out < 0 || rep.reply_len > TOOL_MAX_REPLY_BYTES + strlen(TOOL_READY_MARKER) || rep.diag_len > (1U << 20)) {
                count_failure(BROKER_RUN_TOOL, -EPROTO);
                return -EPROTO;
        }

        reply = malloc(rep.reply_len + 1);
        diag = malloc(rep.diag_len + 1);
        if (!reply || !diag)
                return -ENOMEM; /* NOLINT(clang-analyzer-unix.Malloc): reply and diag are cleanup_free, unseen by clang-analyzer 14 */
        r = fd_pread_exact(out, reply, rep.reply_len, 0);
        if (r >= 0)
                r = fd_pread_exact(out, diag, rep.diag_len, (off_t) rep.reply_len);
        if (r < 0)
                return r;
        reply[rep.reply_len] = 0;
        diag[rep.diag_len] = 0;

        *ret = (SandboxResult){
                .reply = TAKE_PTR(reply),
                .reply_len = rep.reply_len,
                .reply_truncated = rep.reply_truncated,
                .diag = TAKE_PTR(diag),
                .diag_len = rep.diag_len,
                .duration_usec = rep.duration_usec,
                .cpu_usec = rep.cpu_usec,
                .memory_peak_bytes = rep.memory_peak_bytes,
                .exit_code = rep.exit_code,
                .exit_status = rep.exit_status,
                .ready = rep.ready,
                .killed_unready = rep.killed_unready,
                .killed_timeout = rep.killed_timeout,
        };
        (void) snprintf(ret->result, sizeof(ret->result), "%s", rep.result);
        return 0;
}
