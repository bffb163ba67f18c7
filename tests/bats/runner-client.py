# SPDX-License-Identifier: MIT
"""The runner on its own, outside the service: starts RUNNER --listen in a bubblewrap sandbox (the
host's /usr read-only, a tmpfs /workspace and /tmp, every namespace unshared), sends it one request
as the worker does and prints the reply as it came. Exits 1 if the runner did not greet, answer, or
exit 0 after answering.

  runner-client.py RUNNER REQUEST_JSON
"""
import os
import socket
import subprocess
import sys
import tempfile

BWRAP = ["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
         "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/workspace",
         "--unshare-all", "--die-with-parent", "--new-session"]


def main():
    runner, request = sys.argv[1], sys.argv[2].encode()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "runner.sock")
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(1)
        proc = subprocess.Popen(BWRAP + ["--ro-bind", runner, "/runner", "/runner", "--listen"], stdin=listening.fileno())
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
        status = proc.wait(30)
    print(reply.decode())
    if status != 0:
        sys.exit("runner-client: the runner exited with %d" % status)


main()
