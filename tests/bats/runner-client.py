# SPDX-License-Identifier: MIT
"""The runner on its own, outside the service: starts RUNNER --listen as PID 1 of a machine made
here as nspawn makes one (a user namespace mapping 65536 unprivileged host UIDs, a tmpfs root with the
host's /usr read-only, its own mount, PID, IPC, UTS and network namespaces, the capabilities nspawn
leaves a runner), sends it one request as the worker does and prints the reply as it came. Exits 1
if the runner did not greet, answer, or exit 0 after answering.

  runner-client.py RUNNER REQUEST_JSON

With --session, the runner serves a session (--session) on a /workspace that is host directory DIR
(owned by the machine's root first, as a session's disk is on its first start) or a tmpfs of SIZE
bytes made in the machine; REQUESTS_JSON is a list, each item one connection, one line printed for
each, in order; the runner is killed at the end.
  runner-client.py --session (--workspace=DIR | --workspace-tmpfs=SIZE) RUNNER REQUESTS_JSON
An item is a request object, sent as one line of JSON text, as the worker sends it, except:
  a "_content_b64" member: not sent; its bytes follow the line (a put's file);
  a "_content_file" member: the same, with the bytes of that host file;
  {"_raw": TEXT}: TEXT sent as it is;
  {"_host": COMMAND}: no request: COMMAND run on the host by /bin/sh, with the runner's host PID
      in $RUNNER_PID; the line printed is {"host_status": N, "host_stdout": TEXT};
  {"_probe": true}: a connection that sends nothing (the pool's probe); the line is {"probe": GREETING}.
A reply's line is the reply's JSON text as it came; bytes after it (a get's file, after "\n") are
added after a tab, base64-encoded.
"""
import base64
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

SESSION = sys.argv[1] == "--session"
WORKSPACE = WORKSPACE_TMPFS = None
if SESSION:
    for a in sys.argv[2:-2]:
        if a.startswith("--workspace="):
            WORKSPACE = a[len("--workspace="):]
        elif a.startswith("--workspace-tmpfs="):
            WORKSPACE_TMPFS = int(a[len("--workspace-tmpfs="):])
        else:
            sys.exit("runner-client: unknown option %s" % a)
    if (WORKSPACE is None) == (WORKSPACE_TMPFS is None):
        sys.exit("runner-client: --session takes --workspace=DIR or --workspace-tmpfs=SIZE")
RUNNER = sys.argv[-2]
LIB_DIR = os.path.dirname(os.path.abspath(RUNNER))
# A build directory has no etc/: the runner's passwd and group come from the source tree then.
ETC_DIR = LIB_DIR + "/etc"
if not os.path.exists(ETC_DIR + "/passwd"):
    ETC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nspawn", "runner")
# What nspawn leaves a runner (nspawn-argv.c): CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_NET_ADMIN,
# CAP_SYS_CHROOT, CAP_SYS_ADMIN.
KEPT_CAPS = (6, 7, 8, 12, 18, 21)
PR_CAPBSET_DROP = 24
PR_SET_PDEATHSIG = 1
UID_BASE = 0x7ffe0000  # far from what the service picks for its machines
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
libc = ctypes.CDLL(None, use_errno=True)


def check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def mount(src, dst, fstype, flags, data=None):
    check(libc.mount(src and src.encode(), dst.encode(), fstype and fstype.encode(), flags, data and data.encode()),
          "mount " + dst)


def locked_flags(path):
    """The flags a remount in a user namespace must keep: those the mount was made with."""
    f = os.statvfs(path).f_flag
    return (MS_NOSUID if f & os.ST_NOSUID else 0) | (MS_NODEV if f & os.ST_NODEV else 0) | (MS_NOEXEC if f & os.ST_NOEXEC else 0)


def make_root(root, workspace_fd):
    """The machine's root, as nspawn's --volatile=yes makes it."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", 0, "mode=0755")
    for d in ("usr", "etc", "dev", "proc", "tmp", "workspace", "oldroot"):
        os.mkdir(os.path.join(root, d))
    mount("/usr", root + "/usr", None, MS_BIND | MS_REC)
    mount(None, root + "/usr", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for d in ("bin", "lib", "lib64", "sbin"):
        os.symlink("usr/" + d, os.path.join(root, d))
    for src, dst in (("/etc/ld.so.cache", "etc/ld.so.cache"), (ETC_DIR + "/passwd", "etc/passwd"),
                     (ETC_DIR + "/group", "etc/group")):
        with open(src, "rb") as f, open(os.path.join(root, dst), "wb") as g:
            g.write(f.read())
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID, "mode=0755")
    for dev in ("null", "zero", "random", "urandom"):
        open(os.path.join(root, "dev", dev), "w").close()
        mount("/dev/" + dev, os.path.join(root, "dev", dev), None, MS_BIND)
    if not LIB_DIR.startswith("/usr/"):
        # A build directory, at the same path, read-only.
        os.makedirs(root + LIB_DIR)
        mount("/proc/self/fd/%d" % LIB_FD, root + LIB_DIR, None, MS_BIND | MS_REC)
        mount(None, root + LIB_DIR, None, MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(root + LIB_DIR))
    # The kernel mounts a new /proc in a user namespace only where one is already fully visible.
    mount("/proc", root + "/proc", None, MS_BIND | MS_REC)
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    if WORKSPACE_TMPFS is not None:
        mount("tmpfs", root + "/workspace", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=%d" % WORKSPACE_TMPFS)
    elif WORKSPACE is not None:
        mount("/proc/self/fd/%d" % workspace_fd, root + "/workspace", None, MS_BIND)
    else:
        mount("tmpfs", root + "/workspace", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    os.chdir(root)
    check(libc.syscall(155, b".", b"oldroot"), "pivot_root")  # SYS_pivot_root on x86_64
    check(libc.umount2(b"/oldroot", 2), "umount /oldroot")  # MNT_DETACH
    os.rmdir("/oldroot")
    os.chdir("/")


def machine(root, listening, runner_pid_w):
    """In a child: the machine's namespaces and root, then the runner as its PID 1."""
    ready_r, ready_w = os.pipe()
    unshared_r, unshared_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        workspace_fd = -1
        try:
            os.close(ready_w)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
            # Opened while this process still has the host's root file-system identity, in the new
            # mount namespace (a bind mount's source must be of it): the machine's root has no search
            # permission on the way to them.
            global LIB_FD
            LIB_FD = os.open(LIB_DIR, os.O_PATH | os.O_DIRECTORY)
            if WORKSPACE is not None:
                workspace_fd = os.open(WORKSPACE, os.O_PATH | os.O_DIRECTORY)
            os.write(unshared_w, b"x")
            os.read(ready_r, 1)  # the parent has written the ID maps
            check(libc.setresgid(0, 0, 0) or libc.setresuid(0, 0, 0), "becoming root of the namespace")
            machine_child(root, listening, workspace_fd, runner_pid_w)
        except BaseException as e:
            print("runner-client: %s" % e, file=sys.stderr)
        os._exit(1)
    os.close(ready_r)
    os.read(unshared_r, 1)
    for name, line in (("uid_map", "0 %d 65536\n" % UID_BASE), ("gid_map", "0 %d 65536\n" % UID_BASE)):
        with open("/proc/%d/%s" % (pid, name), "w") as f:
            f.write(line)
    os.write(ready_w, b"x")
    os.close(ready_w)
    return pid


def machine_child(root, listening, workspace_fd, runner_pid_w):
    """Root of the new user namespace: the machine's root, then its PID 1."""
    make_root(root, workspace_fd)
    check(libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        os.dup2(listening, 0)
        for cap in range(64):
            if cap not in KEPT_CAPS and libc.prctl(PR_CAPBSET_DROP, cap) != 0:
                break
        os.execv(RUNNER, [RUNNER, "--listen", "--uid=1000", "--zygote=%s/sandboxd-zygote" % LIB_DIR,
                          "--seccomp=%s/seccomp.bpf" % LIB_DIR, "--machine-seccomp=%s/seccomp-machine.bpf" % LIB_DIR]
                + (["--session"] if SESSION else ["--executions=1"]))
    os.write(runner_pid_w, str(pid).encode())
    os.close(runner_pid_w)
    _, status = os.wait()
    os._exit(os.waitstatus_to_exitcode(status))


def connect(path):
    """A connection to the runner, once it greeted: the socket and the greeting."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(60)
    conn.connect(path)
    greeting = b""
    while not greeting.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            break
        greeting += chunk
    return conn, greeting


def exchange(path, request):
    """One request, as the worker sends it: the reply's bytes."""
    conn, greeting = connect(path)
    if greeting != b"ready\n":
        sys.exit("runner-client: no greeting, got %r" % greeting)
    conn.sendall(request)
    conn.shutdown(socket.SHUT_WR)
    reply = b""
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        reply += chunk
    conn.close()
    return reply


def session_item(path, item, runner_pid):
    """One item of a session's list: the line to print."""
    if "_host" in item:
        p = subprocess.run(["/bin/sh", "-c", item["_host"]], stdout=subprocess.PIPE,
                           env=dict(os.environ, RUNNER_PID=str(runner_pid)))
        return json.dumps({"host_status": p.returncode, "host_stdout": p.stdout.decode(errors="replace")})
    if "_probe" in item:
        conn, greeting = connect(path)
        conn.close()
        return json.dumps({"probe": greeting.decode(errors="replace")})
    if "_raw" in item:
        request = item["_raw"].encode()
    else:
        content = base64.b64decode(item.pop("_content_b64", ""))
        if "_content_file" in item:
            with open(item.pop("_content_file"), "rb") as f:
                content = f.read()
        request = json.dumps(item).encode() + b"\n" + content
    reply = exchange(path, request)
    # The reply's JSON text ends where its object does (ASCII braces, whatever its strings hold).
    _, end = json.JSONDecoder().raw_decode(reply.decode("latin-1"))
    line = reply[:end].decode()
    if end < len(reply):
        if reply[end:end + 1] != b"\n":
            sys.exit("runner-client: bytes after the reply without a newline: %r" % reply[end:end + 16])
        line += "\t" + base64.b64encode(reply[end + 1:]).decode()
    return line


def main():
    items = json.loads(sys.argv[-1]) if SESSION else None
    if WORKSPACE is not None:
        # A session's disk on its first start: the machine's root owns it (UID 0 in the machine).
        os.chown(WORKSPACE, UID_BASE, UID_BASE)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "runner.sock")
        root = os.path.join(d, "root")
        os.mkdir(root)
        os.chmod(d, 0o755)  # the namespace's root, an unprivileged host UID, mounts on root
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(1)
        runner_pid_r, runner_pid_w = os.pipe()
        pid = machine(root, listening.fileno(), runner_pid_w)
        os.close(runner_pid_w)
        listening.close()
        if not SESSION:
            reply = exchange(path, sys.argv[-1].encode())
            _, status = os.waitpid(pid, 0)
            print(reply.decode())
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit("runner-client: the runner exited with %d" % os.waitstatus_to_exitcode(status))
            return
        runner_pid = int(os.read(runner_pid_r, 32) or b"0")
        try:
            for item in items:
                print(session_item(path, item, runner_pid), flush=True)
        finally:
            # A session's runner serves until it is killed; the machine goes with it.
            if runner_pid > 0:
                os.kill(runner_pid, signal.SIGKILL)
            os.waitpid(pid, 0)


main()
