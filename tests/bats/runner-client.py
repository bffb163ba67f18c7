# SPDX-License-Identifier: MIT
"""The runner on its own, outside the service: starts RUNNER --listen as PID 1 of a machine made
here as nspawn makes one (a user namespace mapping 65536 unprivileged host UIDs, a tmpfs root with the
host's /usr read-only, its own mount, PID, IPC, UTS and network namespaces), sends it one request as
the worker does and prints the reply as it came. Exits 1 if the runner did not greet, answer, or
exit 0 after answering.

  runner-client.py RUNNER REQUEST_JSON
"""
import ctypes
import os
import socket
import sys
import tempfile

LIB_DIR = os.path.dirname(os.path.abspath(sys.argv[1]))
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


def make_root(root):
    """The machine's root, as nspawn's --volatile=yes makes it."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", 0, "mode=0755")
    for d in ("usr", "etc", "dev", "proc", "tmp", "workspace", "oldroot"):
        os.mkdir(os.path.join(root, d))
    mount("/usr", root + "/usr", None, MS_BIND | MS_REC)
    mount(None, root + "/usr", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for d in ("bin", "lib", "lib64", "sbin"):
        os.symlink("usr/" + d, os.path.join(root, d))
    for src, dst in (("/etc/ld.so.cache", "etc/ld.so.cache"), (LIB_DIR + "/etc/passwd", "etc/passwd"),
                     (LIB_DIR + "/etc/group", "etc/group")):
        with open(src, "rb") as f, open(os.path.join(root, dst), "wb") as g:
            g.write(f.read())
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID, "mode=0755")
    for dev in ("null", "zero", "random", "urandom"):
        open(os.path.join(root, "dev", dev), "w").close()
        mount("/dev/" + dev, os.path.join(root, "dev", dev), None, MS_BIND)
    # The kernel mounts a new /proc in a user namespace only where one is already fully visible.
    mount("/proc", root + "/proc", None, MS_BIND | MS_REC)
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    mount("tmpfs", root + "/workspace", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    os.chdir(root)
    check(libc.syscall(155, b".", b"oldroot"), "pivot_root")  # SYS_pivot_root on x86_64
    check(libc.umount2(b"/oldroot", 2), "umount /oldroot")  # MNT_DETACH
    os.rmdir("/oldroot")
    os.chdir("/")


def machine(root, listening):
    """In a child: the machine's namespaces and root, then the runner as its PID 1."""
    ready_r, ready_w = os.pipe()
    unshared_r, unshared_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_w)
            check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
            os.write(unshared_w, b"x")
            os.read(ready_r, 1)  # the parent has written the ID maps
            check(libc.setresgid(0, 0, 0) or libc.setresuid(0, 0, 0), "becoming root of the namespace")
            machine_child(root, listening)
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


def machine_child(root, listening):
    """Root of the new user namespace: the machine's root, then its PID 1."""
    make_root(root)
    check(libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    if os.fork() == 0:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        os.dup2(listening, 0)
        runner = sys.argv[1]
        os.execv(runner, [runner, "--listen", "--uid=1000", "--zygote=%s/sandboxd-zygote" % LIB_DIR,
                          "--seccomp=%s/seccomp.bpf" % LIB_DIR, "--executions=1"])
    _, status = os.wait()
    os._exit(os.waitstatus_to_exitcode(status))


def main():
    request = sys.argv[2].encode()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "runner.sock")
        root = os.path.join(d, "root")
        os.mkdir(root)
        os.chmod(d, 0o755)  # the namespace's root, an unprivileged host UID, mounts on root
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(1)
        pid = machine(root, listening.fileno())
        listening.close()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(30)
        conn.connect(path)
        greeting = b""
        while not greeting.endswith(b"\n"):
            chunk = conn.recv(1)
            if not chunk:
                break
            greeting += chunk
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
        _, status = os.waitpid(pid, 0)
    print(reply.decode())
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("runner-client: the runner exited with %d" % os.waitstatus_to_exitcode(status))


main()
