#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks responses against the API's description, docs/openapi.json.

  openapi-check.py [--headers HEADER_FILE] METHOD PATH STATUS BODY_FILE
      The response (its status and its body, JSON) must be one the description lists for METHOD PATH:
      the operation's response for STATUS (or its "default"), its schema (text/plain: UTF-8 text). A path the description does
      not have must answer 404, a method its path does not take 405, as components.responses says.
      With the response's header block (curl -D), its content type and the headers the description
      requires are checked too; a text/event-stream body is read as a server-sent event stream, each
      event's data against the schema its name has in the media type's x-sandboxd-events, and, where
      those include "result", it must end with exactly one "result" event.
  openapi-check.py --document
      The description's schemas are valid JSON Schema 2020-12 and every $ref in it resolves.

SANDBOXD_OPENAPI names another description (the tests' own positive controls). Exit status 1, with
the reason on stderr, when the response or the description is wrong; 2 on a usage error.
"""
import json
import os
import re
import sys

from jsonschema import Draft202012Validator, RefResolver
from jsonschema.exceptions import best_match

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DOCUMENT = os.environ.get("SANDBOXD_OPENAPI") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                               "docs", "openapi.json")


def fail(msg):
    print(f"openapi-check: {msg}", file=sys.stderr)
    sys.exit(1)


def resolve(doc, obj):
    """A Reference Object followed to what it names (in this document)."""
    while isinstance(obj, dict) and "$ref" in obj:
        ref = obj["$ref"]
        if not ref.startswith("#/"):
            fail(f"{ref}: only references inside the document are followed")
        target = doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                fail(f"{ref} does not resolve")
            target = target[part]
        obj = target
    return obj


def template_regex(template):
    """A path template ("/v1/x/{id}") as a regular expression: a parameter is one segment, but a
    trailing {path}, a file's path, which the description says may hold slashes."""
    parts = re.split(r"(\{[^}/]+\})", template)
    return re.compile("^" + "".join((".+" if p == "{path}" and i == len(parts) - 2 and not parts[-1] else "[^/]+") if p.startswith("{")
                                    else re.escape(p) for i, p in enumerate(parts)) + "$")


def find_response(doc, method, path, status):
    """(what was looked up, the Response Object) for the request and its status."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    paths = doc.get("paths", {})
    item = paths.get(path)
    if item is None:
        # A concrete path is preferred to a template (OpenAPI 3.1, "Path Templating Matching").
        for template, candidate in paths.items():
            if "{" in template and template_regex(template).match(path):
                item = candidate
                break
    item = resolve(doc, item)
    responses = doc.get("components", {}).get("responses", {})
    if item is None:
        where, expected, name = f"{method} {path} (no such path)", "404", "NotFound"
    elif method.lower() not in item:
        where, expected, name = f"{method} {path} (not a method of the path)", "405", "MethodNotAllowed"
    else:
        operation = item[method.lower()]
        listed = operation.get("responses", {})
        response = listed.get(status, listed.get("default"))
        if response is None:
            fail(f"{method} {path}: the description lists no response {status} (it lists {', '.join(sorted(listed))})")
        return f"{method} {path} {status}", resolve(doc, response)
    if status != expected or name not in responses:
        fail(f"{where}: answered {status}, the description says {expected} (components.responses.{name})")
    return f"{where} {status}", resolve(doc, responses[name])


def read_headers(header_file):
    """The last response's headers (curl -D writes a 100 Continue's first), by lower-case name."""
    headers = {}
    with open(header_file, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith("HTTP/"):
                headers = {}
            elif ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
    return headers


def check_headers(doc, where, response, headers):
    ctype = headers.get("content-type", "").split(";")[0].strip()
    if ctype not in response.get("content", {}):
        fail(f"{where}: content-type {ctype or '(none)'}, the description has {', '.join(response.get('content', {}))}")
    for name, header in response.get("headers", {}).items():
        header = resolve(doc, header)
        value = headers.get(name.lower())
        if value is None:
            if header.get("required"):
                fail(f"{where}: no {name} header")
            continue
        error = best_match(Draft202012Validator(header.get("schema", {}), resolver=RefResolver("", doc)).iter_errors(value))
        if error is not None:
            fail(f"{where}: header {name}: {error.message}")


def sse_events(where, raw):
    """The events of a text/event-stream body, read as the WHATWG HTML parser does ("Server-sent
    events", "Event stream interpretation"): (name, data, number of the line that dispatched it,
    the lines after the last event). id and retry are taken and ignored; an event without a data
    line is none; what follows the last blank line is not dispatched."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"{where}: the event stream is not UTF-8 ({e})")
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    # The text after the last line end is a line not ended: never dispatched.
    lines, rest = lines[:-1], lines[-1]
    events, name, data = [], "", []
    for number, line in enumerate(lines, 1):
        if line == "":
            if data:
                events.append((name or "message", "\n".join(data), number))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    pending = [line for line in lines[events[-1][2] if events else 0:] + [rest] if line and not line.startswith(":")]
    return events, pending


def check_event_stream(doc, where, media, raw):
    """A server-sent event stream: every event one the media type's x-sandboxd-events names, its
    data JSON valid against that schema, and, where the events include "result" (a run's answer),
    that last, once, followed by comments only. (MCP's stream carries JSON-RPC "message" events.)"""
    schemas = media.get("x-sandboxd-events")
    if not isinstance(schemas, dict) or not schemas:
        fail(f"{where}: the description's text/event-stream has no x-sandboxd-events")
    events, after = sse_events(where, raw)
    results = [i for i, (name, _, _) in enumerate(events) if name == "result"]
    for i, (name, data, line) in enumerate(events):
        at = f"{where}: event {i + 1} ('{name}', line {line})"
        if name not in schemas:
            fail(f"{at}: not an event the description lists ({', '.join(schemas)})")
        try:
            value = json.loads(data)
        except ValueError as e:
            fail(f"{at}: its data is not JSON ({e}): {data[:300]!r}")
        errors = list(Draft202012Validator(resolve(doc, schemas[name]), resolver=RefResolver("", doc)).iter_errors(value))
        if errors:
            error = best_match(errors)
            path = "".join(f"[{p!r}]" for p in error.absolute_path) or "its data"
            fail(f"{at}: {path}: {error.message[:300]}\n  data: {data[:300]}")
        if name == "result" and i != len(events) - 1:
            fail(f"{at}: the result event is not the last: '{events[i + 1][0]}' follows it")
    if "result" not in schemas:
        return
    if not results:
        cut = " and ends in the middle of one" if after else ""
        fail(f"{where}: the event stream has no result event ({len(events)} events{cut})")
    if after:
        fail(f"{where}: after the result event, what is not a comment: {after[0][:300]!r}")


def check_response(doc, method, path, status, body_file, header_file=None):
    where, response = find_response(doc, method, path, status)
    content = response.get("content", {})
    headers = read_headers(header_file) if header_file else {}
    if header_file:
        check_headers(doc, where, response, headers)
    with open(body_file, "rb") as f:
        raw = f.read()
    if headers.get("content-type", "").split(";")[0].strip() == "text/event-stream":
        check_event_stream(doc, where, content["text/event-stream"], raw)
        return
    if "application/json" not in content and "text/plain" not in content:
        fail(f"{where}: the description has no application/json or text/plain content for it")
    if "application/json" not in content:
        # Text (GET /metrics): UTF-8, of the schema the description gives it, if any.
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            fail(f"{where}: the body is not UTF-8 text ({e})")
        schema = content["text/plain"].get("schema")
        error = best_match(Draft202012Validator(schema, resolver=RefResolver("", doc)).iter_errors(text)) if schema else None
        if error is not None:
            fail(f"{where}: the body: {error.message[:300]}")
        return
    schema = content["application/json"].get("schema")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        fail(f"{where}: the body is not JSON ({e}): {raw[:300]!r}")
    if schema is None:
        return
    validator = Draft202012Validator(schema, resolver=RefResolver("", doc))
    errors = list(validator.iter_errors(body))
    if errors:
        error = best_match(errors)
        at = "".join(f"[{p!r}]" for p in error.absolute_path) or "the body"
        shown = raw[:300].decode("utf-8", "replace") + ("…" if len(raw) > 300 else "")
        alternatives = "".join(f"\n    or {'/'.join(map(str, e.absolute_schema_path))}: {e.message[:200]}"
                               for e in sorted([c for e in errors for c in e.context], key=lambda e: list(map(str, e.absolute_schema_path)))[:8])
        fail(f"{where}: {at}: {error.message[:300]}\n  (schema at {'/'.join(map(str, error.absolute_schema_path))}){alternatives}"
             f"\n  body: {shown}")


def check_document(doc):
    """Every schema of the description is a valid 2020-12 schema, and every $ref in it resolves."""
    if doc.get("openapi") != "3.1.0":
        fail(f"{DOCUMENT}: openapi is {doc.get('openapi')!r}, not 3.1.0")

    def walk(obj):
        if isinstance(obj, dict):
            if isinstance(obj.get("$ref"), str):
                resolve(doc, {"$ref": obj["$ref"]})
            if isinstance(obj.get("schema"), (dict, bool)):
                Draft202012Validator.check_schema(obj["schema"])
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    for path, item in doc.get("paths", {}).items():
        for method, operation in resolve(doc, item).items():
            for status, response in (operation.get("responses", {}) if method in METHODS else {}).items():
                for ctype, media in resolve(doc, response).get("content", {}).items():
                    events = media.get("x-sandboxd-events")
                    if ctype == "text/event-stream" and (not isinstance(events, dict) or not events):
                        fail(f"{method.upper()} {path} {status}: text/event-stream without x-sandboxd-events")
                    for name, schema in (events or {}).items():
                        try:
                            Draft202012Validator.check_schema(schema)
                        except Exception as e:
                            fail(f"{method.upper()} {path} {status}: x-sandboxd-events.{name}: {getattr(e, 'message', e)}")
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as e:  # SchemaError: its message says what is wrong
            fail(f"components.schemas.{name}: {getattr(e, 'message', e)}")
    try:
        walk(doc)
    except Exception as e:
        fail(f"{DOCUMENT}: a schema is not valid JSON Schema: {getattr(e, 'message', e)}")
    for path, item in doc.get("paths", {}).items():
        for method, operation in resolve(doc, item).items():
            if method in METHODS and not operation.get("responses"):
                fail(f"{method.upper()} {path}: no responses")


def main():
    try:
        with open(DOCUMENT, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read the description {DOCUMENT}: {e}")
    if sys.argv[1:] == ["--document"]:
        check_document(doc)
        return
    args = sys.argv[1:]
    header_file = None
    if args[:1] == ["--headers"] and len(args) >= 2:
        header_file, args = args[1], args[2:]
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    method, path, status, body_file = args
    check_response(doc, method, path, status, body_file, header_file)


if __name__ == "__main__":
    main()
