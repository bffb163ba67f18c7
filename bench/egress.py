#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Section K of bench/run: egress by name (README, "Network: egress by name"), against the test
internet that tests/egress/stack points the stack's relay and proxies at (hosts of its own in
network namespaces: nothing leaves the machine).

  K1 an execution that asks for network (so its sandbox gets its proxy socket, the relay a list and
     the code its environment) but opens no connection, next to the same execution without network,
     interleaved, back to back and then 50 ms apart: the medians and their difference (target: at
     most 1 ms more)
  K2 10 MiB over HTTP and over HTTPS from the test host, by curl and by Python's urllib: from
     inside a sandbox through the runner's socket, the relay and the proxy (HAProxy for plain HTTP,
     Squid for a tunnel; each client times its own
     download), next to the same client in the proxy's namespace straight to the host; medians and
     the speed ratios (target: curl in a sandbox at least 0.5 of curl's speed straight)

Usage: bench/egress.py [--url URL] [-n N]; bench/run runs it with --egress. Needs root, the stack up
with egress installed (Squid and HAProxy), and sandboxd-host. Exit status 1 when an execution fails.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

CODE = "print(2**32)"
BIG = 10 * 2**20
# K1 again with this long before each request: the execution's own cost, without the work the one
# before left the machine (its sandbox destroyed, the next one made; on two CPUs back to back, that
# doubles an execution's time).
PACE = 0.05
DOWNLOAD = ("import time, urllib.request\n"
            "t = time.monotonic()\n"
            "n = len(urllib.request.urlopen('http://www.egress.test/big.bin', timeout=60).read())\n"
            "print(n, time.monotonic() - t)\n")
STACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "egress", "stack")


def execute(url, body):
    """(seconds, response) of one execution."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=120)
    data = json.dumps(body)
    t = time.monotonic()
    conn.request("POST", "/v1/execute", data, {"content-type": "application/json"})
    resp = conn.getresponse()
    out = json.loads(resp.read())
    elapsed = time.monotonic() - t
    conn.close()
    if resp.status != 200 or out.get("exit_code") != 0:
        raise RuntimeError("execution failed: %d %s" % (resp.status, out))
    return elapsed, out


def ms(x):
    return "%.1f" % (x * 1000)


def k2(url, host, state, scheme):
    """9 downloads of 10 MiB over scheme each way: inside a sandbox by curl and by urllib (through the
    relay and HAProxy; over HTTPS Squid's tunnel, the test CA trusted through the operator's bundle that
    tests/egress/stack installs), by curl and by the same urllib in the proxy's namespace, straight
    to the host."""
    inside, inside_curl, curl, bare = [], [], [], []
    code = DOWNLOAD.replace("http://", scheme + "://")
    ca = os.path.join(state, "net", "ca.pem")
    for _ in range(9):
        _, out = execute(url, {"code": code, "network": {"allow": ["www.egress.test"]}})
        size, secs = out["stdout"].split()
        if int(size) != BIG:
            raise RuntimeError("the download came short: %s bytes" % size)
        inside.append(float(secs))
        # curl finds the proxy and the bundle in its environment, as code's own curl would.
        _, out = execute(url, {"language": "bash", "network": {"allow": ["www.egress.test"]},
                               "code": "curl -sS -o /dev/null -w '%%{size_download} %%{time_total}' %s://www.egress.test/big.bin" % scheme})
        size, secs = out["stdout"].split()
        if int(size) != BIG:
            raise RuntimeError("curl's download in a sandbox came short: %s bytes" % size)
        inside_curl.append(float(secs))
        r = subprocess.run([host, "exec", "ip", "netns", "exec", "sbxeg-proxy", "curl", "-sS", "-o", "/dev/null", "--cacert", ca,
                            "--resolve", "www.egress.test:443:192.0.2.10", "--resolve", "www.egress.test:80:192.0.2.10",
                            "-w", "%{size_download} %{time_total}", scheme + "://www.egress.test/big.bin"],
                           check=True, capture_output=True, text=True)
        size, secs = r.stdout.split()
        if int(size) != BIG:
            raise RuntimeError("curl's download came short: %s bytes" % size)
        curl.append(float(secs))
        # The same urllib, resolving the name as the proxy would, trusting the same CA.
        straight = ("import socket\n_g = socket.getaddrinfo\n"
                    "socket.getaddrinfo = lambda h, *a, **k: _g('192.0.2.10' if h == 'www.egress.test' else h, *a, **k)\n" + code)
        r = subprocess.run([host, "exec", "ip", "netns", "exec", "sbxeg-proxy", "env", "SSL_CERT_FILE=" + ca, "/usr/bin/python3", "-c",
                            straight], check=True, capture_output=True, text=True)
        bare.append(float(r.stdout.split()[1]))
    return inside, inside_curl, curl, bare


def pace_name(gap):
    return "back to back" if gap == 0 else "%d ms apart" % (gap * 1000)


def k1_pairs(url, n, gap):
    """n executions each way, in pairs whose order alternates (neither goes always first, after the
    same kind of work), gap seconds before each."""
    plain, egress = [], []
    for i in range(n):
        for with_network in ((False, True) if i % 2 == 0 else (True, False)):
            time.sleep(gap)
            body = {"code": CODE, "network": {"allow": ["www.egress.test"]}} if with_network else {"code": CODE}
            (egress if with_network else plain).append(execute(url, body)[0])
    return plain, egress


def run(url, n, host="sandboxd-host"):
    state = tempfile.mkdtemp(prefix="sandboxd-egress-bench.", dir="/var/tmp")
    subprocess.run([STACK, "up", state], check=True, env=dict(os.environ, SANDBOXD_HOST=shutil.which(host) or host))
    try:
        k1 = {gap: k1_pairs(url, n, gap) for gap in (0, PACE)}
        downloads = {scheme: k2(url, host, state, scheme) for scheme in ("http", "https")}
    finally:
        subprocess.run([STACK, "down", state], env=dict(os.environ, SANDBOXD_HOST=shutil.which(host) or host))
        shutil.rmtree(state, ignore_errors=True)

    print()
    print("| K egress, interleaved | n | median ms | p90 ms |")
    print("|---|---|---|---|")
    for gap, (plain, egress) in k1.items():
        how = pace_name(gap)
        for name, xs in (("K1 sandboxd print(2**32), no network, %s" % how, plain),
                         ("K1 the same asking for network, no connection, %s" % how, egress)):
            print("| %s | %d | %s | %s |" % (name, len(xs), ms(statistics.median(xs)), ms(sorted(xs)[int(0.9 * (len(xs) - 1))])))
    for scheme, (inside, inside_curl, curl, bare) in downloads.items():
        # Plain HTTP goes from the relay to the front (HAProxy), a tunnel to Squid.
        chain = "the relay and HAProxy" if scheme == "http" else "the relay and Squid"
        for name, xs in (("K2 10 MiB over %s by curl inside a sandbox, through %s" % (scheme, chain), inside_curl),
                         ("K2 10 MiB over %s by curl in the proxy's namespace, straight" % scheme, curl),
                         ("K2 10 MiB over %s by urllib inside a sandbox, through %s" % (scheme, chain), inside),
                         ("K2 10 MiB over %s by the same urllib in the proxy's namespace, straight" % scheme, bare)):
            print("| %s | %d | %s | %s |" % (name, len(xs), ms(statistics.median(xs)), ms(max(xs))))
    print()
    for gap, (plain, egress) in k1.items():
        extra = statistics.median(egress) - statistics.median(plain)
        pairwise = statistics.median(e - p for e, p in zip(egress, plain))
        print("K1 %s: asking for network costs %s ms more at the median (target <= 1 ms); the median of the pairs' differences: %s ms"
              % (pace_name(gap), ms(extra), ms(pairwise)))
    for scheme, (inside, inside_curl, curl, bare) in downloads.items():
        print("K2 over %s: curl's speed through the proxy / straight: %.2f (target >= 0.5); urllib's: %.2f; urllib in a sandbox / curl straight: %.2f"
              % (scheme, statistics.median(curl) / statistics.median(inside_curl), statistics.median(bare) / statistics.median(inside),
                 statistics.median(curl) / statistics.median(inside)))
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("-n", type=int, default=100)
    args = ap.parse_args()
    try:
        run(args.url, args.n)
    except RuntimeError as e:
        print("egress bench: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
