# SPDX-License-Identifier: MIT
"""Section I of bench/run: capacity. A slow snippet holds a machine, never the API.

  (I1) unloaded: GET /v1/pool latency, and print(2**32) at concurrency 4
  (I2) the same while SLEEPERS executions of time.sleep(SLEEP_S) are in flight: the pool's p99, the
       short executions' p50 against the unloaded p50, all checked; the workers' memory per waiting
       request (their RSS loaded less idle)
  (I3) after that load ends: how long after the last sleeper's answer GET /v1/pool answers; then a
       burst of SLEEPERS sleepers whose clients go away after 2 s, and how long until the service has
       nothing in flight and answers
  (I4) CONNECTIONS connections opened at once, each a POST /v1/execute: every one answered 200, or 503
       with Retry-After; no sandboxd process died; the workers' peak memory meanwhile
  (I5) idle for IDLE_S seconds: how often each sandboxd process (every thread) was scheduled in, from
       /proc/PID/task/TID/schedstat (its third field counts the times it ran on a CPU)
"""

import concurrent.futures
import http.client
import json
import os
import socket
import statistics
import threading
import time
import urllib.parse

SLEEPERS = 64
SLEEP_S = 30
CONNECTIONS = 1000
IDLE_S = 10
# What the service is made of, by the names its processes give themselves (comm).
PROCESSES = ("sandboxd-fcgi", "sandboxd-worker", "sandboxd-poold", "sandboxd-broker", "sandboxd-runner", "sandboxd-zygote")


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def _hostport(url):
    u = urllib.parse.urlparse(url)
    return u.hostname, u.port or 80


def request(url, method, path, body=None, timeout=120):
    """One request on a connection of its own: (status, headers, parsed body or None)."""
    host, port = _hostport(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        data = json.dumps(body) if body is not None else None
        conn.request(method, path, body=data, headers={"content-type": "application/json"} if data else {})
        r = conn.getresponse()
        raw = r.read()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        return r.status, dict(r.getheaders()), parsed
    finally:
        conn.close()


def pool_latencies(url, n):
    out = []
    for _ in range(n):
        t = time.monotonic()
        status, _, body = request(url, "GET", "/v1/pool", timeout=30)
        out.append(time.monotonic() - t)
        if status != 200 or not isinstance(body, dict):
            raise SystemExit("GET /v1/pool answered %d" % status)
    return out


def short_executions(url, concurrency, n):
    """n print(2**32) at concurrency: (latencies, wrong answers)."""
    lat, wrong = [], [0]
    lock = threading.Lock()

    def one(_):
        t = time.monotonic()
        status, _, body = request(url, "POST", "/v1/execute", {"code": "print(2**32)"})
        dt = time.monotonic() - t
        with lock:
            lat.append(dt)
            if status != 200 or body.get("stdout") != "4294967296\n":
                wrong[0] += 1

    with concurrent.futures.ThreadPoolExecutor(concurrency) as ex:
        list(ex.map(one, range(n)))
    return lat, wrong[0]


def sandboxd_processes():
    """{pid: comm} of every process of the service on this host."""
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in PROCESSES:
            procs[int(pid)] = comm
    return procs


def rss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def workers_rss(procs):
    return rss_kib([p for p, c in procs.items() if c in ("sandboxd-fcgi", "sandboxd-worker")])


def runs_on_cpu(pid):
    """The times every thread of pid was scheduled in (schedstat's third field), summed."""
    n = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    n += int(f.read().split()[2])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        return None
    return n


def start_sleepers(url, count, seconds, give_up_after=None):
    """count executions of time.sleep(seconds), each on a thread; with give_up_after, each client
    closes its connection after that many seconds. Returns (threads, answers list of (time, status))."""
    answers = []
    lock = threading.Lock()
    host, port = _hostport(url)
    body = json.dumps({"code": "import time; time.sleep(%d); print('woke')" % seconds, "timeout_s": seconds + 20}).encode()

    def one():
        s = socket.create_connection((host, port))
        s.settimeout(give_up_after if give_up_after else seconds + 90)
        s.sendall(b"POST /v1/execute HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        status = 0
        try:
            data = s.recv(65536)
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
            while data:
                data = s.recv(65536)
        except (socket.timeout, OSError):
            status = -1  # the client went away
        finally:
            s.close()
        with lock:
            answers.append((time.monotonic(), status))

    threads = [threading.Thread(target=one, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    return threads, answers


def wait_in_flight(url, at_least=None, at_most=None, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status, _, body = request(url, "GET", "/v1/pool", timeout=10)
        if status == 200:
            n = body.get("in_flight", 0)
            if (at_least is None or n >= at_least) and (at_most is None or n <= at_most):
                return n
        time.sleep(0.1)
    return None


def wait_settled(url, timeout):
    """Until GET /v1/pool shows the pool at its target with nothing in flight, three times a second
    apart; False if not within timeout."""
    end, calm = time.monotonic() + timeout, 0
    while time.monotonic() < end:
        status, _, body = request(url, "GET", "/v1/pool", timeout=10)
        ok = status == 200 and body.get("in_flight") == 0 and body.get("warm") == body.get("target")
        calm = calm + 1 if ok else 0
        if calm >= 3:
            return True
        time.sleep(1)
    return False


def connections_at_once(url, count):
    """count connections opened together, each a POST /v1/execute once all are open: statuses, and
    whether every 503 had Retry-After."""
    host, port = _hostport(url)
    body = json.dumps({"code": "print(7)"}).encode()
    req = (b"POST /v1/execute HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nConnection: close\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    socks = []
    for _ in range(count):
        s = socket.create_connection((host, port))
        s.settimeout(180)
        socks.append(s)
    statuses, no_retry_after = {}, [0]
    lock = threading.Lock()

    def one(s):
        try:
            s.sendall(req)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            data = b""
        finally:
            s.close()
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        status = int(head.split(" ", 2)[1]) if head.startswith("HTTP/") else 0
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status == 503 and "\r\nretry-after:" not in head.lower():
                no_retry_after[0] += 1

    with concurrent.futures.ThreadPoolExecutor(count) as ex:
        list(ex.map(one, socks))
    return statuses, no_retry_after[0]


def run(url, throughput):
    """Runs section I and prints its tables. throughput(concurrency, seconds) is bench/run's (D)."""
    print("\n## I capacity", flush=True)
    procs0 = sandboxd_processes()
    rss_idle = workers_rss(procs0)

    # I1: unloaded.
    pool0 = pool_latencies(url, 200)
    short0, wrong0 = short_executions(url, 4, 100)

    # I2: SLEEPERS sleepers in flight.
    threads, answers = start_sleepers(url, SLEEPERS, SLEEP_S)
    got = wait_in_flight(url, at_least=SLEEPERS, timeout=SLEEP_S / 2)
    rss_loaded = workers_rss(sandboxd_processes())
    pool1 = pool_latencies(url, 200)
    short1, wrong1 = short_executions(url, 4, 100)
    for t in threads:
        t.join()
    last = max(a[0] for a in answers)
    t = time.monotonic()
    request(url, "GET", "/v1/pool", timeout=60)
    after_load = time.monotonic() - last
    sleeper_status = {}
    for _, s in answers:
        sleeper_status[s] = sleeper_status.get(s, 0) + 1

    # I3: a burst whose clients go away.
    threads, answers = start_sleepers(url, SLEEPERS, SLEEP_S, give_up_after=2)
    for t in threads:
        t.join()
    gone_at = max(a[0] for a in answers)
    drained = wait_in_flight(url, at_most=0, timeout=60)
    after_burst = time.monotonic() - gone_at

    # I4: many connections at once.
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], workers_rss(sandboxd_processes()))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    statuses, no_retry = connections_at_once(url, CONNECTIONS)
    stop.set()
    sampler.join()
    procs1 = sandboxd_processes()
    lost = [p for p, c in procs0.items() if c in ("sandboxd-fcgi", "sandboxd-worker", "sandboxd-poold", "sandboxd-broker")
            and p not in procs1]

    # Throughput at concurrency 64 next to 8, each after a few seconds of the same load: the pool
    # grows to what the concurrency needs, as in production.
    throughput(8, 3)
    d8 = throughput(8, 15)
    throughput(64, 5)
    d64 = throughput(64, 15)

    # I5: idle, once the pool is back at its target (machines started for the load retire 10 s
    # after it) and nothing is in flight.
    settled = wait_settled(url, timeout=90)
    time.sleep(2)
    procs = sandboxd_processes()
    before = {p: runs_on_cpu(p) for p in procs}
    time.sleep(IDLE_S)
    after = {p: runs_on_cpu(p) for p in procs}

    p50_0, p50_1 = statistics.median(short0), statistics.median(short1)
    print()
    print("| capacity | value |")
    print("|---|---|")
    print("| I1 GET /v1/pool unloaded, p50 / p99 ms | %.1f / %.1f |" % (statistics.median(pool0) * 1000, percentile(pool0, 99) * 1000))
    print("| I1 print(2**32) at concurrency 4 unloaded, p50 ms (wrong: %d) | %.1f |" % (wrong0, p50_0 * 1000))
    print("| I2 sleepers in flight when measured (of %d) | %s |" % (SLEEPERS, got))
    print("| I2 GET /v1/pool with them, p50 / p99 ms (target p99 <= 20) | %.1f / %.1f |"
          % (statistics.median(pool1) * 1000, percentile(pool1, 99) * 1000))
    print("| I2 print(2**32) at concurrency 4 with them, p50 ms (wrong: %d) | %.1f |" % (wrong1, p50_1 * 1000))
    print("| I2 loaded p50 / unloaded p50 (target <= 3) | %.2f |" % (p50_1 / p50_0))
    print("| I2 sleepers' answers by status | %s |" % ", ".join("%s: %d" % kv for kv in sorted(sleeper_status.items())))
    print("| I2 workers' memory per waiting request, KiB ((loaded - idle RSS) / %d) | %.0f |"
          % (SLEEPERS, (rss_loaded - rss_idle) / SLEEPERS))
    print("| I3 GET /v1/pool answered, s after the last sleeper's answer (target <= 5) | %.2f |" % after_load)
    print("| I3 burst of %d whose clients left after 2 s: nothing in flight, s after they left | %s |"
          % (SLEEPERS, "%.2f" % after_burst if drained is not None else "not within 60"))
    print("| I4 %d connections at once: answers by status | %s |" % (CONNECTIONS, ", ".join("%s: %d" % kv for kv in sorted(statuses.items()))))
    print("| I4 503s without Retry-After | %d |" % no_retry)
    print("| I4 sandboxd processes that died | %d |" % len(lost))
    print("| I4 workers' RSS idle / peak, MiB | %.1f / %.1f |" % (rss_idle / 1024, peak[0] / 1024))
    for name, (ok, errors, crossed, elapsed, _cpu, _faults) in (("8", d8), ("64", d64)):
        print("| D throughput at concurrency %s, executions/s (errors %d, crossed %d) | %.1f |" % (name, errors, crossed, ok / elapsed))
    print()
    print("| I5 idle %d s%s: process | count | times scheduled in, most of one |" % (IDLE_S, "" if settled else " (the pool had not settled)"))
    print("|---|---|---|")
    for comm in PROCESSES:
        runs = [after[p] - before[p] for p, c in procs.items() if c == comm and before.get(p) is not None and after.get(p) is not None]
        if runs:
            print("| %s | %d | %d |" % (comm, len(runs), max(runs)))
    ok = (not wrong0 and not wrong1 and not lost and not no_retry and set(statuses) <= {200, 503} and settled)
    return ok
