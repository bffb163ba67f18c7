# SPDX-License-Identifier: MIT
"""A raw client of sandboxd's broker socket, for the privilege tests: sends one request (or raw
bytes) and prints what came back as JSON: {"closed": true} if the broker hung up without a reply,
else {"error": N, "message": "..."}.

  broker-client.py OP ID        OP: kill, reset-failed, list, start-warm, run-tool, session-delete,
                                session-list (numbers as the
                                broker's protocol has them); ID: a sandbox id or anything else
  broker-client.py --raw HEX    sends those bytes as one message
  broker-client.py --fds N HEX  the same, with N descriptors of /dev/null passed along
"""
import array
import json
import os
import socket
import struct
import sys

SOCKET = "/run/sandboxd/broker.sock"
MAGIC = 0x73626B36
OPS = {"start-warm": 1, "run-tool": 2, "kill": 3, "reset-failed": 4, "list": 5, "session-delete": 8, "session-list": 10}
REQUEST = struct.Struct("<II64s64s80sI")  # BrokerRequest in nspawn/broker/broker-proto.h


def main():
    fds = []
    if sys.argv[1] == "--raw":
        msg = bytes.fromhex(sys.argv[2])
    elif sys.argv[1] == "--fds":
        fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(int(sys.argv[2]))]
        msg = bytes.fromhex(sys.argv[3])
    else:
        op = OPS.get(sys.argv[1])
        op = int(sys.argv[1]) if op is None else op
        msg = REQUEST.pack(MAGIC, op, sys.argv[2].encode(), b"0123456789abcdef0123456789abcdef", b"demo-agent", 5)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(SOCKET)
    try:
        s.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
        reply = s.recv(1 << 20)
    except (ConnectionResetError, BrokenPipeError):
        reply = b""
    if not reply:
        print(json.dumps({"closed": True}))
        return
    error, message = struct.unpack_from("<i256s", reply)
    print(json.dumps({"error": error, "message": message.split(b"\0")[0].decode()}))


main()
