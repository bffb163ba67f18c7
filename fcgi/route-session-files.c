/* SPDX-License-Identifier: MIT */
/* A session's files (README, "Sessions"): GET, PUT and DELETE /v1/sessions/{id}/files/{path}, the
 * listing GET /v1/sessions/{id}/files, and a new session's files. Each is one operation on the
 * session's runner (nspawn/runner/session-files.c), with the session's turn held.
 *
 * A download is streamed: the runner sends the file from its disk as it reads it, and the worker
 * passes each piece on to nginx (which buffers it to disk for a slow client) before it reads the
 * next, so neither holds more than a piece of it. A file over the cap is refused before a byte of
 * it is read or sent. */
#include <errno.h>
#include <fcgiapp.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/sessions.h"
#include "fcgi/messages.h"
#include "fcgi/reply.h"
#include "fcgi/request.h"
#include "fcgi/route-session-files.h"
#include "fcgi/route.h"
#include "fcgi/session-call.h"
#include "fcgi/session-machine.h"
#include "fcgi/session-quota.h"
#include "fcgi/session-route.h"
#include "lib/b64.h"
#include "lib/config.h"
#include "lib/error.h"
#include "lib/fd-wait.h"
#include "lib/json-util.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "lib/time-util.h"
#include "nspawn/pool/pool-socket.h"
#include "nspawn/pool/pool.h"

DEFINE_JSON_CLEANUP

/* A file operation's answer; for a download, the longest the runner may send nothing. */
#define FILE_OP_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* A download's piece, and the most its reply line (a JSON object of a few dozen bytes) may take. */
#define DOWNLOAD_CHUNK (64U << 10)

/* One file operation on the session's runner, with the session's turn held: the reply object.
 * Errors are answered here: -errno then means answered. */
static int file_op(Request *req, Context *ctx, const char *id, struct json_object *op, const void *data, size_t len, struct json_object **ret) {
        cleanup_close int fd = -1;
        Error err = {};
        Session s;
        int turn = -1;
        uint64_t queue_usec = 0;
        int r = session_turn_take(req, ctx, id, &turn, &queue_usec);

        if (r < 0) {
                (void) session_turn_error(req, ctx, r);
                return r;
        }
        r = session_machine_ready(req, ctx, id, &s, &fd, &err);
        if (r >= 0) {
                /* A listing's reply is as large as the directory is: bounded as a file is. */
                RunnerCall call = {.request = op, .extra = data, .extra_len = len, .client_fd = -1, .deadline = now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC, .max_reply = ctx->config->session_upload_bytes + (64U << 10)};

                r = session_runner_call(fd, &call, ret);
                if (r < 0 && r != -EMSGSIZE)
                        session_machine_lost(req, ctx, id, "its machine did not answer a file operation", true);
                (void) db_session_used(ctx->db, id, 0);
        }
        session_turn_give(&turn);
        if (r >= 0)
                return 0;
        /* Too large to move is the file's size, not a fault of the machine's reply. */
        if (r == -EMSGSIZE)
                (void) reply_error(req, 413, MSG_SESSION_FILE_TOO_LARGE, ctx->config->session_upload_bytes);
        else
                (void) session_call_error(req, ctx, r, &err);
        return r;
}

static struct json_object *op_json(const char *op, const char *key, const char *value) {
        cleanup_json struct json_object *o = json_object_new_object();

        if (!o || json_object_object_add(o, "op", json_object_new_string(op)) < 0 ||
            (key && json_object_object_add(o, key, json_object_new_string(value)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

/* A file path of the URL, checked as every path a client names is: 0, or answered (400). */
static int file_path_check(Request *req, const char *path) {
        int r = path_relative_check(path, strlen(path), NULL, 0);

        if (r == -EXDEV)
                return reply_error(req, 400, MSG_PATH_ESCAPES, path), -EINVAL;
        if (r < 0)
                return reply_error(req, 400, MSG_SESSION_PATH), -EINVAL;
        return 0;
}

/* A download in flight: the runner's connection and what was read from it but not yet passed on. */
typedef struct Download {
        int fd;            /* the runner's connection, non-blocking */
        int client_fd;     /* nginx's connection, watched for its hang-up */
        uint64_t deadline; /* moved on with every piece: a stall, not a slow file, ends it */
        char *buf;         /* DOWNLOAD_CHUNK bytes */
        size_t have;       /* bytes of the file at the start of buf */
} Download;

/* Up to n bytes from the runner: how many (0: it closed), -ETIME, -ECANCELED (the client went). */
static ssize_t download_read(Download *d, void *p, size_t n) {
        for (;;) {
                ssize_t k = read(d->fd, p, n);
                int r;

                if (k >= 0) {
                        d->deadline = now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC;
                        return k;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                r = fd_wait(d->fd, POLLIN, d->client_fd, d->deadline);
                if (r < 0)
                        return r;
        }
}

/* The runner's reply to a get: its line (a JSON object) into *ret; the file's bytes that came
 * with it stay at the start of d->buf. -EBADMSG for a line that is none, or too long. */
static int download_reply(Download *d, struct json_object **ret) {
        struct json_object *o = NULL;
        size_t len = 0, end;
        char *nl = NULL;
        int r;

        while (!nl && len < DOWNLOAD_CHUNK) {
                ssize_t n = download_read(d, d->buf + len, DOWNLOAD_CHUNK - len);

                if (n < 0)
                        return (int) n;
                if (n == 0)
                        break; /* a refusal: its line is all there is */
                nl = memchr(d->buf + len, '\n', (size_t) n);
                len += (size_t) n;
        }
        if (len == 0)
                return -ECONNRESET; /* the runner died before it answered */
        end = nl ? (size_t) (nl - d->buf) : len;
        if (!nl && len == DOWNLOAD_CHUNK)
                return -EBADMSG;
        r = session_reply_parse(d->buf, len, &o);
        if (r < 0)
                return r;
        d->have = nl ? len - end - 1 : 0;
        memmove(d->buf, d->buf + end + (nl ? 1 : 0), d->have);
        *ret = o;
        return 0;
}

/* The file's size bytes from the runner to the client, a piece at a time. -EIO when the client
 * went; -ENODATA when the runner's bytes ended first (the code shortened the file), -EBADMSG when
 * it sent more; -ETIME, or the read's errno. */
static int download_body(Request *req, Download *d, uint64_t size) {
        uint64_t got = d->have;
        int r = reply_body_begin(req, 200, "application/octet-stream", size);

        if (r < 0)
                return r;
        if (d->have > size)
                return -EBADMSG;
        r = reply_body_write(req, d->buf, d->have);
        while (r >= 0 && got < size) {
                ssize_t n = download_read(d, d->buf, size - got < DOWNLOAD_CHUNK ? (size_t) (size - got) : DOWNLOAD_CHUNK);

                if (n <= 0)
                        return n == 0 ? -ENODATA : (int) n;
                r = reply_body_write(req, d->buf, (size_t) n);
                got += (uint64_t) n;
        }
        return r;
}

/* A download that failed after its status went out: the record says why, and nginx's connection
 * is cut so that the client sees the body end short of its length, never a file that looks whole. */
static int download_broken(Request *req, Context *ctx, const char *id, int r) {
        if (req->capture)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE); /* nothing sent: the tool's own error */
        (void) shutdown(req->fcgx->ipcFd, SHUT_RDWR);
        if (r == -EIO || r == -ECANCELED)
                return reply_abandoned(req);
        if (r == -ETIME)
                session_machine_lost(req, ctx, id, "its machine stopped sending a file", true);
        free(req->error);
        req->error = strdup(r == -ENODATA ? "the file was shortened while it was sent: the download was cut" : MSG_SANDBOX_UNREADABLE);
        req->status = 502;
        return 0;
}

/* With the session's turn and its runner's connection d->fd: the get, its reply, the file. */
static int download_serve(Request *req, Context *ctx, const SessionRoute *route, Download *d) {
        cleanup_json struct json_object *op = op_json("get", "path", route->path), *reply = NULL;
        cleanup_free char *line = NULL;
        size_t cap = ctx->config->session_upload_bytes;
        const char *text;
        int64_t size;
        int r;

        /* The cap goes with the get: the runner refuses a larger file without reading it. */
        if (!op || json_object_object_add(op, "max_bytes", json_object_new_int64((int64_t) cap)) < 0)
                return -ENOMEM;
        /* The object on one line, as session_runner_call() sends it: the runner splits at the newline. */
        text = json_object_to_json_string_ext(op, JSON_C_TO_STRING_PLAIN);
        r = text ? asprintf(&line, "%s\n", text) : -1;
        if (r < 0)
                return -ENOMEM;
        r = pool_send_request(d->fd, line, (size_t) r, d->client_fd, d->deadline);
        if (r >= 0)
                r = download_reply(d, &reply);
        if (r < 0) {
                if (r != -ECANCELED)
                        session_machine_lost(req, ctx, route->id, "its machine did not answer a file operation", true);
                return r == -ECANCELED ? reply_abandoned(req) : session_call_error(req, ctx, r, &(Error){});
        }
        size = json_int(reply, "size", -1);
        if (json_int(reply, "status", 0) == 413 || size > (int64_t) cap)
                return reply_error(req, 413, MSG_SESSION_FILE_TOO_LARGE, cap);
        /* A capture (an MCP tool's) holds the file in memory: past its own cap the file is not read. */
        if (req->capture && req->capture->bytes_max > 0 && size > (int64_t) req->capture->bytes_max)
                return reply_error(req, 413, MSG_MCP_FILE_LARGE, (size_t) size, (unsigned) req->capture->bytes_max);
        if (json_int(reply, "status", 0) >= 300)
                return session_runner_error(req, reply);
        if (json_int(reply, "status", 0) != 200 || size < 0)
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        r = download_body(req, d, (uint64_t) size);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return download_broken(req, ctx, route->id, r);
        session_event(ctx->db, route->id, "download", req->id, route->path);
        return 0;
}

/* GET of a file: its bytes as they are on the session's disk, streamed. */
static int session_download(Request *req, Context *ctx, const SessionRoute *route) {
        Download d = {.fd = -1, .client_fd = req->fcgx ? req->fcgx->ipcFd : -1};
        uint64_t queue_usec = 0;
        Error err = {};
        Session s;
        int turn = -1;
        int r = session_turn_take(req, ctx, route->id, &turn, &queue_usec);

        if (r < 0)
                return session_turn_error(req, ctx, r);
        r = session_machine_ready(req, ctx, route->id, &s, &d.fd, &err);
        if (r >= 0) {
                d.buf = malloc(DOWNLOAD_CHUNK);
                d.deadline = now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC;
                r = d.buf ? download_serve(req, ctx, route, &d) : -ENOMEM;
                (void) db_session_used(ctx->db, route->id, 0);
        } else
                r = session_call_error(req, ctx, r, &err);
        free(d.buf);
        /* The runner's connection closes before the turn goes: a runner still sending sees the
         * worker gone and serves the next operation. */
        closep(&d.fd);
        session_turn_give(&turn);
        return r;
}

/* PUT, GET or DELETE of a file. */
int route_session_file(Request *req, Context *ctx, const SessionRoute *route) {
        cleanup_json struct json_object *op = NULL, *reply = NULL, *out = NULL;
        bool put = strcmp(req->method, "PUT") == 0;
        size_t len = req->body ? req->body_len : 0;
        int r;

        if (file_path_check(req, route->path) < 0)
                return 0;
        if (req->body_short)
                return reply_error(req, 400, MSG_BODY_SHORT);
        if (strcmp(req->method, "GET") == 0)
                return session_download(req, ctx, route);
        if (put && session_disk_reserve(req, ctx) < 0)
                return 0; /* answered: 507 */
        op = op_json(put ? "put" : "delete", "path", route->path);
        out = json_object_new_object();
        if (!op || !out)
                return -ENOMEM;
        if (file_op(req, ctx, route->id, op, req->body, len, &reply) < 0)
                return 0;
        if (json_int(reply, "status", 0) >= 300)
                return session_runner_error(req, reply);
        if (put && json_int(reply, "size", -1) != (int64_t) len)
                return reply_error(req, 502, MSG_SESSION_UPLOAD_SHORT, (long long) json_int(reply, "size", -1), len);
        session_event(ctx->db, route->id, put ? "upload" : "remove", req->id, route->path);
        if (json_object_object_add(out, "path", json_object_new_string(route->path)) < 0)
                return -ENOMEM;
        if (put)
                r = json_object_object_add(out, "size", json_object_new_int64(json_int(reply, "size", 0)));
        else
                r = json_object_object_add(out, "deleted", json_object_new_boolean(1));
        if (r < 0)
                return -ENOMEM;
        return reply_json(req, put ? 201 : 200, out);
}

/* GET of the files of a directory, one level. */
int route_session_files(Request *req, Context *ctx, const SessionRoute *route) {
        cleanup_json struct json_object *op = NULL, *reply = NULL, *out = json_object_new_object();
        struct json_object *files = NULL;
        char dir[PATH_MAX_BYTES];
        int r = query_get(req->query, "dir", dir, sizeof(dir));

        if (!out)
                return -ENOMEM;
        if (r < 0)
                return reply_error(req, 400, MSG_SESSION_DIR);
        if (r == 0 || strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
                dir[0] = 0;
        if (dir[0]) {
                size_t n = strlen(dir);

                while (n > 1 && dir[n - 1] == '/')
                        dir[--n] = 0;
                if (path_relative_check(dir, n, NULL, 0) == -EXDEV)
                        return reply_error(req, 400, MSG_PATH_ESCAPES, dir);
                if (path_relative_check(dir, n, NULL, 0) < 0)
                        return reply_error(req, 400, MSG_SESSION_DIR);
        }
        op = op_json("list", "dir", dir);
        if (!op)
                return -ENOMEM;
        if (file_op(req, ctx, route->id, op, NULL, 0, &reply) < 0)
                return 0;
        if (json_int(reply, "status", 0) >= 300)
                return session_runner_error(req, reply);
        if (!json_object_object_get_ex(reply, "files", &files) || !json_object_is_type(files, json_type_array))
                return reply_error(req, 502, MSG_SANDBOX_UNREADABLE);
        session_event(ctx->db, route->id, "list", req->id, dir[0] ? dir : ".");
        if (json_object_object_add(out, "files", json_object_get(files)) < 0)
                return -ENOMEM;
        return reply_json(req, 200, out);
}

/* One of a new session's files (validated already, so only an allocation or the machine can fail)
 * written into it: 0, or -errno with *err saying why (-EIO: the runner refused it). */
int session_put_file(const char *id, struct json_object *e, Error *err) {
        struct json_object *p = NULL, *content = NULL, *op, *reply = NULL;
        cleanup_free uint8_t *raw = NULL;
        cleanup_close int fd = -1;
        size_t raw_len = 0;
        int r;

        (void) json_object_object_get_ex(e, "path", &p);
        (void) json_object_object_get_ex(e, "content_b64", &content);
        r = b64_decode(json_object_get_string(content), (size_t) json_object_get_string_len(content), &raw, &raw_len);
        if (r < 0)
                return error_set(err, r, "could not write '%s': %s", json_object_get_string(p), strerror(-r));
        op = op_json("put", "path", json_object_get_string(p));
        r = op ? session_machine_connect(id, &fd) : -ENOMEM;
        if (r >= 0) {
                RunnerCall call = {.request = op, .extra = raw, .extra_len = raw_len, .client_fd = -1, .deadline = now_usec(CLOCK_MONOTONIC) + FILE_OP_TIMEOUT_USEC, .max_reply = 64U << 10};

                r = session_runner_call(fd, &call, &reply);
        }
        json_object_put(op);
        if (r >= 0 && (json_int(reply, "status", 0) != 201 || json_int(reply, "size", -1) != (int64_t) raw_len)) {
                struct json_object *m = json_field(reply, "error");

                r = error_set(err, -EIO, "could not write '%s': %s", json_object_get_string(p),
                              json_object_is_type(m, json_type_string) ? json_object_get_string(m) : "no reason given");
        } else if (r < 0)
                r = error_set(err, r, "could not write '%s': %s", json_object_get_string(p), strerror(-r));
        json_object_put(reply);
        return r;
}
