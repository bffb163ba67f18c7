# SPDX-License-Identifier: MIT
"""sandboxd's tool runner: runs one function of an agent's own code inside the agent's image.

sandboxd bind-mounts this file into every tool sandbox; the image provides /usr/bin/python3 and
the agent's module (importable, or in /app). Protocol, on stdin and stdout:

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


def call(req):
    module_name, function_name, args = req["module"], req["function"], req.get("args") or {}
    sys.path.insert(0, "/app")
    try:
        module = __import__(module_name, fromlist=["_"])
    except Exception as e:
        return {"status": "failed", "error": "cannot import module '%s': %s" % (module_name, exception_text(e))}
    function = getattr(module, function_name, None)
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
