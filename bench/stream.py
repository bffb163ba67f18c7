#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Section J of bench/run: streamed output (Accept: text/event-stream).

  J1 delay from the code's flush to its event reaching this client, through nginx: a snippet prints
     the wall clock (time.time_ns(), one kernel clock for the sandbox and the host) then flushes, 20
     ms apart; the client notes when each event arrives. Side by side: the same snippet run by a bare
     /usr/bin/python3 with its stdout a pipe to this process.
  J2 100 streams at once, each printing numbered lines over a few seconds: every stream must end
     with its result, every chunk in order, and what the events carried equal to the result's stdout.

Usage: bench/stream.py [--url URL]; bench/run runs it after section I. Exit status 1 when J2 finds a
stream that did not complete or a chunk out of order.
"""
import argparse
import concurrent.futures
import http.client
import json
import statistics
import subprocess
import sys
import time
import urllib.parse

LINES = 100
DELAY_CODE = "import time\nfor _ in range(%d):\n    print(time.time_ns(), flush=True)\n    time.sleep(0.02)\n" % LINES
STREAMS = 100
STREAM_LINES = 20
ORDER_CODE = "import time\nfor i in range(%d):\n    print('%%s %%d' %% (TAG, i), flush=True)\n    time.sleep(0.1)\n" % STREAM_LINES


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def events(url, body):
    """(status, [(arrival time_ns, event, data)]) of one streamed request."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=300)
    conn.request("POST", "/v1/execute", body=json.dumps(body), headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    resp = conn.getresponse()
    if resp.status != 200 or not resp.getheader("Content-Type", "").startswith("text/event-stream"):
        return resp.status, [(time.time_ns(), "body", resp.read().decode("utf-8", "replace"))]
    out, event, data = [], "", []
    while True:
        raw = resp.readline()
        if not raw:
            break
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                out.append((time.time_ns(), event, json.loads("\n".join(data))))
            event, data = "", []
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
    conn.close()
    return resp.status, out


def delays_from_lines(pairs):
    """[(arrival ns, text)] -> the delay in ms of each line whose text is a time_ns it was printed at."""
    ds = []
    for arrived, text in pairs:
        for line in text.splitlines():
            if line.strip().isdigit():
                ds.append((arrived - int(line)) / 1e6)
    return ds


def j1(url, runs=3):
    service, bare = [], []
    for _ in range(runs):
        status, evs = events(url, {"code": DELAY_CODE, "timeout_s": 30})
        if status != 200:
            raise SystemExit("sandboxd answered %d %s" % (status, evs))
        service += delays_from_lines([(t, d["data"]) for t, e, d in evs if e == "stdout" and not d["base64"]])
        p = subprocess.Popen(["/usr/bin/python3", "-c", DELAY_CODE], stdout=subprocess.PIPE)
        pairs = []
        for line in p.stdout:
            pairs.append((time.time_ns(), line.decode()))
        p.wait()
        bare += delays_from_lines(pairs)
    return service, bare


def j2(url):
    def one(i):
        tag = "s%03d" % i
        t = time.monotonic()
        try:
            status, evs = events(url, {"code": "TAG = %r\n" % tag + ORDER_CODE, "timeout_s": 60})
        except (OSError, http.client.HTTPException) as e:
            return "failed", str(e), time.monotonic() - t
        took = time.monotonic() - t
        if status != 200:
            return "failed", "status %d: %s" % (status, evs[0][2][:200]), took
        if not evs or evs[-1][1] != "result":
            return "failed", "no result event last", took
        streamed = "".join(d["data"] for _, e, d in evs if e == "stdout")
        want = "".join("%s %d\n" % (tag, k) for k in range(STREAM_LINES))
        if streamed != want:
            return "disorder", "streamed %r" % streamed[:200], took
        if evs[-1][2].get("stdout") != want:
            return "disorder", "result %r" % evs[-1][2], took
        return "ok", "", took

    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(STREAMS) as ex:
        results = list(ex.map(one, range(STREAMS)))
    return results, time.monotonic() - t


def run(url):
    service, bare = j1(url)
    print()
    print("| J1 flush to event, %d lines x 3 runs | median ms | p99 ms | max ms |" % LINES)
    print("|---|---|---|---|")
    for name, xs in (("sandboxd stream via nginx", service), ("bare /usr/bin/python3, stdout a pipe", bare)):
        print("| %s | %.2f | %.2f | %.2f |" % (name, statistics.median(xs), percentile(xs, 99), max(xs)))
    print("J1 sandboxd p50 %.2f ms (target <= 10), p99 %.2f ms (target <= 50); median ratio to the bare pipe: %.1f"
          % (statistics.median(service), percentile(service, 99), statistics.median(service) / max(statistics.median(bare), 1e-3)))
    results, elapsed = j2(url)
    ok = sum(1 for r in results if r[0] == "ok")
    took = [r[2] for r in results if r[0] == "ok"]
    print()
    print("J2 %d streams at once, %d lines each 0.1 s apart: %d complete and in order, %d failed, %d out of order; "
          "in %.1f s (each stream median %.1f s, max %.1f s)"
          % (STREAMS, STREAM_LINES, ok, sum(1 for r in results if r[0] == "failed"), sum(1 for r in results if r[0] == "disorder"),
             elapsed, statistics.median(took) if took else 0, max(took) if took else 0))
    for r in [r for r in results if r[0] != "ok"][:5]:
        print("  %s: %s" % (r[0], r[1]))
    return ok == STREAMS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    args = ap.parse_args()
    sys.exit(0 if run(args.url) else 1)


if __name__ == "__main__":
    main()
