/* SPDX-License-Identifier: MIT */
/* A session's files, on its persistent disk. The code of the session made whatever is there, links
 * included: every path is resolved with openat2() beneath the workspace (RESOLVE_BENEATH: no
 * absolute link, no ".." above it; RESOLVE_NO_MAGICLINKS: no /proc/<pid>/fd link), and only single
 * names are ever created or removed, in a directory opened that way. The caller has taken the
 * sandbox user's file-system identity: what the code could not do, these cannot either. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/fd-util.h"
#include "lib/macro.h"
#include "lib/path-util.h"
#include "nspawn/runner/session-files.h"

/* A download's piece: sendfile() moves at most this much at a time. */
#define CHUNK (1U << 20)
/* How long a download may find the worker taking nothing before it is given up. */
#define SEND_STALL_S 120

static int open_beneath(int ws, const char *path, int flags) {
        struct open_how how = {.flags = (uint64_t) (flags | O_CLOEXEC), .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
        int fd = (int) syscall(SYS_openat2, ws, path, &how, sizeof(how));

        return fd < 0 ? -errno : fd;
}

static const char *text(struct json_object *p) {
        return json_object_is_type(p, json_type_string) ? json_object_get_string(p) : json_object_to_json_string(p);
}

static int escapes(Error *reterr, struct json_object *p) {
        return error_set_status(reterr, 400, -EINVAL, "file path escapes working directory: '%s'", text(p));
}

/* The client's path p, checked as the execution's files are, into rel (normal form, relative). */
static int relative(struct json_object *p, char *rel, size_t size, Error *reterr) {
        if (!json_object_is_type(p, json_type_string) ||
            path_relative_check(json_object_get_string(p), (size_t) json_object_get_string_len(p), rel, size) < 0)
                return escapes(reterr, p);
        return 0;
}

/* What a failed resolution of p means to the client: out of the workspace (a link the code made),
 * not there, or the runner's own failure. */
static int resolve_failed(int r, struct json_object *p, const char *absent, Error *reterr) {
        if (r == -EXDEV || r == -ELOOP)
                return escapes(reterr, p);
        if (r == -ENOENT || r == -ENOTDIR)
                return error_set_status(reterr, 404, r, "%s", absent);
        return error_set_status(reterr, 400, r, "could not open '%s': %s", text(p), strerror(-r));
}

static int no_space(int r, struct json_object *p, Error *reterr) {
        if (r == -ENOSPC || r == -EDQUOT)
                return error_set_status(reterr, 507, r, "no space left on the session's disk");
        return error_set_status(reterr, 400, r, "could not write '%s': %s", text(p), strerror(-r));
}

/* The directory above rel ("a/b" of "a/b/c"), opened beneath ws, each one made when create is set
 * and it is missing. Only single names are made, in directories resolved beneath ws. */
static int open_parent(int ws, char *rel, bool create) {
        int fd = open_beneath(ws, ".", O_PATH | O_DIRECTORY);

        for (char *slash = strchr(rel, '/'); fd >= 0 && slash; slash = strchr(slash + 1, '/')) {
                char *name = slash;

                while (name > rel && name[-1] != '/')
                        name--;
                *slash = 0;
                if (create && mkdirat(fd, name, 0777) < 0 && errno != EEXIST) {
                        int r = -errno;

                        *slash = '/';
                        (void) close(fd);
                        return r;
                }
                (void) close(fd);
                fd = open_beneath(ws, rel, O_PATH | O_DIRECTORY);
                *slash = '/';
        }
        return fd;
}

static const char *base_name(const char *rel) {
        const char *s = strrchr(rel, '/');

        return s ? s + 1 : rel;
}

/* content, whole, as rel: a temporary file in the same directory, synced, renamed over it. */
static int put(int ws, struct json_object *p, char *rel, const void *content, size_t len, Error *reterr) {
        cleanup_close int dir = -1, old = -1, fd = -1;
        char tmp[64];
        struct stat st;
        int r;

        dir = open_parent(ws, rel, true);
        if (dir == -ENOSPC || dir == -EDQUOT)
                return no_space(dir, p, reterr);
        if (dir < 0)
                return dir == -EXDEV || dir == -ELOOP ? escapes(reterr, p) : no_space(dir, p, reterr);
        old = open_beneath(ws, rel, O_PATH);
        if (old == -EXDEV || old == -ELOOP)
                return escapes(reterr, p);
        if (old >= 0 && fstat(old, &st) == 0 && S_ISDIR(st.st_mode))
                return error_set_status(reterr, 400, -EISDIR, "'%s' is a directory", text(p));

        for (unsigned i = 0; fd < 0; i++) {
                (void) snprintf(tmp, sizeof(tmp), ".sandboxd-put-%d-%u", getpid(), i);
                fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 && (errno != EEXIST || i == 100))
                        return no_space(-errno, p, reterr);
        }
        r = fd_write_all(fd, content, len);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(dir, tmp, dir, base_name(rel)) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dir, tmp, 0);
                return r == -EISDIR ? error_set_status(reterr, 400, r, "'%s' is a directory", text(p)) : no_space(r, p, reterr);
        }
        return 0;
}

/* The file rel opened for reading, its size at the open in *ret_size: the reader sends that many
 * bytes from the open file (session_file_send()), never holding them. A file over max_bytes (< 0:
 * none) is refused with 413 before a byte of it is read: a sparse file of terabytes costs nothing. */
static int get(int ws, struct json_object *p, const char *rel, int64_t max_bytes, int *ret_fd, uint64_t *ret_size, Error *reterr) {
        cleanup_close int fd = open_beneath(ws, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        struct stat st;

        if (fd < 0)
                return resolve_failed(fd, p, "file not found", reterr);
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return error_set_status(reterr, 400, -EISDIR, "'%s' is a directory", text(p));
        if (!S_ISREG(st.st_mode))
                return error_set_status(reterr, 400, -EINVAL, "'%s' is not a regular file", text(p));
        if (max_bytes >= 0 && st.st_size > max_bytes)
                return error_set_status(reterr, 413, -EFBIG, "'%s' is larger than %" PRId64 " bytes", text(p), max_bytes);
        *ret_fd = TAKE_FD(fd);
        *ret_size = (uint64_t) st.st_size;
        return 0;
}

int session_file_send(int conn, int fd, uint64_t size) {
        /* A worker that takes nothing for this long, yet keeps the connection, is taken for gone:
         * the runner serves the session's next operation instead. */
        struct timeval stall = {.tv_sec = SEND_STALL_S};
        off_t off = 0;

        if (setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof(stall)) < 0)
                return -errno;
        while ((uint64_t) off < size) {
                /* From the page cache to the socket: no copy of the file in the runner at all. */
                ssize_t n = sendfile(conn, fd, &off, size - (uint64_t) off > CHUNK ? CHUNK : (size_t) (size - (uint64_t) off));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                if (n == 0)
                        return -ENODATA; /* the code shortened it meanwhile: the worker sees it end early */
        }
        return 0;
}

static const char *type_name(mode_t mode) {
        if (S_ISREG(mode))
                return "file";
        if (S_ISDIR(mode))
                return "directory";
        return S_ISLNK(mode) ? "symlink" : "other";
}

static int by_path(const void *a, const void *b) {
        struct json_object *x = *(struct json_object *const *) a, *y = *(struct json_object *const *) b, *px = NULL, *py = NULL;

        (void) json_object_object_get_ex(x, "path", &px);
        (void) json_object_object_get_ex(y, "path", &py);
        return strcmp(json_object_get_string(px), json_object_get_string(py));
}

/* One entry of a listing: a link is itself, not what it points at. */
static int list_entry(int dir, const char *rel, const char *name, struct json_object *files) {
        cleanup_free char *path = NULL;
        struct json_object *e;
        struct stat st;
        struct tm tm;
        char when[32];

        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno; /* gone meanwhile */
        if (asprintf(&path, "%s%s%s", rel, *rel ? "/" : "", name) < 0)
                return -ENOMEM;
        if (!gmtime_r(&st.st_mtim.tv_sec, &tm) || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return -EOVERFLOW;
        e = json_object_new_object();
        if (!e || json_object_array_add(files, e) < 0) {
                (void) json_object_put(e);
                return -ENOMEM;
        }
        if (json_object_object_add(e, "path", json_object_new_string(path)) < 0 ||
            json_object_object_add(e, "size", json_object_new_int64((int64_t) st.st_size)) < 0 ||
            json_object_object_add(e, "type", json_object_new_string(type_name(st.st_mode))) < 0 ||
            json_object_object_add(e, "modified", json_object_new_string(when)) < 0)
                return -ENOMEM;
        return 0;
}

/* One level of directory rel ("" for the workspace itself), by path. */
static int list(int ws, struct json_object *p, const char *rel, struct json_object *files, Error *reterr) {
        int fd = open_beneath(ws, *rel ? rel : ".", O_RDONLY | O_DIRECTORY);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd == -ENOTDIR)
                return error_set_status(reterr, 400, fd, "'%s' is not a directory", text(p));
        if (fd < 0)
                return resolve_failed(fd, p, "directory not found", reterr);
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return -errno;
        }
        while (r >= 0 && (errno = 0, de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        r = list_entry(fd, rel, de->d_name, files);
        if (r >= 0 && errno != 0)
                r = -errno;
        (void) closedir(d);
        if (r >= 0)
                json_object_array_sort(files, by_path);
        return r;
}

/* Everything in directory name of dir, then the directory. Links are removed, never followed. */
static int remove_tree(int dir, const char *name) {
        int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return -errno;
        }
        while (r >= 0 && (errno = 0, de = readdir(d))) {
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = errno == ENOENT ? 0 : -errno;
                else if (S_ISDIR(st.st_mode))
                        r = remove_tree(fd, de->d_name);
                else if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT)
                        r = -errno;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        (void) closedir(d);
        if (r >= 0 && unlinkat(dir, name, AT_REMOVEDIR) < 0)
                r = -errno;
        return r;
}

static int remove_path(int ws, struct json_object *p, char *rel, Error *reterr) {
        cleanup_close int dir = open_parent(ws, rel, false);
        const char *name = base_name(rel);
        struct stat st;
        int r;

        if (dir < 0)
                return resolve_failed(dir, p, "file not found", reterr);
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return resolve_failed(-errno, p, "file not found", reterr);
        if (S_ISDIR(st.st_mode))
                r = remove_tree(dir, name);
        else
                r = unlinkat(dir, name, 0) < 0 ? -errno : 0;
        if (r < 0)
                return error_set_status(reterr, 400, r, "could not delete '%s': %s", text(p), strerror(-r));
        return 0;
}

/* A get's "max_bytes": the most the worker takes (absent: no limit). */
static int max_bytes_of(struct json_object *req, int64_t *ret, Error *reterr) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(req, "max_bytes", &v))
                return 0;
        errno = 0;
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 || errno != 0)
                return error_set_status(reterr, 400, -EINVAL, "max_bytes must be a number of bytes");
        *ret = json_object_get_int64(v);
        return 0;
}

int session_files(int ws, const char *op, struct json_object *req, const void *content, size_t len, struct json_object *reply,
                  int *ret_fd, uint64_t *ret_size, Error *reterr) {
        struct json_object *p = NULL, *files;
        char rel[PATH_MAX_BYTES + 1] = "";
        bool listing = strcmp(op, "list") == 0;
        int r;

        (void) json_object_object_get_ex(req, listing ? "dir" : "path", &p);
        /* A listing's directory may be left out: the workspace itself. */
        if (!(listing && (!p || json_object_is_type(p, json_type_null) ||
                          (json_object_is_type(p, json_type_string) && json_object_get_string_len(p) == 0)))) {
                r = relative(p, rel, sizeof(rel), reterr);
                if (r < 0)
                        return r;
        }

        if (strcmp(op, "put") == 0) {
                r = put(ws, p, rel, content, len, reterr);
                if (r < 0)
                        return r;
                return json_object_object_add(reply, "status", json_object_new_int(201)) < 0 ||
                                       json_object_object_add(reply, "size", json_object_new_int64((int64_t) len)) < 0
                               ? -ENOMEM
                               : 0;
        }
        if (strcmp(op, "get") == 0) {
                int64_t max_bytes = -1;

                r = max_bytes_of(req, &max_bytes, reterr);
                if (r >= 0)
                        r = get(ws, p, rel, max_bytes, ret_fd, ret_size, reterr);
                if (r < 0)
                        return r;
                return json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
                                       json_object_object_add(reply, "size", json_object_new_int64((int64_t) *ret_size)) < 0
                               ? -ENOMEM
                               : 0;
        }
        if (listing) {
                files = json_object_new_array();
                if (!files || json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ||
                    json_object_object_add(reply, "files", files) < 0)
                        return -ENOMEM;
                return list(ws, p, rel, files, reterr);
        }
        r = remove_path(ws, p, rel, reterr);
        if (r < 0)
                return r;
        return json_object_object_add(reply, "status", json_object_new_int(200)) < 0 ? -ENOMEM : 0;
}
