#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load test: N executions at concurrency C, mixed with timeouts and bombs, against loopback only.

Checks: no lost or crossed response (each normal execution prints its own tag), each timeout and
each bomb answered as such, every request's X-Request-Id recorded in sqlite (with a final status)
and in journald, and the pool back at its target afterwards. Bounded in count and time.

Usage: tests/load/load.py [--url URL] [-n 1000] [-c 16] [--deadline 1200]
"""

import argparse
import concurrent.futures
import http.client
import json
import random
import sqlite3
import subprocess
import sys
import time
import urllib.parse

MESSAGE_ID = "8c2f1d5e6a3b4c7d9e0f1a2b3c4d5e6f"


def job(kind, tag):
    if kind == "timeout":
        return {"code": "while True: pass", "timeout_s": 1}
    if kind == "memory":
        return {"code": "b = bytearray(2 << 30)\nfor i in range(0, len(b), 4096): b[i] = 1", "timeout_s": 30}
    if kind == "fork":
        return {"code": "import os, time\nfor _ in range(1000):\n    try:\n        if os.fork() == 0:\n            time.sleep(30); os._exit(0)\n    except OSError:\n        break\nprint('forked')", "timeout_s": 30}
    return {"code": "print(%d)" % tag}


def check(kind, tag, status, body):
    if status != 200:
        return "HTTP %d %s" % (status, body)
    if kind == "timeout":
        ok = body.get("exit_code") == -1 and body.get("stderr") == "timed out after 1s"
    elif kind == "memory":
        ok = body.get("limit_exceeded") == "memory"
    elif kind == "fork":
        ok = body.get("limit_exceeded") == "tasks" and body.get("stdout") == "forked\n"
    else:
        ok = body.get("stdout") == "%d\n" % tag and body.get("exit_code") == 0
    return None if ok else "%s %d: wrong answer %s" % (kind, tag, json.dumps(body)[:300])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-c", type=int, default=16)
    ap.add_argument("--deadline", type=int, default=1200, help="seconds; the run stops sending after this")
    ap.add_argument("--db", default="/var/lib/sandboxd/db/sandboxd.db")
    ap.add_argument("--host-cmd", default="sandboxd-host exec")
    args = ap.parse_args()
    u = urllib.parse.urlparse(args.url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("load.py only targets loopback")

    rng = random.Random(42)
    kinds = [rng.choices(["print", "timeout", "memory", "fork"], [92, 4, 2, 2])[0] for _ in range(args.n)]
    end = time.monotonic() + args.deadline
    started = time.strftime("%Y-%m-%d %H:%M:%S")

    def run(i):
        if time.monotonic() > end:
            return i, None, None, "not sent: deadline"
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=180)
        try:
            conn.request("POST", "/v1/execute", body=json.dumps(job(kinds[i], i)), headers={"content-type": "application/json"})
            r = conn.getresponse()
            body = json.loads(r.read())
            return i, r.getheader("X-Request-Id"), (r.status, body), None
        except Exception as e:
            return i, None, None, "transport: %r" % e
        finally:
            conn.close()

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.c) as ex:
        results = list(ex.map(run, range(args.n)))
    elapsed = time.monotonic() - t0

    problems, rids = [], []
    for i, rid, resp, err in results:
        if err:
            problems.append("%d: %s" % (i, err))
            continue
        rids.append(rid)
        p = check(kinds[i], i, *resp)
        if p:
            problems.append(p)

    # Every request recorded, with its final status, in sqlite ...
    db = sqlite3.connect(args.db, timeout=30)
    missing_db = [r for r in rids if db.execute("SELECT status FROM requests WHERE request_id = ?", (r,)).fetchone() in (None, (None,))]
    # ... and in journald.
    time.sleep(2)
    out = subprocess.run(args.host_cmd.split() + ["journalctl", "-q", "-o", "json", "--since", started, "MESSAGE_ID=" + MESSAGE_ID],
                         capture_output=True, text=True).stdout
    journaled = {json.loads(l).get("REQUEST_ID") for l in out.splitlines() if l.strip()}
    missing_journal = [r for r in rids if r not in journaled]

    # The pool back at its target: refilled, and shrunk back from what the load made it grow to
    # (the pool manager holds the extra sandboxes for 10 s after the last wait, then retires them).
    pool = {}
    for _ in range(600):
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=10)
        c.request("GET", "/v1/pool")
        pool = json.loads(c.getresponse().read())
        if pool["warm"] == pool["target"] and pool["in_flight"] == 0:
            break
        time.sleep(0.1)

    counts = {k: kinds.count(k) for k in set(kinds)}
    print("load: %d executions %s at concurrency %d in %.0f s (%.1f/s)" % (len(rids), counts, args.c, elapsed, len(rids) / elapsed))
    print("load: %d problems, %d not in sqlite, %d not in journald, pool %s" % (len(problems), len(missing_db), len(missing_journal), pool))
    for p in problems[:20]:
        print("  " + p)
    failed = problems or missing_db or missing_journal or pool.get("warm") != pool.get("target") or pool.get("in_flight")
    print("%d passed, %d failed" % (len(rids) - len(problems), len(problems) + len(missing_db) + len(missing_journal)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
