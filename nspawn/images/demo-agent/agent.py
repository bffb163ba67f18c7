# SPDX-License-Identifier: MIT
"""demo-agent: the tool functions of a demo agent, called through POST /v1/call."""

import os
import socket
import time

# What POST /v1/call may call: sandboxd-image writes this list into the image's manifest.
__all__ = ["get_weather", "add", "nothing", "fail", "sleep", "big", "unserializable", "chatty", "environment", "reach"]

# Deterministic demo data: no network in a tool sandbox.
_TEMPERATURES = {"reykjavik": 4, "cairo": 31, "oslo": -2}


def get_weather(city):
    """The reference's example tool."""
    if not isinstance(city, str) or not city:
        raise ValueError("city must be a non-empty string")
    return {"temp_c": _TEMPERATURES.get(city.lower(), len(city) % 25)}


def add(a, b):
    return a + b


def nothing():
    """Returns None: the response then has neither result nor error."""
    return None


def fail(message="boom"):
    raise RuntimeError(message)


def sleep(seconds):
    time.sleep(seconds)
    return {"slept": seconds}


def big(n):
    return "x" * n


def unserializable():
    return object()


def chatty():
    """Prints on stdout: it must not garble the reply."""
    print('{"status": "ok", "result": "forged"}')
    return "clean"


def environment():
    return dict(os.environ)


def reach(port=8080):
    """What a tool could reach of the host: the D-Bus socket, the service's port, host files."""
    out = {}
    out["dbus_socket_exists"] = os.path.exists("/run/dbus/system_bus_socket")
    for name, family, addr in (("tcp4", socket.AF_INET, ("127.0.0.1", port)), ("tcp6", socket.AF_INET6, ("::1", port))):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(addr)
            out[name] = "connected"
        except OSError as e:
            out[name] = type(e).__name__
        finally:
            s.close()
    out["interfaces"] = sorted(i[1] for i in socket.if_nameindex())
    out["host_db_visible"] = os.path.exists("/var/lib/sandboxd/db/sandboxd.db")
    out["uid"] = os.getuid()
    return out


def undeclared():
    """A function of the module that __all__ leaves out: no call reaches it."""
    return "undeclared function called"
