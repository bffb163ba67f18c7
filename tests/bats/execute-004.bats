#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# POST /execute: the Python sandbox API of reference 004, its schema exactly (code of at most 2000
# characters, stdin_data, at most 2 attachments {filename, content_base_64}, return_files), its
# response (stdout, stderr, exit_code, execution_details) and its curated imports.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

PNG="$BATS_TEST_DIRNAME/fixtures/png.py"
# The modules the reference forbids, and kin of theirs the contract names.
FORBIDDEN="os subprocess socket ctypes multiprocessing pty shutil"

setup_file() {
    require_stack
}

teardown() {
    expect_no_leftovers
}

# run004 JSON: POST /execute; the answer must be a 200 in JSON.
run004() {
    api POST /execute "$1"
    expect_status 200
    [ "$ctype" = application/json ] || { echo "content-type: $ctype" >&2; return 1; }
}

# expect_refusal WORD: a 400 {"error": "..."} whose message names WORD (the field at fault).
expect_refusal() {
    expect_status 400
    [ "$ctype" = application/json ] || { echo "content-type: $ctype" >&2; return 1; }
    local got
    got=$(jq -er '.error | strings' <<<"$body") || { echo "no error message: $body" >&2; return 1; }
    [[ $got == *"$1"* ]] || { echo "the error does not name $1: $got" >&2; return 1; }
}

# expect_forbidden MODULE...: the snippet printed "tried", then died (exit 1) of a ForbiddenImportError
# that names one of MODULE.
expect_forbidden() {
    local err
    err=$(field .stderr)
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["tried\n",1]' ] || { echo "$body" >&2; return 1; }
    for m in "$@"; do
        grep -Eq "ForbiddenImportError.*\b$m\b" <<<"$err" && return 0
    done
    echo "no ForbiddenImportError naming $*: $err" >&2
    return 1
}

@test "the reference's first request: numpy's mean, stdout, stderr, exit code and execution details" {
    run004 "$(code_json $'import numpy as np\nprint("AI computed:", np.mean([10, 20, 30]))')"
    [ "$(jq -c '{stdout, stderr, exit_code}' <<<"$body")" = '{"stdout":"AI computed: 20.0\n","stderr":"","exit_code":0}' ] || { echo "$body" >&2; false; }
    [ "$(jq -c '.execution_details | [(.duration_ms, .cpu_ms, .memory_peak_bytes) | type] | unique' <<<"$body")" = '["number"]' ] || { echo "$body" >&2; false; }
    expect_request_id
}

@test "execution_details measure the run: wall time, CPU time, peak memory" {
    run004 "$(code_json 'import time
data = b"x" * (100 << 20)
start = time.process_time()
while time.process_time() - start < 0.4:
    pass
print(len(data))')"
    [ "$(field .stdout)" = $((100 << 20)) ]
    [ "$(field .exit_code)" = 0 ]
    # 0.4 s of CPU at least, and as much wall time; 100 MiB held at once.
    [ "$(field .execution_details.cpu_ms)" -ge 350 ] || { echo "$body" >&2; false; }
    [ "$(field .execution_details.duration_ms)" -ge 400 ] || { echo "$body" >&2; false; }
    [ "$(field .execution_details.duration_ms)" -lt 30000 ]
    [ "$(field .execution_details.memory_peak_bytes)" -ge $((100 << 20)) ] || { echo "$body" >&2; false; }
    # A trivial snippet: sensible values, each a whole number.
    run004 "$(code_json 'print(1)')"
    [ "$(jq -c '.execution_details | [.duration_ms >= 0, .cpu_ms >= 0, .memory_peak_bytes > 0,
        ([.duration_ms, .cpu_ms, .memory_peak_bytes] | all(. == floor))]' <<<"$body")" = '[true,true,true,true]' ] || { echo "$body" >&2; false; }
}

@test "the reference's tutorial: a PNG attached as in.png comes back in grayscale, every pixel as PIL's luma" {
    /usr/bin/python3 "$PNG" rgb "$BATS_TEST_TMPDIR/in.png" >/dev/null
    want=$(/usr/bin/python3 "$PNG" luma)
    run004 "$(jq -cn --arg b "$(base64 -w0 "$BATS_TEST_TMPDIR/in.png")" '{
        code: "from PIL import Image\nwith Image.open(\"in.png\") as img:\n  img.convert(\"L\").save(\"out.png\")",
        attachments: [{filename: "in.png", content_base_64: $b}], return_files: ["out.png"]}')"
    [ "$(jq -c '[.stdout, .stderr, .exit_code]' <<<"$body")" = '["","",0]' ] || { echo "$body" >&2; false; }
    field '.execution_details.output_files["out.png"].content_base64' | base64 -d >"$BATS_TEST_TMPDIR/out.png"
    # 4 x 3, color type 0 (gray), 8 bits.
    [ "$(/usr/bin/python3 "$PNG" size "$BATS_TEST_TMPDIR/out.png")" = "4 3 0 8" ]
    [ "$(/usr/bin/python3 "$PNG" pixels "$BATS_TEST_TMPDIR/out.png")" = "$want" ]
}

@test "the reference's tutorial code as it is: in.jpg opened by its content, out.png returned" {
    /usr/bin/python3 "$PNG" rgb "$BATS_TEST_TMPDIR/in.png" >/dev/null
    run004 "$(jq -cn --arg b "$(base64 -w0 "$BATS_TEST_TMPDIR/in.png")" '{
        "code": "from PIL import Image\nwith Image.open('"'in.jpg'"') as img:\n  img.convert('"'L'"').save('"'out.png'"')",
        "attachments": [{"filename": "in.jpg", "content_base_64": $b}],
        "return_files": ["out.png"]}')"
    [ "$(field .exit_code)" = 0 ] || { echo "$body" >&2; false; }
    [ "$(jq -r '.execution_details.output_files | keys | join(",")' <<<"$body")" = out.png ]
    field '.execution_details.output_files["out.png"].content_base64' | base64 -d >"$BATS_TEST_TMPDIR/out.png"
    [ "$(/usr/bin/python3 "$PNG" pixels "$BATS_TEST_TMPDIR/out.png")" = "$(/usr/bin/python3 "$PNG" luma)" ]
}

@test "return_files: each file that exists comes back by name, one that does not is simply absent" {
    run004 "$(code_json 'open("made.txt", "w").write("made here")
open("sub.bin", "wb").write(bytes(range(256)))' '{return_files: ["made.txt", "never-made.txt", "sub.bin"]}')"
    [ "$(field .exit_code)" = 0 ]
    [ "$(jq -c '.execution_details.output_files | keys' <<<"$body")" = '["made.txt","sub.bin"]' ] || { echo "$body" >&2; false; }
    [ "$(field '.execution_details.output_files["made.txt"].content_base64' | base64 -d)" = "made here" ]
    [ "$(field '.execution_details.output_files["sub.bin"].content_base64')" = "$(/usr/bin/python3 -c 'import base64; print(base64.b64encode(bytes(range(256))).decode())')" ]
}

@test "stdin_data is the program's standard input" {
    run004 "$(code_json 'import sys
first = input()
print(first.upper(), sys.stdin.read()[::-1])' '{stdin_data: "hello\nabc\ndef"}')"
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["HELLO fed\ncba\n",0]' ] || { echo "$body" >&2; false; }
}

@test "two attachments land in the working directory, binary intact" {
    head -c 2048 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
    run004 "$(jq -cn --arg b "$(base64 -w0 "$BATS_TEST_TMPDIR/blob")" '{
        code: "import hashlib\nprint(hashlib.sha256(open(\"blob.bin\", \"rb\").read()).hexdigest(), open(\"note.txt\").read())",
        attachments: [{filename: "blob.bin", content_base_64: $b}, {filename: "note.txt", content_base_64: ("a note" | @base64)}]}')"
    [ "$(field .stdout)" = "$(sha256sum <"$BATS_TEST_TMPDIR/blob" | cut -d' ' -f1) a note" ] || { echo "$body" >&2; false; }
}

@test "code is at most 2000 characters, counted as characters: 2000 run, 2001 are refused" {
    pad=$(printf '%*s' 1988 '' | tr ' ' x)
    run004 "$(code_json "print(\"ok\")#$pad")"
    [ "$(field .stdout)" = ok ]
    api POST /execute "$(code_json "print(\"ok\")#${pad}x")"
    expect_refusal code
    # 2000 characters of which 1988 take two bytes each: 3988 bytes, still 2000 characters.
    wide=${pad//x/é}
    [ "${#pad}" = 1988 ]
    [ "$(printf '%s' "$wide" | wc -c)" = 3976 ]
    run004 "$(code_json "print(\"ok\")#$wide")"
    [ "$(field .stdout)" = ok ]
    api POST /execute "$(code_json "print(\"ok\")#${wide}é")"
    expect_refusal code
}

@test "code is required, and a string" {
    run004 '{"code": "print(1)"}'
    [ "$(field .stdout)" = 1 ]
    for b in '{}' '{"stdin_data": "x"}' '{"code": 42}' '{"code": null}' '{"code": ["print(1)"]}'; do
        api POST /execute "$b"
        expect_refusal code
    done
}

@test "at most two attachments: three are refused" {
    two='[{"filename": "a.txt", "content_base_64": "YQ=="}, {"filename": "b.txt", "content_base_64": "Yg=="}]'
    run004 "$(code_json 'print(open("a.txt").read(), open("b.txt").read())' "{attachments: $two}")"
    [ "$(field .stdout)" = "a b" ]
    api POST /execute "$(code_json 'print(1)' "{attachments: ($two + [{filename: \"c.txt\", content_base_64: \"Yw==\"}])}")"
    expect_refusal attachments
}

@test "an attachment whose content is not base64 is refused" {
    run004 "$(code_json 'print(open("a.txt").read())' '{attachments: [{filename: "a.txt", content_base_64: "aGVsbG8="}]}')"
    [ "$(field .stdout)" = hello ]
    for bad in 'not base64!' 'aGVsbG8' '@@@@'; do
        api POST /execute "$(code_json 'print(open("a.txt").read())' "$(jq -cn --arg c "$bad" '{attachments: [{filename: "a.txt", content_base_64: $c}]}')")"
        expect_status 400
        err=$(field .error)
        [[ $err == *attachments* || $err == *content_base_64* ]] || { echo "'$bad': $body" >&2; false; }
    done
}

@test "fields of the wrong type are refused, naming the field" {
    run004 "$(code_json 'print(1)' '{stdin_data: "", attachments: [], return_files: []}')"
    [ "$(field .stdout)" = 1 ]
    api POST /execute "$(code_json 'print(1)' '{stdin_data: 5}')"
    expect_refusal stdin_data
    api POST /execute "$(code_json 'print(1)' '{attachments: {filename: "a", content_base_64: ""}}')"
    expect_refusal attachments
    api POST /execute "$(code_json 'print(1)' '{attachments: ["a.txt"]}')"
    expect_refusal attachments
    api POST /execute "$(code_json 'print(1)' '{return_files: "out.png"}')"
    expect_refusal return_files
    api POST /execute "$(code_json 'print(1)' '{return_files: [1]}')"
    expect_refusal return_files
    api POST /execute 'not json'
    expect_status 400
    jq -er '.error | strings' <<<"$body" >/dev/null
}

@test "the forbidden modules are there: they import where no policy applies" {
    # The control for the refusals below: on /v1/execute (no import policy by default) each imports.
    setting_default SANDBOXD_IMPORT_POLICY
    execute "$(code_json "import ${FORBIDDEN// /, }; print('all imported')")"
    expect_status 200
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["all imported\n",0]' ] || { echo "$body" >&2; false; }
}

@test "each forbidden module is refused with a ForbiddenImportError that names it" {
    for m in $FORBIDDEN; do
        run004 "$(code_json "print('tried')
import $m
print('imported')")"
        expect_forbidden "$m"
    done
}

@test "the C halves of the forbidden modules are refused too" {
    for m in posix _posixsubprocess _socket _ctypes; do
        run004 "$(code_json "print('tried')
import $m
print('imported')")"
        expect_forbidden "$m"
    done
}

@test "every way to import a forbidden module is refused: from-import, dotted, __import__, importlib" {
    # MODULE|CODE: the code, and the module its refusal names (importlib may be refused itself).
    for pair in 'os|from os import path' 'os|import os.path' 'subprocess|from subprocess import run' \
        "os|__import__('os')" "socket|__builtins__.__import__('socket')" \
        $'os importlib|import importlib\nimportlib.import_module("os")'; do
        read -ra mods <<<"${pair%%|*}"
        run004 "$(code_json "print('tried')
${pair#*|}
print('imported')")"
        expect_forbidden "${mods[@]}" || { echo "for: ${pair#*|}" >&2; false; }
    done
}

@test "ForbiddenImportError is an ImportError: code that catches ImportError goes on" {
    run004 "$(code_json 'try:
    import subprocess
except ImportError as e:
    print(type(e).__name__, isinstance(e, ImportError), type(e) is not ImportError, "subprocess" in str(e))
print("went on")')"
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["ForbiddenImportError True True True\nwent on\n",0]' ] || { echo "$body" >&2; false; }
}

@test "the curated modules import and work: numpy, json and the rest of the list" {
    run004 "$(code_json 'import numpy, json
print(json.dumps({"sum": int(numpy.arange(10).sum())}))')"
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["{\"sum\": 45}\n",0]' ] || { echo "$body" >&2; false; }
    run004 "$(code_json 'import math, json, csv, datetime, re, collections, io, base64
import numpy as np, pandas as pd, scipy.linalg, sympy, openpyxl
import matplotlib.pyplot as plt
from PIL import Image
from dateutil import parser
df = pd.read_csv(io.StringIO("a,b\n1,2\n3,4\n"))
buf = io.BytesIO()
plt.figure(figsize=(1, 1)).savefig(buf, format="png")
wb = openpyxl.Workbook(); wb.active["A1"] = 7
print(int(df["b"].sum()), round(float(scipy.linalg.det(np.eye(3) * 2)), 6), sympy.factorint(60),
      buf.getvalue()[:4] == b"\x89PNG", Image.new("L", (2, 2)).size, parser.parse("2024-02-29").month,
      wb.active["A1"].value, collections.Counter("aab")["a"], math.gcd(12, 18),
      base64.b64encode(b"hi").decode(), re.sub("b", "c", "abc"), next(csv.reader(["x,y"])))')"
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = "$(jq -cn '["6 8.0 {2: 2, 3: 1, 5: 1} True (2, 2) 2 7 2 6 aGk= acc [\u0027x\u0027, \u0027y\u0027]\n",0]')" ] || { echo "$body" >&2; false; }
}

@test "what the interpreter imports for an allowed module is not refused: datetime.strptime, time.strptime" {
    run004 "$(code_json 'import datetime, time
print(datetime.datetime.strptime("2024-02-29", "%Y-%m-%d").date(), time.strptime("2024", "%Y").tm_year)')"
    [ "$(field .stdout)" = "2024-02-29 2024" ] && [ "$(field .exit_code)" = 0 ] || { echo "$body" >&2; false; }
}
