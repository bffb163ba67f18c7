# SPDX-License-Identifier: MIT
"""sandboxd's tool runner: runs one function of an agent's own code inside the agent's image.

sandboxd bind-mounts this file into every tool sandbox; the image provides /usr/bin/python3 and
the agent's modules in /app, and its manifest, /.sandboxd-tool.json, which sandboxd-image wrote at
build time (root's, outside /app, on a read-only root): only a function it declares, of a module it
names, is called, and only from that module's own file in /app. The worker checked the same before
asking for this sandbox; this is the check that holds should the worker's copy be out of date.
Anything else answers as a module or function that does not exist. Protocol, on stdin and stdout:

  out: "READY\\n" once the interpreter is up
  in:  {"module": "agent", "function": "get_weather", "args": {...}}
  out: {"status": "ok", "result": ...}
     | {"status": "raised", "error": "ValueError: ..."}        the function raised
     | {"status": "failed", "error": "..."}                     no such module/function, bad result

Whatever the agent's code prints goes to stderr, so it cannot garble the reply.
"""

import json
import os
import sys
import traceback


def exception_text(e):
    return "".join(traceback.format_exception_only(type(e), e)).strip()


APP = "/app"
MANIFEST = "/.sandboxd-tool.json"
MARKER = "sandboxd-tool-image"


def declared(module_name):
    """The resolved file and declared functions of a module the manifest names, or None."""
    try:
        with open(MANIFEST, "rb") as f:
            manifest = json.loads(f.read())
        entry = manifest["modules"][module_name]
        path, functions = entry["path"], entry["functions"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if manifest.get(MARKER) != 1 or not isinstance(path, str) or not isinstance(functions, list):
        return None
    # A file of /app, wherever its links lead: nothing outside it, nothing but a regular file.
    real = os.path.realpath(os.path.join(APP, path))
    if not real.startswith(APP + "/") or not os.path.isfile(real):
        return None
    return real, functions


def not_found(module_name):
    return {"status": "failed", "error": "cannot import module '%s': ModuleNotFoundError: No module named '%s'" % (module_name, module_name)}


def call(req):
    module_name, function_name, args = req["module"], req["function"], req.get("args") or {}
    found = declared(module_name)
    if found is None:
        return not_found(module_name)
    path, functions = found
    sys.path.insert(0, APP)
    try:
        module = __import__(module_name, fromlist=["_"])
    except Exception as e:
        return {"status": "failed", "error": "cannot import module '%s': %s" % (module_name, exception_text(e))}
    # What was imported must be the manifest's file: not a module loaded before /app was on the
    # path (the standard library's), not a built-in one.
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or os.path.realpath(file) != path:
        return not_found(module_name)
    function = getattr(module, function_name, None) if function_name in functions else None
    if not callable(function):
        return {"status": "failed", "error": "module '%s' has no function '%s'" % (module_name, function_name)}
    try:
        result = function(**args)
    except Exception as e:
        return {"status": "raised", "error": exception_text(e)}
    try:
        json.dumps(result)
    except (TypeError, ValueError) as e:
        return {"status": "failed", "error": "the result is not JSON-serializable: %s" % e}
    return {"status": "ok", "result": result}


def main():
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's prints go to stderr
    sys.stdout = sys.stderr
    reply.write("READY\n")
    reply.flush()
    try:
        req = json.loads(sys.stdin.buffer.read())
    except ValueError:
        req = None
    if not isinstance(req, dict):
        out = {"status": "failed", "error": "the request is not a JSON object"}
    else:
        out = call(req)
    reply.write(json.dumps(out, separators=(",", ":")))
    reply.flush()


if __name__ == "__main__":
    main()
