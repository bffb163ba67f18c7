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
  (I6) a pause storm: STORM_SESSIONS sessions (ttl_s STORM_TTL_S), used at once and so idle from the
       same moment, paused together by the pool manager while print(2**32) runs at concurrency 4 and
       GET /v1/pool is asked every POOL_EVERY_S: the executions' p50 against their p50 under the same
       load for BASE_S just before (no storm), and the pool's p99, over the storm (from the moment they
       turn idle until every one is paused, and a second more). STORM_ROUNDS storms, each of the
       sessions used again (resumed) and left idle again; the figures over all of them. Needs
       SANDBOXD_SESSIONS_MAX >= STORM_SESSIONS.

Alone: bench/capacity.py [--url URL] [I2] [I5] [I6] runs only those parts (I1's unloaded figures with
I2), each bounded in time; bench/run runs them all.
"""

import argparse
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
STORM_SESSIONS = 20
STORM_TTL_S = 15
STORM_MAX_S = 60  # the longest one storm is followed: past it, the sessions still active are counted
STORM_ROUNDS = 3
BASE_S = 4
POOL_EVERY_S = 0.01
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


def short_executions(url, concurrency, n, outside=None):
    """n print(2**32) at concurrency: (latencies, wrong answers). With outside (a list), the part of
    each latency outside the runner's own duration_ms is appended to it: claim, transport, reply."""
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
            elif outside is not None and isinstance(body.get("duration_ms"), (int, float)):
                outside.append(dt - body["duration_ms"] / 1000)

    with concurrent.futures.ThreadPoolExecutor(concurrency) as ex:
        list(ex.map(one, range(n)))
    return lat, wrong[0]


def cpu_snapshot():
    """(idle ticks, total ticks) of the host's CPUs and {pid: (name, ticks)} of every process, from
    /proc. A kernel worker's name without what it works on now (kworker/u8:3+netns is kworker/u8:3):
    that changes from one moment to the next."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle, total = v[3] + v[4], sum(v[:8])
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                text = f.read()
        except OSError:
            continue
        comm, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        if comm.startswith("kworker/"):
            comm = "kworker (%s)" % ("unbound" if comm.startswith("kworker/u") else "per-CPU")
        procs[pid] = (comm, int(rest[11]) + int(rest[12]))
    return idle, total, procs


def cpu_between(a, b, executions):
    """The host's idle CPUs over [a, b], and the processes' CPU ms per execution by name, most first
    (processes that ended meanwhile are not counted)."""
    ncpu = os.cpu_count() or 1
    idle = ncpu * (b[0] - a[0]) / max(1, b[1] - a[1])
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    per = {}
    for pid, (comm, ticks) in b[2].items():
        used = ticks - a[2].get(pid, (comm, 0))[1]
        if used > 0:
            per[comm] = per.get(comm, 0) + used * tick_ms / executions
    return idle, sorted(per.items(), key=lambda kv: -kv[1])


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


def under_sleepers(url):
    """I1 and I2: GET /v1/pool and print(2**32) at concurrency 4, unloaded and then with SLEEPERS
    sleepers in flight, in one run; then how soon after the last sleeper's answer the pool answers."""
    out = {}
    out["pool0"] = pool_latencies(url, 200)
    out["outside0"], out["outside1"] = [], []
    a, out["wall0"] = cpu_snapshot(), [time.time()]
    out["short0"], out["wrong0"] = short_executions(url, 4, 100, out["outside0"])
    out["wall0"].append(time.time())
    out["cpu0"] = cpu_between(a, cpu_snapshot(), 100)
    threads, answers = start_sleepers(url, SLEEPERS, SLEEP_S)
    out["got"] = wait_in_flight(url, at_least=SLEEPERS, timeout=SLEEP_S / 2)
    out["rss_loaded"] = workers_rss(sandboxd_processes())
    out["pool_counters"] = request(url, "GET", "/v1/pool", timeout=30)[2]
    out["pool1"] = pool_latencies(url, 200)
    a, out["wall1"] = cpu_snapshot(), [time.time()]
    out["short1"], out["wrong1"] = short_executions(url, 4, 100, out["outside1"])
    out["wall1"].append(time.time())
    out["cpu1"] = cpu_between(a, cpu_snapshot(), 100)
    out["pool_counters_after"] = request(url, "GET", "/v1/pool", timeout=30)[2]
    for t in threads:
        t.join()
    last = max(a[0] for a in answers)
    request(url, "GET", "/v1/pool", timeout=60)
    out["after_load"] = time.monotonic() - last
    out["sleeper_status"] = {}
    for _, st in answers:
        out["sleeper_status"][st] = out["sleeper_status"].get(st, 0) + 1
    return out


def print_sleepers(i2):
    p50_0, p50_1 = statistics.median(i2["short0"]), statistics.median(i2["short1"])
    print()
    print("| sleepers | value |")
    print("|---|---|")
    print("| I1 print(2**32) at concurrency 4 unloaded, p50 ms (wrong: %d) | %.1f |" % (i2["wrong0"], p50_0 * 1000))
    print("| I2 sleepers in flight when measured (of %d) | %s |" % (SLEEPERS, i2["got"]))
    print("| I2 pool counters before / after the short executions | %s / %s |" % (json.dumps(i2["pool_counters"]), json.dumps(i2["pool_counters_after"])))
    print("| I2 GET /v1/pool with them, p50 / p99 ms (target p99 <= 20) | %.1f / %.1f |"
          % (statistics.median(i2["pool1"]) * 1000, percentile(i2["pool1"], 99) * 1000))
    print("| I2 print(2**32) at concurrency 4 with them, p50 ms (wrong: %d) | %.1f |" % (i2["wrong1"], p50_1 * 1000))
    print("| I2 loaded p50 / unloaded p50 (target <= 3) | %.2f |" % (p50_1 / p50_0))
    print("| I2 sleepers' answers by status | %s |" % ", ".join("%s: %d" % kv for kv in sorted(i2["sleeper_status"].items())))
    for phase, label in (("0", "unloaded"), ("1", "with sleepers")):
        outside, (idle, per) = i2["outside" + phase], i2["cpu" + phase]
        print("| I2 %s: p50 outside the runner's duration_ms, ms | %.1f |" % (label, statistics.median(outside) * 1000 if outside else -1))
        print("| I2 %s: host CPUs idle meanwhile (of %d) | %.2f |" % (label, os.cpu_count() or 1, idle))
        print("| I2 %s: CPU ms per execution, by process name (top 10) | %s |"
              % (label, ", ".join("%s %.1f" % kv for kv in per[:10])))
        print("| I2 %s: from / to (unix time, for the journal's CLAIM_USEC and EXCHANGE_USEC) | %.3f / %.3f |"
              % (label, i2["wall" + phase][0], i2["wall" + phase][1]))


def session_states(url, ids):
    """{state: count} of the sessions ids, from one GET /v1/sessions."""
    status, _, body = request(url, "GET", "/v1/sessions", timeout=30)
    states = {}
    if status == 200 and isinstance(body, dict):
        for s in body.get("sessions", []):
            if s.get("session_id") in ids:
                states[s.get("state")] = states.get(s.get("state"), 0) + 1
    return states


def session_run_all(url, ids, concurrency):
    """print(1) in each session at concurrency: the time the last answer came, or None if one failed."""
    def one(sid):
        status, _, body = request(url, "POST", "/v1/sessions/%s/run" % sid, {"language": "python", "code": "print(1)"}, timeout=120)
        return status == 200 and isinstance(body, dict) and body.get("result", {}).get("stdout") == "1\n"

    with concurrent.futures.ThreadPoolExecutor(concurrency) as ex:
        ok = all(ex.map(one, ids))
    return time.monotonic() if ok else None


def storm_load(url, stop):
    """print(2**32) at concurrency 4 and GET /v1/pool every POOL_EVERY_S until stop is set:
    ([(start, latency)] of the executions, wrong answers, [(start, latency)] of the pool's answers)."""
    execs, pools, wrong = [], [], [0]
    lock = threading.Lock()

    def executions():
        while not stop.is_set():
            t = time.monotonic()
            status, _, body = request(url, "POST", "/v1/execute", {"code": "print(2**32)"})
            with lock:
                execs.append((t, time.monotonic() - t))
                if status != 200 or body.get("stdout") != "4294967296\n":
                    wrong[0] += 1

    def pool():
        while not stop.is_set():
            t = time.monotonic()
            request(url, "GET", "/v1/pool", timeout=30)
            pools.append((t, time.monotonic() - t))
            stop.wait(POOL_EVERY_S)

    threads = [threading.Thread(target=executions, daemon=True) for _ in range(4)] + [threading.Thread(target=pool, daemon=True)]
    for t in threads:
        t.start()
    return threads, execs, wrong, pools


def storm_round(url, ids):
    """One storm: the same load first for BASE_S without one (the figures to compare with), then the
    sessions used together and followed until all are paused."""
    stop = threading.Event()
    threads, execs, base_wrong, pools = storm_load(url, stop)
    time.sleep(BASE_S)
    stop.set()
    for t in threads:
        t.join()
    base, base_pool, base_wrong = [d for _, d in execs], [d for _, d in pools], base_wrong[0]
    touched = session_run_all(url, ids, len(ids))
    if touched is None:
        return {"error": "a run in a session failed"}
    idle_at = touched + STORM_TTL_S
    time.sleep(max(0, idle_at - 2 - time.monotonic()))
    stop = threading.Event()
    threads, execs, wrong, pools = storm_load(url, stop)
    states, first_paused, all_paused = {}, None, None
    while time.monotonic() < idle_at + STORM_MAX_S:
        states = session_states(url, set(ids))
        now = time.monotonic()
        if states.get("paused") and first_paused is None:
            first_paused = now
        if states.get("paused", 0) == len(ids):
            all_paused = now
            break
        time.sleep(0.1)
    end = (all_paused or time.monotonic()) + 1
    time.sleep(max(0, end - time.monotonic()))
    stop.set()
    for t in threads:
        t.join()
    return {"base": base, "base_pool": base_pool, "base_wrong": base_wrong, "wrong": wrong[0],
            "during": [d for t, d in execs if idle_at <= t <= end], "pool": [d for t, d in pools if idle_at <= t <= end],
            "first_paused": [(first_paused - idle_at) if first_paused else None],
            "all_paused": [(all_paused - idle_at) if all_paused else None], "states": states}


def pause_storm(url):
    """I6. Returns a dict of the figures over STORM_ROUNDS storms, or {"error": why}."""
    ids = []
    try:
        for _ in range(STORM_SESSIONS):
            status, _, body = request(url, "POST", "/v1/sessions", {"ttl_s": STORM_TTL_S}, timeout=120)
            if status != 201:
                return {"error": "creating session %d answered %d %s (SANDBOXD_SESSIONS_MAX >= %d?)"
                        % (len(ids) + 1, status, (body or {}).get("error", ""), STORM_SESSIONS)}
            ids.append(body["session_id"])
        # Their machines up (the first run starts each), before the first storm.
        if session_run_all(url, ids, 4) is None:
            return {"error": "a first run in a session failed"}
        total = None
        for _ in range(STORM_ROUNDS):
            st = storm_round(url, ids)
            if "error" in st:
                return st
            if total is None:
                total = st
            else:
                for k in ("base", "base_pool", "during", "pool", "first_paused", "all_paused"):
                    total[k] += st[k]
                total["base_wrong"] += st["base_wrong"]
                total["wrong"] += st["wrong"]
                total["states"] = st["states"]
        return total
    finally:
        for sid in ids:
            request(url, "DELETE", "/v1/sessions/%s" % sid, timeout=120)


def print_storm(st):
    print()
    print("| pause storm | value |")
    print("|---|---|")
    if "error" in st:
        print("| I6 not measured | %s |" % st["error"])
        return False
    p50_0 = statistics.median(st["base"])
    print("| I6 the same load for %d s before each storm (%d sessions idle or paused): print(2**32) count, p50 ms (wrong: %d) | %d, %.1f |"
          % (BASE_S, STORM_SESSIONS, st["base_wrong"], len(st["base"]), p50_0 * 1000))
    print("| I6 GET /v1/pool then: count, p50 / p99 / max ms | %d, %.1f / %.1f / %.1f |"
          % (len(st["base_pool"]), statistics.median(st["base_pool"]) * 1000, percentile(st["base_pool"], 99) * 1000, max(st["base_pool"]) * 1000))

    def secs(xs):
        return ", ".join("%.2f" % x if x is not None else "never" for x in xs)

    print("| I6 %d sessions paused by their idle timer, %d storms: first paused, s after they turned idle | %s |"
          % (STORM_SESSIONS, STORM_ROUNDS, secs(st["first_paused"])))
    print("| I6 last paused, s after they turned idle (within %d s; last states %s) | %s |"
          % (STORM_MAX_S, json.dumps(st["states"]), secs(st["all_paused"])))
    if st["during"]:
        p50_1 = statistics.median(st["during"])
        print("| I6 print(2**32) at concurrency 4 meanwhile: count, p50 ms (wrong: %d) | %d, %.1f |" % (st["wrong"], len(st["during"]), p50_1 * 1000))
        print("| I6 storm p50 / idle p50 (target <= 1.5) | %.2f |" % (p50_1 / p50_0))
    else:
        print("| I6 print(2**32) at concurrency 4 meanwhile | none answered |")
    if st["pool"]:
        print("| I6 GET /v1/pool meanwhile: count, p50 / p99 / max ms (target p99 <= 20) | %d, %.1f / %.1f / %.1f |"
              % (len(st["pool"]), statistics.median(st["pool"]) * 1000, percentile(st["pool"], 99) * 1000, max(st["pool"]) * 1000))
    return not st["wrong"] and not st["base_wrong"] and None not in st["all_paused"]


def idle_wakeups(url):
    """I5: idle, once the pool is back at its target (machines started for a load retire 10 s after
    it) and nothing is in flight: (settled, processes, runs before, runs after)."""
    settled = wait_settled(url, timeout=90)
    time.sleep(2)
    procs = sandboxd_processes()
    before = {p: runs_on_cpu(p) for p in procs}
    time.sleep(IDLE_S)
    after = {p: runs_on_cpu(p) for p in procs}
    return settled, procs, before, after


def print_idle(settled, procs, before, after):
    print()
    print("| I5 idle %d s%s: process | count | times scheduled in, most of one |" % (IDLE_S, "" if settled else " (the pool had not settled)"))
    print("|---|---|---|")
    for comm in PROCESSES:
        runs = [after[p] - before[p] for p, c in procs.items() if c == comm and before.get(p) is not None and after.get(p) is not None]
        if runs:
            print("| %s | %d | %d |" % (comm, len(runs), max(runs)))


def run(url, throughput):
    """Runs section I and prints its tables. throughput(concurrency, seconds) is bench/run's (D)."""
    print("\n## I capacity", flush=True)
    procs0 = sandboxd_processes()
    rss_idle = workers_rss(procs0)

    i2 = under_sleepers(url)
    pool0, short0, wrong0, pool1, short1, wrong1 = (i2[k] for k in ("pool0", "short0", "wrong0", "pool1", "short1", "wrong1"))
    got, rss_loaded, after_load, sleeper_status = (i2[k] for k in ("got", "rss_loaded", "after_load", "sleeper_status"))

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

    settled, procs, before, after = idle_wakeups(url)

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
    print_idle(settled, procs, before, after)
    # I6: the pause storm, once the machines of I5's pool are idle again.
    storm_ok = print_storm(pause_storm(url))
    ok = (not wrong0 and not wrong1 and not lost and not no_retry and set(statuses) <= {200, 503} and settled and storm_ok)
    return ok


def main():
    ap = argparse.ArgumentParser(description="parts of section I alone")
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("parts", nargs="+", choices=("I2", "I5", "I6"))
    args = ap.parse_args()
    if not args.url.startswith(("http://127.0.0.1:", "http://localhost:")):
        raise SystemExit("capacity.py only measures a service on loopback")
    ok = True
    if "I2" in args.parts:
        print_sleepers(under_sleepers(args.url))
    if "I5" in args.parts:
        settled, procs, before, after = idle_wakeups(args.url)
        print_idle(settled, procs, before, after)
        ok = ok and settled
    if "I6" in args.parts:
        ok = print_storm(pause_storm(args.url)) and ok
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
