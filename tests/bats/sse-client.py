#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A client of sandboxd's event streams, as a caller would write one: it parses the stream as the
WHATWG HTML standard's event-stream interpretation does and says when each event arrived.

  sse-client.py URL BODY_FILE [--stop-after N]
      POSTs the body (JSON) with Accept: text/event-stream and prints, one JSON object a line:
      {"status", "content_type", "buffering"} first, then {"t", "event", "data"} for each event (t:
      seconds since the request was sent; data parsed as JSON) and {"t", "comment"} for each comment.
      A response that is no stream: {"status", "content_type", "body"}. --stop-after N: hangs up
      after the Nth event, as a client that goes away does.
"""
import http.client
import json
import sys
import time
import urllib.parse


def main():
    args = sys.argv[1:]
    stop_after = None
    if "--stop-after" in args:
        i = args.index("--stop-after")
        stop_after = int(args[i + 1])
        del args[i:i + 2]
    url, body_file = args
    u = urllib.parse.urlsplit(url)
    with open(body_file, "rb") as f:
        body = f.read()
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=900)
    start = time.monotonic()
    conn.request("POST", u.path, body=body, headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    resp = conn.getresponse()
    ctype = resp.getheader("Content-Type", "")
    head = {"status": resp.status, "content_type": ctype, "buffering": resp.getheader("X-Accel-Buffering")}
    if not ctype.startswith("text/event-stream"):
        head["body"] = resp.read().decode("utf-8", "replace")
        print(json.dumps(head), flush=True)
        return
    print(json.dumps(head), flush=True)
    event, data, seen = "", [], 0
    while True:
        raw = resp.readline()
        if not raw:
            break
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                text = "\n".join(data)
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = {"unparsed": text}
                print(json.dumps({"t": round(time.monotonic() - start, 4), "event": event or "message", "data": parsed}), flush=True)
                seen += 1
                if stop_after is not None and seen >= stop_after:
                    conn.sock.close()
                    return
            event, data = "", []
        elif line.startswith(":"):
            print(json.dumps({"t": round(time.monotonic() - start, 4), "comment": line[1:].strip()}), flush=True)
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)


if __name__ == "__main__":
    main()
