# SPDX-License-Identifier: MIT
"""Section L of bench/run (with --front): what the front of several hosts (README, "Several hosts")
adds to an execution. HAProxy runs with the project's own configuration (cluster/haproxy.cfg, its
members.cfg naming this host's nginx as the one member) on loopback beside the stack; executions go
to nginx straight and through HAProxy, alternately, in one run: medians, and the median of the
pairs' differences. Target: at most 1 ms more at the median.
"""

import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
FRONT_PORT = 8090


def wait_port(port, proc, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("HAProxy ended: %s" % proc.stdout.read().decode(errors="replace")[-2000:])
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("HAProxy does not listen on %d" % port)


def start_front(url, tmp):
    u = urllib.parse.urlsplit(url)
    with open(os.path.join(HERE, "..", "cluster", "haproxy.cfg")) as f:
        cfg = f.read()
    cfg = (cfg.replace("@SOCKET@", os.path.join(tmp, "admin.sock"))
           .replace("@DIR@", tmp).replace("@ERRORS@", os.path.join(HERE, "..", "cluster", "errors")))
    with open(os.path.join(tmp, "haproxy.cfg"), "w") as f:
        f.write(cfg)
    # One member: this host's nginx; its agent port answers nothing, which leaves it up at full weight.
    with open(os.path.join(tmp, "members.cfg"), "w") as f:
        f.write("backend work from work-settings\n    server local %s:%d agent-addr %s agent-port %d\n"
                % (u.hostname, u.port, u.hostname, u.port + 1))
    open(os.path.join(tmp, "members.map"), "w").close()
    # It listens itself here: no systemd holds its socket.
    env = dict(os.environ, SANDBOXD_FRONT_BIND="127.0.0.1:%d" % FRONT_PORT)
    proc = subprocess.Popen(["haproxy", "-db", "-f", os.path.join(tmp, "haproxy.cfg"), "-f", os.path.join(tmp, "members.cfg")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    wait_port(FRONT_PORT, proc)
    return proc


def run(url, n, bench_service):
    """Prints section L; returns the median of the pairs' differences in ms (None when HAProxy is absent)."""
    if not shutil.which("haproxy"):
        print("\nL front: haproxy is not installed; skipped")
        return None
    tmp = tempfile.mkdtemp(prefix="sandboxd-front-bench.")
    proc = start_front(url, tmp)
    front = "http://127.0.0.1:%d" % FRONT_PORT
    try:
        bench_service(front, 20, label="through the front, warming up")
        direct, via = [], []
        # Alternate, ten at a time: both see the same state of the host.
        for _ in range(max(n // 10, 1)):
            direct += bench_service(url, 10, label="straight to nginx")
            via += bench_service(front, 10, label="through the front")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    diffs = [v - d for d, v in zip(direct, via)]
    print()
    print("| L execution, back to back | n | median ms | p99 ms |")
    print("|---|---|---|---|")
    for name, xs in (("L straight to nginx", direct), ("L through the front (HAProxy, cluster/haproxy.cfg)", via)):
        xs = sorted(xs)
        print("| %s | %d | %.2f | %.2f |" % (name, len(xs), statistics.median(xs) * 1000, xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1000))
    med = statistics.median(diffs) * 1000
    print("L the front adds %.2f ms at the median (medians' difference %.2f ms; target <= 1 ms)"
          % (med, (statistics.median(via) - statistics.median(direct)) * 1000))
    return med
