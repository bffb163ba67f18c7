#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load through the cluster's front: N requests at concurrency C, mixed: executions in Python, node
and bash on /v1/execute, reference 004's /execute, GET /v1/pool, and runs in S sessions made through
the front (each on the member its id names).

Checks: no request lost (each execution answers 200 with its own tag; each session run answers 200
and its session's counter, a variable kept from run to run, ends at the number of runs sent to it,
none twice), and with --members, every member named there answered at least a fifth of them
(X-Sandboxd-Member, which the front sets). Prints "lost N" and the count per member.

Usage: tests/cluster/load.py --url URL [--requests 1000] [--concurrency 12] [--sessions 6]
                             [--netns NS] [--members m1,m2,m3]
"""

import argparse
import collections
import concurrent.futures
import http.client
import json
import os
import random
import sys
import time
import urllib.parse


def request(url, method, path, body=None):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=180)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"content-type": "application/json"} if data else {})
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        return resp.status, resp.getheader("X-Sandboxd-Member", ""), text
    except OSError as e:
        return 0, "", "connection: %s" % e
    finally:
        conn.close()


def job(url, kind, tag, sessions):
    """One request; (ok, member, what went wrong)."""
    if kind == "python":
        status, member, text = request(url, "POST", "/v1/execute", {"code": "print(%d)" % tag})
        want = "%d\n" % tag
    elif kind == "node":
        status, member, text = request(url, "POST", "/v1/execute", {"language": "node", "code": "console.log(%d)" % tag})
        want = "%d\n" % tag
    elif kind == "bash":
        status, member, text = request(url, "POST", "/v1/execute", {"language": "bash", "code": "echo %d" % tag})
        want = "%d\n" % tag
    elif kind == "execute004":
        status, member, text = request(url, "POST", "/execute", {"code": "print(%d)" % tag})
        want = "%d\n" % tag
    elif kind == "pool":
        status, member, text = request(url, "GET", "/v1/pool")
        ok = status == 200 and "warm" in text
        return ok, member, None if ok else "pool: %d %s" % (status, text[:200])
    else:
        sid = sessions[tag % len(sessions)]
        # A session takes a few runs waiting at most; past them it says busy (503, Retry-After), and a
        # client waits and sends again, as this one does.
        for _ in range(10):
            status, member, text = request(url, "POST", "/v1/sessions/%s/run" % sid,
                                           {"language": "python", "code": "n = globals().get('n', 0) + 1\nprint('run', n)"})
            if status != 503 or "busy" not in text:
                break
            time.sleep(0.5)
        ok = status == 200 and sid.split("-")[1] == member and json.loads(text)["result"]["stdout"].startswith("run ")
        return ok, member, None if ok else "session %s: %d %s %s" % (sid, status, member, text[:200])
    try:
        ok = status == 200 and json.loads(text).get("stdout") == want
    except ValueError:
        ok = False
    return ok, member, None if ok else "%s %d: %d %s %s" % (kind, tag, status, member, text[:200])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--requests", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=12)
    p.add_argument("--sessions", type=int, default=6)
    p.add_argument("--netns")
    p.add_argument("--members", default="")
    a = p.parse_args()
    if a.netns:
        # The whole client in the namespace whose addresses reach the front.
        args = [x for x in sys.argv[1:]]
        i = args.index("--netns")
        del args[i:i + 2]
        os.execvp("ip", ["ip", "netns", "exec", a.netns, sys.executable, os.path.abspath(__file__)] + args)

    sessions = []
    for _ in range(a.sessions):
        status, _, text = request(a.url, "POST", "/v1/sessions", {})
        if status != 201:
            print("a session could not be made: %d %s" % (status, text[:200]))
            return 1
        sessions.append(json.loads(text)["session_id"])
    kinds = ["python"] * 40 + ["node"] * 10 + ["bash"] * 10 + ["execute004"] * 15 + ["pool"] * 5
    if sessions:
        kinds += ["session"] * 20
    rnd = random.Random(25)
    plan = [rnd.choice(kinds) for _ in range(a.requests)]
    runs = collections.Counter(sessions[i % len(sessions)] for i, k in enumerate(plan) if k == "session")

    started = time.monotonic()
    per_member = collections.Counter()
    lost = []
    with concurrent.futures.ThreadPoolExecutor(a.concurrency) as pool:
        for ok, member, why in pool.map(lambda ik: job(a.url, ik[1], ik[0], sessions), enumerate(plan)):
            per_member[member or "-"] += 1
            if not ok:
                lost.append(why)
    took = time.monotonic() - started

    # Each session counted every run sent to it, once.
    for sid in sessions:
        status, member, text = request(a.url, "POST", "/v1/sessions/%s/run" % sid, {"language": "python", "code": "print(n if 'n' in globals() else 0)"})
        got = json.loads(text)["result"]["stdout"].strip() if status == 200 else "HTTP %d" % status
        if got != str(runs[sid]):
            lost.append("session %s counted %s runs, %d were sent" % (sid, got, runs[sid]))
        request(a.url, "DELETE", "/v1/sessions/%s" % sid)

    for why in lost[:20]:
        print("lost:", why)
    print("requests %d in %.1f s (%.1f/s), concurrency %d, sessions %d" % (a.requests, took, a.requests / took, a.concurrency, len(sessions)))
    print("per member: " + ", ".join("%s %d" % kv for kv in sorted(per_member.items())))
    print("lost %d" % len(lost))
    short = [m for m in a.members.split(",") if m and per_member[m] < a.requests / 5]
    if short:
        print("members below a fifth of the requests: %s" % ", ".join(short))
    return 1 if lost or short else 0


if __name__ == "__main__":
    sys.exit(main())
