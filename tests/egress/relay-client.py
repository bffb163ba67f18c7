#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Stands for a runner and its worker in front of sandboxd-egress: run inside a network namespace
that stands for a sandbox's, it binds 127.0.0.1:3128 there as the runner does, registers it with
the relay as the worker does (its list alongside), runs COMMAND (which reaches the proxy through
HTTP_PROXY), ends the execution and prints the relay's answers as one JSON document:
{"registered": ..., "list": <the list file's text while registered>, "status": <COMMAND's exit
status>, "usage": ...}.

    relay-client.py SOCKET LISTS_DIR ID ENTRIES -- COMMAND...
"""
import json
import os
import socket
import subprocess
import sys


def main():
    sock_path, lists, ident, entries = sys.argv[1:5]
    if sys.argv[5] != "--":
        sys.exit("usage: relay-client.py SOCKET LISTS_DIR ID ENTRIES -- COMMAND...")
    command = sys.argv[6:]

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The last test's connections may linger in TIME_WAIT in this one namespace (a sandbox's is new).
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 3128))
    listener.listen(16)

    relay = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    relay.connect(sock_path)
    registration = {"id": ident, "allow": [e for e in entries.split(",") if e]}
    socket.send_fds(relay, [json.dumps(registration).encode()], [listener.fileno()])
    # The relay has its own copy now: the code's connections are its alone.
    listener.close()
    registered = json.loads(relay.recv(4096) or b"null")
    out = {"registered": registered}
    if registered and "address" in registered:
        with open(os.path.join(lists, registered["address"])) as f:
            out["list"] = f.read()
        env = dict(os.environ, HTTP_PROXY="http://127.0.0.1:3128", HTTPS_PROXY="http://127.0.0.1:3128",
                   http_proxy="http://127.0.0.1:3128", https_proxy="http://127.0.0.1:3128")
        out["status"] = subprocess.run(command, env=env).returncode
        relay.send(json.dumps({"end": True}).encode())
        out["usage"] = json.loads(relay.recv(4096) or b"null")
        out["list_after"] = os.path.exists(os.path.join(lists, registered["address"]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
