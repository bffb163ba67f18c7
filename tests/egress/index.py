#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The package index of the egress tests' "internet" (tests/egress/net): one wheel for pip and one
tarball for npm, made here, served over HTTPS with the test CA's certificate.

    index.py serve DIR ADDR CERT KEY

DIR gets the files and a log of the requests (index.log); the server listens on ADDR:443.
  pip:  --index-url https://pkg.egress.test/simple/   sbxdemo     (import sbxdemo)
  npm:  --registry  https://pkg.egress.test/npm/      sbxdemo-js  (require("sbxdemo-js"))
"""
import base64
import hashlib
import http.server
import io
import json
import os
import ssl
import sys
import tarfile
import zipfile

HOST = "https://pkg.egress.test"
WHEEL = "sbxdemo-1.0-py3-none-any.whl"
TARBALL = "sbxdemo-js-1.0.0.tgz"


def wheel():
    files = {
        "sbxdemo/__init__.py": b'GREETING = "hello from the test index"\n',
        "sbxdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sbxdemo\nVersion: 1.0\n",
        "sbxdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: sandboxd-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += "sbxdemo-1.0.dist-info/RECORD,,\n"
    files["sbxdemo-1.0.dist-info/RECORD"] = record.encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()


def tarball():
    files = {
        "package/package.json": json.dumps({"name": "sbxdemo-js", "version": "1.0.0", "main": "index.js"}).encode(),
        "package/index.js": b'module.exports = "hello from the test registry";\n',
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def build(d):
    whl, tgz = wheel(), tarball()
    os.makedirs(f"{d}/simple/sbxdemo", exist_ok=True)
    os.makedirs(f"{d}/files", exist_ok=True)
    os.makedirs(f"{d}/npm/sbxdemo-js/-", exist_ok=True)
    with open(f"{d}/files/{WHEEL}", "wb") as f:
        f.write(whl)
    sha = hashlib.sha256(whl).hexdigest()
    with open(f"{d}/simple/sbxdemo/index.html", "w") as f:
        f.write(f'<!DOCTYPE html><html><body><a href="{HOST}/files/{WHEEL}#sha256={sha}">{WHEEL}</a></body></html>\n')
    with open(f"{d}/npm/sbxdemo-js/-/{TARBALL}", "wb") as f:
        f.write(tgz)
    packument = {
        "name": "sbxdemo-js",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {
            "1.0.0": {
                "name": "sbxdemo-js",
                "version": "1.0.0",
                "main": "index.js",
                "dist": {
                    "tarball": f"{HOST}/npm/sbxdemo-js/-/{TARBALL}",
                    "shasum": hashlib.sha1(tgz).hexdigest(),
                    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
                },
            }
        },
    }
    with open(f"{d}/npm/sbxdemo-js/index.json", "w") as f:
        json.dump(packument, f)


class Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path):
        # npm asks for the package's document by its bare name.
        local = super().translate_path(path)
        if os.path.isdir(local) and os.path.isfile(os.path.join(local, "index.json")):
            return os.path.join(local, "index.json")
        return local

    def send_head(self):
        # /npm/NAME without its slash is the document itself, not a redirect.
        if self.path.rstrip("/").startswith("/npm/") and "/-/" not in self.path:
            self.path = self.path.rstrip("/") + "/"
        return super().send_head()

    def log_message(self, fmt, *args):
        with open(os.path.join(self.directory, "index.log"), "a") as f:
            f.write("%s %s\n" % (self.address_string(), fmt % args))


def serve(d, addr, cert, key):
    build(d)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer((addr, 443), lambda *a: Handler(*a, directory=d))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    serve(*sys.argv[2:])
