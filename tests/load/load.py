#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load test: N requests at concurrency C: executions mixed with timeouts and bombs, and runs in a
few sessions, against loopback only.

Checks: no lost or crossed response (each normal execution prints its own tag; each session run
prints its tag and how many runs its session has counted, in a variable kept from run to run, so
that at the end each session has counted every run sent to it, none twice), each timeout and each
bomb answered as such, every request's X-Request-Id recorded in sqlite (with a final status) and in
journald, the sessions deleted with nothing left, and the pool back at its target afterwards.
Bounded in count and time.

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


SESSIONS = 4


def job(kind, tag):
    if kind == "session":
        return {"language": "python", "code": "n = globals().get('n', 0) + 1\nprint(%d, n)" % tag}
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
    if kind == "session":
        out = body.get("result", {}).get("stdout", "").split()
        ok = body.get("status") == "success" and len(out) == 2 and out[0] == str(tag) and not body["session"]["state_reset"]
    elif kind == "timeout":
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

    def call(method, path, body=None):
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=60)
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None, headers={"content-type": "application/json"})
            r = c.getresponse()
            return r.status, json.loads(r.read())
        finally:
            c.close()

    sessions = []
    for _ in range(SESSIONS):
        status, body = call("POST", "/v1/sessions", {"ttl_s": 3600})
        if status != 201:
            sys.exit("load: could not create a session: %d %s" % (status, body))
        sessions.append(body["session_id"])

    rng = random.Random(42)
    kinds = [rng.choices(["print", "timeout", "memory", "fork", "session"], [82, 4, 2, 2, 10])[0] for _ in range(args.n)]
    where = {i: sessions[rng.randrange(SESSIONS)] for i in range(args.n) if kinds[i] == "session"}
    end = time.monotonic() + args.deadline
    started = time.strftime("%Y-%m-%d %H:%M:%S")

    def run(i):
        if time.monotonic() > end:
            return i, None, None, "not sent: deadline"
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=180)
        try:
            path = "/v1/sessions/%s/run" % where[i] if kinds[i] == "session" else "/v1/execute"
            conn.request("POST", path, body=json.dumps(job(kinds[i], i)), headers={"content-type": "application/json"})
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

    # Each session counted every run that reached it, each once: the runs took turns, and the
    # interpreter's state was kept from one to the next.
    for sid in sessions:
        sent = sum(1 for i, rid, resp, err in results if not err and where.get(i) == sid and resp[0] == 200)
        status, body = call("POST", "/v1/sessions/%s/run" % sid, {"language": "python", "code": "print(n)"})
        got = body.get("result", {}).get("stdout", "").strip() if status == 200 else "HTTP %d" % status
        if got != str(sent):
            problems.append("session %s counted %s runs, %d were answered" % (sid, got, sent))
        status, body = call("DELETE", "/v1/sessions/" + sid)
        if status != 200:
            problems.append("session %s: DELETE answered %d %s" % (sid, status, body))
    left = subprocess.run(args.host_cmd.split() + ["systemctl", "list-units", "--all", "--plain", "--no-legend", "session-*", "run-sandboxd-disks-*"],
                          capture_output=True, text=True).stdout.strip()
    if left:
        problems.append("left after the sessions were deleted: " + left.replace("\n", "; "))

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
    print("load: %d requests %s (runs in %d sessions) at concurrency %d in %.0f s (%.1f/s)" % (len(rids), counts, SESSIONS, args.c, elapsed,
                                                                                          len(rids) / elapsed))
    print("load: %d problems, %d not in sqlite, %d not in journald, pool %s" % (len(problems), len(missing_db), len(missing_journal), pool))
    for p in problems[:20]:
        print("  " + p)
    failed = problems or missing_db or missing_journal or pool.get("warm") != pool.get("target") or pool.get("in_flight")
    print("%d passed, %d failed" % (len(rids) - len(problems), len(problems) + len(missing_db) + len(missing_journal)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
