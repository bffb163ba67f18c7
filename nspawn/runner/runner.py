# SPDX-License-Identifier: MIT
"""sandboxd's runner: the first process inside a sandbox.

It takes one request as JSON, writes the input files into the working directory, runs the code
with the semantics of `python3 -c CODE` in a fresh process, and answers with one reply as JSON:

  request: {"code", "stdin", "files": [{"path", "content_b64"}], "return_files": [path],
            "output_cap", "return_cap"}
  reply:   {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
            "stderr_truncated", "duration_ms", "files": [{"path", "content_b64"}]}
        or {"status": 400, "error": "..."} when the request is refused.

Warm (--listen): standard input is a listening unix socket. Every connection is greeted with
"ready\n"; a connection that sends nothing (the pool's readiness probe) is closed and the next is
awaited; the first that sends a request (then shuts down its write side) gets the reply, and the
runner exits: a sandbox serves one execution. The interpreter is up before the code arrives; the
code runs in a forked child with a fresh __main__, argv, stdio and working directory.

One-shot (no argument): the request on standard input, the reply on standard output.

The runner is not a security boundary: the kernel is (namespaces, no capabilities, cgroup limits).
It runs with the snippet's own UID; all it could spoil is its own sandbox's reply, which the worker
reads with a size cap and validates.
"""

import base64
import ctypes
import json
import os
import selectors
import signal
import socket
import sys
import time

WORKDIR = "/workspace"
PYTHON = "/usr/bin/python3"
PR_SET_DUMPABLE = 4
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
LIBC = ctypes.CDLL(None, use_errno=True)


class Refused(Exception):
    """The request is refused: the reply is {"status": 400, "error": message}."""


def refuse(message):
    raise Refused(message)


def resolve(path):
    """The absolute path of a client path, or None if it climbs out of the working directory."""
    if not isinstance(path, str) or path == "" or "\0" in path or path.startswith("/"):
        return None
    parts = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        return None
    return os.path.join(WORKDIR, *parts)


def write_files(files):
    for entry in files or []:
        target = resolve(entry.get("path"))
        if target is None:
            refuse("file path escapes working directory: '%s'" % entry.get("path"))
        try:
            content = base64.b64decode(entry.get("content_b64", ""), validate=True)
        except ValueError:
            refuse("invalid base64 for '%s'" % entry.get("path"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        # O_NOFOLLOW: nothing in a fresh tmpfs is a link, and nothing should become one.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(content)


def collect(pid, out_fd, err_fd, cap):
    """Reads the child's stdout and stderr until it exits; keeps at most cap bytes of each."""
    sel = selectors.DefaultSelector()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    cut = {out_fd: False, err_fd: False}
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)

    def drain(fd):
        """Reads one chunk; False once nothing is left right now (EOF or an empty pipe)."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            sel.unregister(fd)
            return False
        room = cap - len(bufs[fd])
        if len(chunk) > room:
            cut[fd] = True
        bufs[fd] += chunk[:max(room, 0)]
        return True

    # Until the child exits. A background process that keeps the pipes open must not keep the reply
    # waiting: once the child is gone, only what is already in the pipes is read.
    pidfd = os.pidfd_open(pid)
    sel.register(pidfd, selectors.EVENT_READ)
    exited = False
    while not exited:
        for key, _ in sel.select():
            if key.fileobj == pidfd:
                exited = True
            else:
                drain(key.fileobj)
    sel.unregister(pidfd)
    os.close(pidfd)
    for key in list(sel.get_map().values()):
        while drain(key.fileobj):
            pass
    _, status = os.waitpid(pid, 0)
    for fd in bufs:
        os.close(fd)
    return status, bufs[out_fd], bufs[err_fd], cut[out_fd], cut[err_fd]


def exit_status(status):
    """Like a shell: death by signal N reads 128 + N. -1 is reserved for the timeout."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def read_fd(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


# What the code's process runs: a fresh interpreter started as `python3 -c BOOTSTRAP` (so argv,
# sys.path, __main__ and the exit status are those of `python3 -c CODE`), which waits for
# "<length of code>\n<code><stdin>" on fd 3, makes the stdin bytes its fd 0, and runs the code in
# __main__ as the interpreter would: uncaught exceptions print the snippet's frames only, SystemExit
# sets the status, non-daemon threads are joined and atexit handlers run. It then leaves with
# os._exit(), skipping the interpreter's teardown, which costs milliseconds and shows nothing.
# Nothing of the bootstrap is left in __main__.
BOOTSTRAP = r"""
def _sandboxd_main():
    import os, sys
    g = globals()
    del g["_sandboxd_main"]

    def status(e):
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xff
        try:
            print(e.code, file=sys.stderr)
        except BaseException:
            pass
        return 1

    with os.fdopen(3, "rb") as f:
        data = f.read()
    if not data:
        os._exit(0)
    n, _, rest = data.partition(b"\n")
    src, stdin = rest[:int(n)], rest[int(n):]
    fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    os.write(fd, stdin)
    os.lseek(fd, 0, os.SEEK_SET)
    os.dup2(fd, 0)
    os.close(fd)

    rc = 0
    try:
        code = compile(src.decode("utf-8", "surrogateescape"), "<string>", "exec")
    except SyntaxError as e:
        e.__traceback__ = None
        sys.excepthook(type(e), e, None)
        code, rc = None, 1
    if code is not None:
        try:
            exec(code, g)
        except SystemExit as e:
            rc = status(e)
        except BaseException as e:
            e.__traceback__ = e.__traceback__.tb_next
            sys.excepthook(type(e), e, e.__traceback__)
            rc = 1
    del code

    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        import atexit
        atexit._run_exitfuncs()
    except SystemExit as e:
        rc = status(e)
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            rc = rc or 120
    os._exit(rc)
_sandboxd_main()
"""


def prefork():
    """Starts the process that will run the code before the code arrives: starting an interpreter
    is the slow part, so it happens while the sandbox waits. Returns its pid, the write end of its
    fd 3, and the read ends of its stdout and stderr."""
    code_r, code_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
               (os.POSIX_SPAWN_DUP2, code_r, 3)]
    env = dict(ENV)
    os.chdir(WORKDIR)
    pid = os.posix_spawn(PYTHON, [PYTHON, "-c", BOOTSTRAP], env, file_actions=actions, setsid=True)
    for fd in (code_r, out_w, err_w):
        os.close(fd)
    return pid, code_w, out_r, err_r


def return_files(paths, cap):
    out, total = [], 0
    for path in paths or []:
        target = resolve(path)
        if target is None:
            refuse("file path escapes working directory: '%s'" % path)
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            if not os.path.isfile(target):
                continue
            data = f.read(cap - total + 1)
        total += len(data)
        if total > cap:
            refuse("return_files are larger than %d bytes" % cap)
        out.append({"path": path, "content_b64": base64.b64encode(data).decode()})
    return out


def run(req, child):
    """One execution in the preforked child: the reply as a dict."""
    if not isinstance(req, dict) or not isinstance(req.get("code"), str):
        refuse("request has no code")
    stdin = req.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        refuse("stdin must be a string")
    write_files(req.get("files"))
    cap = int(req.get("output_cap", 1 << 20))
    pid, code_w, out_fd, err_fd = child

    code = req["code"].encode("utf-8", "surrogatepass")
    start = time.monotonic()
    try:
        with os.fdopen(code_w, "wb") as f:
            f.write(b"%d\n" % len(code) + code + (stdin or "").encode("utf-8", "surrogatepass"))
    except BrokenPipeError:
        pass  # the process is gone already: its status says how
    status, out, err, out_cut, err_cut = collect(pid, out_fd, err_fd, cap)
    duration = int((time.monotonic() - start) * 1000)

    return {
        "status": 200,
        "exit_code": exit_status(status),
        "stdout_b64": base64.b64encode(bytes(out)).decode(),
        "stderr_b64": base64.b64encode(bytes(err)).decode(),
        "stdout_truncated": out_cut,
        "stderr_truncated": err_cut,
        "duration_ms": duration,
        "files": return_files(req.get("return_files"), int(req.get("return_cap", 8 << 20))),
    }


def answer(data, child):
    """The reply to one request's bytes."""
    try:
        return run(json.loads(data), child)
    except ValueError:
        return {"status": 400, "error": "request is not JSON"}
    except Refused as e:
        return {"status": 400, "error": str(e)}


def encode(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def read_all(conn):
    chunks = []
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def serve(listener):
    """Warm mode: probes get "ready\n"; the first request is executed, answered, and the runner ends."""
    child = prefork()
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                conn.sendall(b"ready\n")
                data = read_all(conn)
            except OSError:
                continue
            if not data:
                continue
            conn.sendall(encode(answer(data, child)))
            return


def main():
    # Not dumpable: the code (same UID) cannot open /proc/<runner>/fd or ptrace the runner.
    LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    if sys.argv[1:] == ["--listen"]:
        serve(socket.socket(fileno=0))
        return
    child = prefork()
    out = sys.stdout.buffer
    out.write(encode(answer(sys.stdin.buffer.read(), child)))
    out.flush()


if __name__ == "__main__":
    main()
