# SPDX-License-Identifier: MIT
"""sandboxd's runner: the first process inside a sandbox.

It reads one request as JSON on standard input, writes the input files into the working directory,
runs the code as `python3 -c CODE` would, and writes one reply as JSON on standard output:

  request: {"code", "stdin", "files": [{"path", "content_b64"}], "return_files": [path],
            "output_cap", "return_cap"}
  reply:   {"status": 200, "exit_code", "stdout_b64", "stderr_b64", "stdout_truncated",
            "stderr_truncated", "duration_ms", "files": [{"path", "content_b64"}]}
        or {"status": 400, "error": "..."} when the request is refused.

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
import subprocess
import sys
import time

WORKDIR = "/workspace"
PYTHON = "/usr/bin/python3"
PR_SET_DUMPABLE = 4


def reply(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


def refuse(message):
    reply({"status": 400, "error": message})
    sys.exit(0)


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


def stdin_file(data):
    """The snippet's standard input: a file, so a large input cannot deadlock against its output."""
    fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    os.write(fd, (data or "").encode("utf-8", "surrogatepass"))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def collect(proc, cap):
    """Reads stdout and stderr until the snippet exits; keeps at most cap bytes of each."""
    sel = selectors.DefaultSelector()
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    cut = {proc.stdout: False, proc.stderr: False}
    for f in bufs:
        os.set_blocking(f.fileno(), False)
        sel.register(f, selectors.EVENT_READ)

    def drain(f):
        """Reads one chunk; False once nothing is left right now (EOF or an empty pipe)."""
        try:
            chunk = os.read(f.fileno(), 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            sel.unregister(f)
            return False
        room = cap - len(bufs[f])
        if len(chunk) > room:
            cut[f] = True
        bufs[f] += chunk[:max(room, 0)]
        return True

    # Until the snippet exits. A background child that keeps the pipes open must not keep the reply
    # waiting: once the snippet is gone, only what is already in the pipes is read.
    pidfd = os.pidfd_open(proc.pid)
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
    proc.wait()
    return bufs[proc.stdout], bufs[proc.stderr], cut[proc.stdout], cut[proc.stderr]


def exit_code(returncode):
    # Like a shell: death by signal N reads 128 + N. -1 is reserved for the timeout.
    return 128 - returncode if returncode < 0 else returncode


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


def main():
    # Not dumpable: the snippet (same UID) cannot open /proc/<runner>/fd or ptrace the runner.
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    try:
        req = json.loads(sys.stdin.buffer.read())
    except ValueError:
        refuse("request is not JSON")
    if not isinstance(req, dict) or not isinstance(req.get("code"), str):
        refuse("request has no code")

    write_files(req.get("files"))
    cap = int(req.get("output_cap", 1 << 20))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}

    start = time.monotonic()
    proc = subprocess.Popen([PYTHON, "-c", req["code"]], cwd=WORKDIR, env=env,
                            stdin=stdin_file(req.get("stdin")), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, close_fds=True)
    out, err, out_cut, err_cut = collect(proc, cap)
    duration = int((time.monotonic() - start) * 1000)

    reply({
        "status": 200,
        "exit_code": exit_code(proc.returncode),
        "stdout_b64": base64.b64encode(bytes(out)).decode(),
        "stderr_b64": base64.b64encode(bytes(err)).decode(),
        "stdout_truncated": out_cut,
        "stderr_truncated": err_cut,
        "duration_ms": duration,
        "files": return_files(req.get("return_files"), int(req.get("return_cap", 8 << 20))),
    })


if __name__ == "__main__":
    main()
