#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The runner's session mode on its own (runner-client.py --session): one machine, several requests
# in a row, /workspace a host directory (or a small tmpfs).
# The code in single quotes is the sandbox's to expand, not this shell's:
# shellcheck disable=SC2016

RUNNER=${SANDBOXD_RUNNER:-/usr/local/lib/sandboxd/sandboxd-runner}
CLIENT="$BATS_TEST_DIRNAME/runner-client.py"

setup() {
    WS=$(mktemp -d "$BATS_TEST_TMPDIR/ws.XXXXXX")
}

# Requests, one JSON object per argument (jq syntax allowed, as for jq -n), into one list.
requests() {
    local r out=()
    for r in "$@"; do
        out+=("$(jq -cn "$r")")
    done
    printf '%s\n' "${out[@]}" | jq -cs .
}

# run LANG CODE [TIMEOUT_MS]: a run request.
run_req() {
    jq -cn --arg l "$1" --arg c "$2" --argjson t "${3:-10000}" '{op: "run", language: $l, code: $c, timeout_ms: $t, output_cap: 65536}'
}

exec_req() {
    jq -cn --arg c "$1" --argjson t "${2:-10000}" '{op: "exec", command: $c, timeout_ms: $t, output_cap: 65536}'
}

host() {
    jq -cn --arg c "$1" '{_host: $c}'
}

# session [CLIENT_OPTION] REQUEST...: the replies, one a line, in $output.
session() {
    local opt="--workspace=$WS"
    if [[ $1 == --workspace-tmpfs=* ]]; then
        opt=$1
        shift
    fi
    run /usr/bin/python3 "$CLIENT" --session "$opt" "$RUNNER" "$(printf '%s\n' "$@" | jq -cs .)"
    echo "$output" >&2
    [ "$status" -eq 0 ]
}

# line N: the Nth reply's JSON; summary N: what most checks compare.
line() {
    sed -n "${1}p" <<<"$output" | cut -f1
}

summary() {
    line "$1" | jq -c '[.exit_code, .termination, .state_reset, (.stdout_b64 | @base64d), (.stderr_b64 | @base64d)]'
}

stdout_of() {
    line "$1" | jq -r '.stdout_b64 | @base64d'
}

stderr_of() {
    line "$1" | jq -r '.stderr_b64 | @base64d'
}

bytes_b64() {
    sed -n "${1}p" <<<"$output" | cut -f2
}

@test "session: python keeps variables and imports from one run to the next, and echoes no last expression" {
    session "$(run_req python $'import json\nx = 41\nx')" "$(run_req python $'x += 1\nprint(json.dumps({"x": x}))\nx')" \
        "$(run_req python 'import os; print(os.getcwd(), os.getuid(), os.environ["HOME"])')"
    [ "$(summary 1)" = '[0,"exit",false,"",""]' ]
    [ "$(summary 2)" = '[0,"exit",false,"{\"x\": 42}\n",""]' ]
    [ "$(summary 3)" = '[0,"exit",false,"/workspace 1000 /workspace\n",""]' ]
    [ "$(line 1 | jq -c 'keys')" = '["cpu_ms","duration_ms","duration_us","exit_code","memory_peak_bytes","oom_kills","state_reset","status","stderr_b64","stderr_truncated","stdout_b64","stdout_truncated","termination"]' ]
    [ "$(line 2 | jq '.memory_peak_bytes > 0')" = true ]
}

@test "session: node keeps top-level declarations and required modules, awaits a promise, echoes nothing" {
    session "$(run_req node 'let a = 5; const path = require("path"); function f(x) { return x * 2 } a')" \
        "$(run_req node 'a += 1; console.log(a, f(a), path.basename("/x/y.txt")); a')" \
        "$(run_req node 'new Promise((resolve) => setTimeout(() => { console.log("later", a); resolve(7) }, 50))')"
    [ "$(summary 1)" = '[0,"exit",false,"",""]' ]
    [ "$(summary 2)" = '[0,"exit",false,"6 12 y.txt\n",""]' ]
    [ "$(summary 3)" = '[0,"exit",false,"later 6\n",""]' ]
}

@test "session: bash keeps its directory, variables, exports and functions; exit_code is the code's \$?" {
    session "$(run_req bash 'cd /tmp && mkdir -p d && cd d; V=1; export E=2; greet() { echo "hi $1"; }')" \
        "$(run_req bash 'pwd; echo "$V"; sh -c "echo \$E"; greet you; false')" \
        "$(run_req bash 'echo "$V$E"; (exit 3)')"
    [ "$(summary 1)" = '[0,"exit",false,"",""]' ]
    [ "$(summary 2)" = '[1,"exit",false,"/tmp/d\n1\n2\nhi you\n",""]' ]
    [ "$(summary 3)" = '[3,"exit",false,"12\n",""]' ]
}

@test "session: an exception gives its traceback and 1, and the state is kept; SystemExit gives its status" {
    session "$(run_req python 'y = 7')" "$(run_req python '1/0')" "$(run_req python 'print(y); raise SystemExit(3)')" \
        "$(run_req python 'print(y + 1)')" \
        "$(run_req node 'var b = 1')" "$(run_req node 'throw new Error("boom")')" "$(run_req node 'Promise.reject(new Error("nope"))')" \
        "$(run_req node 'console.log(b)')"
    [ "$(summary 2)" = '[1,"exit",false,"","Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nZeroDivisionError: division by zero\n"]' ]
    [ "$(summary 3)" = '[3,"exit",false,"7\n",""]' ]
    [ "$(summary 4)" = '[0,"exit",false,"8\n",""]' ]
    [ "$(line 6 | jq -c '[.exit_code, .termination, .state_reset]')" = '[1,"exit",false]' ]
    [[ "$(stderr_of 6)" == *"Error: boom"*"at [eval]:1:"* ]]
    [ "$(line 7 | jq -c '[.exit_code, .termination, .state_reset]')" = '[1,"exit",false]' ]
    [[ "$(stderr_of 7)" == "Error: nope"* ]]
    [ "$(summary 8)" = '[0,"exit",false,"1\n",""]' ]
}

@test "session: an interpreter that ends (os._exit, process.exit, exit, a signal) starts afresh, and says so twice" {
    session "$(run_req python 'z = 1')" "$(run_req python 'import os; os._exit(5)')" "$(run_req python 'print("z" in globals())')" \
        "$(run_req python 'print(2)')" \
        "$(run_req node 'var n = 1')" "$(run_req node 'console.log("bye"); process.exit(4)')" "$(run_req node 'console.log(typeof n)')" \
        "$(run_req bash 'W=1')" "$(run_req bash 'echo out; exit 6')" "$(run_req bash 'echo "[$W]"')" \
        "$(run_req bash 'kill -KILL $$')" "$(run_req bash 'echo again')" "$(run_req bash 'echo steady')"
    [ "$(summary 2)" = '[5,"exit",true,"",""]' ]
    [ "$(summary 3)" = '[0,"exit",true,"False\n",""]' ]
    [ "$(summary 4)" = '[0,"exit",false,"2\n",""]' ]
    [ "$(summary 6)" = '[4,"exit",true,"bye\n",""]' ]
    [ "$(summary 7)" = '[0,"exit",true,"undefined\n",""]' ]
    [ "$(summary 9)" = '[6,"exit",true,"out\n",""]' ]
    [ "$(summary 10)" = '[0,"exit",true,"[]\n",""]' ]
    [ "$(summary 11)" = '[137,"killed",true,"",""]' ]
    [ "$(summary 12)" = '[0,"exit",true,"again\n",""]' ]
    [ "$(summary 13)" = '[0,"exit",false,"steady\n",""]' ]
}

@test "session: a timeout kills every process of the sandbox, keeps /workspace, loses /tmp and every interpreter's state" {
    session "$(run_req bash 'B=1; echo x >/tmp/t; sleep 7777 & echo started')" \
        "$(host 'pgrep -xf "sleep 7777" | wc -l')" \
        "$(run_req python 'p = 1')" \
        "$(jq -cn '{op: "put", path: "keep/me.txt", _content_b64: ("kept" | @base64)}')" \
        "$(run_req python $'import time\nprint("before", flush=True)\ntime.sleep(60)' 700)" \
        "$(host 'for i in $(seq 50); do [ "$(pgrep -xf "sleep 7777" | wc -l)" = 0 ] && break; sleep 0.1; done; pgrep -xf "sleep 7777" | wc -l')" \
        "$(run_req bash 'echo "[$B]"; ls /tmp; cat keep/me.txt')" \
        "$(run_req python 'print("p" in globals())')" \
        "$(run_req python 'print(3)')"
    [ "$(summary 1)" = '[0,"exit",false,"started\n",""]' ]
    [ "$(line 2)" = '{"host_status": 0, "host_stdout": "1\n"}' ]
    [ "$(summary 5)" = '[-1,"timeout",true,"before\n",""]' ]
    [ "$(line 5 | jq '.duration_ms >= 700 and .duration_ms < 5000')" = true ]
    [ "$(line 6)" = '{"host_status": 0, "host_stdout": "0\n"}' ]
    [ "$(summary 7)" = '[0,"exit",true,"[]\nkept",""]' ]
    [ "$(summary 8)" = '[0,"exit",true,"False\n",""]' ]
    [ "$(summary 9)" = '[0,"exit",false,"3\n",""]' ]
    [ "$(cat "$WS/keep/me.txt")" = kept ]
}

@test "session: exec runs /bin/sh -c in /workspace as the sandbox user, stdin /dev/null, and sees the interpreters' files" {
    session "$(run_req python 'open("/tmp/shared", "w").write("from python"); open("w.txt", "w").write("ws")')" \
        "$(exec_req 'pwd; id -u; cat /tmp/shared; echo; cat w.txt; echo; readlink /proc/self/fd/0; cat; echo err >&2; exit 3')" \
        "$(exec_req 'kill -KILL $$')" "$(exec_req 'sleep 30' 500)" "$(run_req python 'print("gone?")')"
    [ "$(summary 2)" = '[3,"exit",false,"/workspace\n1000\nfrom python\nws\n/dev/null\n","err\n"]' ]
    [ "$(summary 3)" = '[137,"killed",false,"",""]' ]
    [ "$(summary 4)" = '[-1,"timeout",true,"",""]' ]
    [ "$(summary 5)" = '[0,"exit",true,"gone?\n",""]' ]
}

@test "session: output beyond output_cap is cut and said" {
    session "$(jq -cn '{op: "run", language: "python", code: "print(\"x\" * 100)", timeout_ms: 10000, output_cap: 10}')" \
        "$(jq -cn '{op: "exec", command: "echo 123456789012 >&2", timeout_ms: 10000, output_cap: 10}')"
    [ "$(line 1 | jq -c '[(.stdout_b64 | @base64d), .stdout_truncated, .stderr_truncated]')" = '["xxxxxxxxxx",true,false]' ]
    [ "$(line 2 | jq -c '[(.stderr_b64 | @base64d), .stdout_truncated, .stderr_truncated]')" = '["1234567890",false,true]' ]
}

@test "session files: put, get, list and delete, with 0 bytes, binary content and parents made" {
    local binary
    binary=$(/usr/bin/python3 -c 'import base64; print(base64.b64encode(bytes(range(256)) * 4).decode())')
    session "$(jq -cn '{op: "put", path: "empty"}')" "$(jq -cn --arg b "$binary" '{op: "put", path: "a/b/c/bin.dat", _content_b64: $b}')" \
        "$(jq -cn '{op: "get", path: "empty"}')" "$(jq -cn '{op: "get", path: "a/b/c/bin.dat"}')" \
        "$(run_req python 'import hashlib; print(hashlib.sha256(open("a/b/c/bin.dat", "rb").read()).hexdigest()); import os; os.symlink("empty", "link"); os.mkfifo("fifo")')" \
        "$(jq -cn '{op: "list"}')" "$(jq -cn '{op: "list", dir: "a/b/c"}')" "$(jq -cn '{op: "list", dir: ""}')" \
        "$(jq -cn '{op: "delete", path: "a"}')" "$(jq -cn '{op: "delete", path: "empty"}')" "$(jq -cn '{op: "list"}')" \
        "$(jq -cn '{op: "get", path: "empty"}')" "$(jq -cn '{op: "delete", path: "empty"}')" "$(jq -cn '{op: "list", dir: "a"}')" \
        "$(jq -cn '{op: "list", dir: "link"}')" "$(jq -cn '{op: "get", path: "fifo"}')" \
        "$(jq -cn '{op: "put", path: "d/x", _content_b64: ("1" | @base64)}')" "$(jq -cn '{op: "get", path: "d"}')" \
        "$(jq -cn '{op: "put", path: "d", _content_b64: ("1" | @base64)}')" "$(jq -cn '{op: "put", path: "d/x", _content_b64: ("22" | @base64)}')" \
        "$(jq -cn '{op: "get", path: "d/x"}')"
    [ "$(line 1)" = '{"status":201,"size":0}' ]
    [ "$(line 2)" = '{"status":201,"size":1024}' ]
    [ "$(sed -n 3p <<<"$output")" = "$(printf '{"status":200,"size":0}\t')" ]
    [ "$(line 4)" = '{"status":200,"size":1024}' ]
    [ "$(bytes_b64 4)" = "$binary" ]
    [ "$(stdout_of 5)" = "$(base64 -d <<<"$binary" | sha256sum | cut -d' ' -f1)" ]
    [ "$(line 6 | jq -c '[.status, (.files | map([.path, .type, .size]))]')" = '[200,[["a","directory",4096],["empty","file",0],["fifo","other",0],["link","symlink",5]]]' ]
    line 6 | jq -e '.files | all(.modified | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))'
    [ "$(line 7 | jq -c '[.status, (.files | map([.path, .type, .size]))]')" = '[200,[["a/b/c/bin.dat","file",1024]]]' ]
    [ "$(line 8 | jq -c '.files | map(.path)')" = '["a","empty","fifo","link"]' ]
    [ "$(line 9)" = '{"status":200}' ]
    [ "$(line 10)" = '{"status":200}' ]
    [ "$(line 11 | jq -c '.files | map(.path)')" = '["fifo","link"]' ]
    [ "$(line 12)" = '{"status":404,"error":"file not found"}' ]
    [ "$(line 13)" = '{"status":404,"error":"file not found"}' ]
    [ "$(line 14)" = '{"status":404,"error":"directory not found"}' ]
    [ "$(line 15)" = '{"status":404,"error":"directory not found"}' ]
    [ "$(line 16)" = "{\"status\":400,\"error\":\"'fifo' is not a regular file\"}" ]
    [ "$(line 17)" = '{"status":201,"size":1}' ]
    [ "$(line 18)" = "{\"status\":400,\"error\":\"'d' is a directory\"}" ]
    [ "$(line 19)" = "{\"status\":400,\"error\":\"'d' is a directory\"}" ]
    [ "$(line 20)" = '{"status":201,"size":2}' ]
    [ "$(bytes_b64 21 | base64 -d)" = 22 ]
    # On the session's disk, the host directory, as the sandbox user.
    [ "$(cat "$WS/d/x")" = 22 ]
    [ ! -e "$WS/a" ]
}

@test "session files: a listing of a file is refused, and a listing's entries are one level" {
    session "$(jq -cn '{op: "put", path: "f", _content_b64: ("x" | @base64)}')" "$(jq -cn '{op: "list", dir: "f"}')"
    [ "$(line 1)" = '{"status":201,"size":1}' ]
    [ "$(line 2)" = "{\"status\":400,\"error\":\"'f' is not a directory\"}" ]
}

@test "session files: paths that climb out of the workspace are refused, those that stay in are not" {
    local p reqs=() i=0
    for p in ../x /etc/passwd a/../../x ./../x . a/.. 'a/b/../../..'; do
        reqs+=("$(jq -cn --arg p "$p" '{op: "put", path: $p, _content_b64: ("x" | @base64)}')" \
            "$(jq -cn --arg p "$p" '{op: "get", path: $p}')" "$(jq -cn --arg p "$p" '{op: "delete", path: $p}')" \
            "$(jq -cn --arg p "$p" '{op: "list", dir: $p}')")
    done
    # Positive controls: the same shapes, staying inside.
    reqs+=("$(jq -cn '{op: "put", path: "s/t/../x", _content_b64: ("x" | @base64)}')" "$(jq -cn '{op: "get", path: "./s/x"}')" \
        "$(jq -cn '{op: "list", dir: "s/t/.."}')" "$(jq -cn '{op: "delete", path: "b/../s/./x"}')")
    session "${reqs[@]}"
    for p in ../x /etc/passwd a/../../x ./../x . a/.. 'a/b/../../..'; do
        for op in put get delete list; do
            i=$((i + 1))
            [ "$(line "$i")" = "$(jq -cn --arg e "file path escapes working directory: '$p'" '{status: 400, error: $e}')" ] ||
                { echo "$op $p: $(line "$i")" >&2; false; }
        done
    done
    [ "$(line $((i + 1)))" = '{"status":201,"size":1}' ]
    [ "$(line $((i + 2)))" = '{"status":200,"size":1}' ]
    [ "$(line $((i + 3)) | jq -c '[.status, (.files | map(.path))]')" = '[200,["s/x"]]' ]
    [ "$(line $((i + 4)))" = '{"status":200}' ]
    [ -d "$WS/s" ]
    [ ! -e "$WS/s/x" ]
    [ ! -e "$WS/s/t" ]
}

@test "session files: links the code made that lead out are refused by get and put, links inside are followed" {
    session "$(jq -cn '{op: "put", path: "in.txt", _content_b64: ("inside" | @base64)}')" \
        "$(run_req bash 'ln -s /etc/passwd pw; ln -s .. up; ln -s ../outside.txt out; ln -s in.txt inlink; mkdir -p sub; ln -s ../in.txt sub/rel; head -c 4 pw; echo')" \
        "$(jq -cn '{op: "get", path: "pw"}')" "$(jq -cn '{op: "put", path: "pw", _content_b64: ("owned" | @base64)}')" \
        "$(jq -cn '{op: "get", path: "up/x"}')" "$(jq -cn '{op: "put", path: "up/x", _content_b64: ("owned" | @base64)}')" \
        "$(jq -cn '{op: "put", path: "out", _content_b64: ("owned" | @base64)}')" "$(jq -cn '{op: "list", dir: "up"}')" \
        "$(jq -cn '{op: "get", path: "inlink"}')" "$(jq -cn '{op: "get", path: "sub/rel"}')" \
        "$(exec_req 'head -c 4 /etc/passwd; echo; grep -c owned /etc/passwd; readlink pw; test -e /outside.txt; echo $?')"
    # Positive control: the link to /etc/passwd works for the code itself.
    [ "$(summary 2)" = '[0,"exit",false,"root\n",""]' ]
    for i in 3 4; do [ "$(line "$i")" = "{\"status\":400,\"error\":\"file path escapes working directory: 'pw'\"}" ]; done
    for i in 5 6; do [ "$(line "$i")" = "{\"status\":400,\"error\":\"file path escapes working directory: 'up/x'\"}" ]; done
    [ "$(line 7)" = "{\"status\":400,\"error\":\"file path escapes working directory: 'out'\"}" ]
    [ "$(line 8)" = "{\"status\":400,\"error\":\"file path escapes working directory: 'up'\"}" ]
    [ "$(bytes_b64 9 | base64 -d)" = inside ]
    [ "$(bytes_b64 10 | base64 -d)" = inside ]
    [ "$(stdout_of 11)" = "$(printf 'root\n0\n/etc/passwd\n1')" ]
    [ ! -e "$(dirname "$WS")/outside.txt" ]
    [ "$(readlink "$WS/pw")" = /etc/passwd ]
}

@test "session files: a put that does not fit is 507 and leaves no file, one that fits is written" {
    head -c $((2 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/big"
    session --workspace-tmpfs=$((1 << 20)) \
        "$(jq -cn '{op: "put", path: "small", _content_b64: ("y" * 4096 | @base64)}')" \
        "$(jq -cn --arg f "$BATS_TEST_TMPDIR/big" '{op: "put", path: "d/big", _content_file: $f}')" \
        "$(jq -cn --arg f "$BATS_TEST_TMPDIR/big" '{op: "put", path: "small", _content_file: $f}')" \
        "$(jq -cn '{op: "list"}')" "$(jq -cn '{op: "list", dir: "d"}')" "$(jq -cn '{op: "get", path: "small"}')"
    [ "$(line 1)" = '{"status":201,"size":4096}' ]
    [ "$(line 2)" = '{"status":507,"error":"no space left on the session'"'"'s disk"}' ]
    [ "$(line 3)" = '{"status":507,"error":"no space left on the session'"'"'s disk"}' ]
    # The parents a put made stay; the file it did not write, and its temporary file, do not.
    [ "$(line 4 | jq -c '.files | map([.path, .type])')" = '[["d","directory"],["small","file"]]' ]
    [ "$(line 5 | jq -c '.files')" = '[]' ]
    [ "$(line 6)" = '{"status":200,"size":4096}' ]
    [ "$(bytes_b64 6 | base64 -d)" = "$(printf 'y%.0s' $(seq 4096))" ]
}

@test "session files: a get streams the file, never holding it; one over its max_bytes is refused unread" {
    truncate -s 4G "$WS/sparse"
    head -c $((16 << 20)) /dev/urandom >"$WS/mid"
    # The runner's peak resident memory, in KiB, before and after sending 16 MiB.
    local hwm='sed -n "s/^VmHWM: *\([0-9]*\) kB/\1/p" /proc/$RUNNER_PID/status'
    session "$(host "$hwm")" "$(jq -cn '{op: "get", path: "sparse", max_bytes: 1048576}')" \
        "$(jq -cn '{op: "get", path: "mid", max_bytes: 16777216}')" "$(host "$hwm")" \
        "$(jq -cn '{op: "get", path: "mid", max_bytes: -1}')" "$(jq -cn '{op: "get", path: "mid", max_bytes: "x"}')" \
        "$(run_req python 'print("still here")')"
    [ "$(line 2)" = "{\"status\":413,\"error\":\"'sparse' is larger than 1048576 bytes\"}" ]
    [ "$(line 3)" = '{"status":200,"size":16777216}' ]
    [ "$(bytes_b64 3 | base64 -d | sha256sum | cut -d' ' -f1)" = "$(sha256sum "$WS/mid" | cut -d' ' -f1)" ]
    before=$(line 1 | jq -r .host_stdout)
    after=$(line 4 | jq -r .host_stdout)
    [ $((after - before)) -lt 4096 ] || { echo "the runner grew from $before to $after KiB" >&2; false; }
    [ "$(line 5)" = '{"status":400,"error":"max_bytes must be a number of bytes"}' ]
    [ "$(line 6)" = '{"status":400,"error":"max_bytes must be a number of bytes"}' ]
    [ "$(summary 7)" = '[0,"exit",false,"still here\n",""]' ]
}

@test "session: malformed requests are refused with 400, and the runner serves on" {
    session '{"_raw": "not json"}' '{"_raw": "[1]"}' '{"_raw": "{\"op\": \"fly\"}"}' '{"_raw": "{\"code\": \"print(1)\"}"}' \
        '{"_raw": "{\"op\": \"run\", \"language\": \"cobol\", \"code\": \"x\"}"}' '{"_raw": "{\"op\": \"run\", \"code\": 5}"}' \
        '{"_raw": "{\"op\": \"exec\"}"}' '{"_raw": "{\"op\": \"get\", \"path\": \"x\"} trailing"}' \
        '{"_raw": "{\"op\": \"run\", \"language\": \"python\", \"code\": \"1\", \"timeout_ms\": 0}"}' \
        '{"_raw": "{\"op\": \"get\", \"path\": 5}"}' '{"_probe": true}' \
        "$(run_req python 'print("still here")')"
    for i in $(seq 1 10); do
        [ "$(line "$i" | jq -c '[.status, (.error | type)]')" = '[400,"string"]' ] || { echo "$i: $(line "$i")" >&2; false; }
    done
    [ "$(line 11)" = '{"probe": "ready\n"}' ]
    [ "$(summary 12)" = '[0,"exit",false,"still here\n",""]' ]
}

@test "session files: a put's bytes are every byte after the request's line, leading blanks and comments too" {
    session "$(jq -cn '{op: "put", path: "nl", _content_b64: ("\n  x" | @base64)}')" \
        "$(jq -cn '{op: "put", path: "comment.js", _content_b64: ("// c\n/* d */x" | @base64)}')" \
        "$(jq -cn '{op: "put", path: "slash", _content_b64: ("/usr/bin" | @base64)}')" \
        "$(jq -cn '{op: "get", path: "nl"}')" "$(jq -cn '{op: "get", path: "comment.js"}')" "$(jq -cn '{op: "get", path: "slash"}')"
    [ "$(line 1)" = '{"status":201,"size":4}' ]
    [ "$(line 2)" = '{"status":201,"size":13}' ]
    [ "$(line 3)" = '{"status":201,"size":8}' ]
    [ "$(bytes_b64 4)" = "$(printf '\n  x' | base64)" ]
    [ "$(bytes_b64 5)" = "$(printf '// c\n/* d */x' | base64)" ]
    [ "$(bytes_b64 6)" = "$(printf '/usr/bin' | base64)" ]
}

# A host command: the runner and every process of its machine, each with how many times it was
# switched out (voluntarily or not, over all its threads), once, then again after 3 s of nothing;
# fails if any changed. A process that sleeps in accept(), poll() or read() with no timeout is never
# switched out, one that wakes on a timer is.
IDLE_CHECK='tree() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done; }
switches() { for p in $(tree "$RUNNER_PID"); do echo "$p $(cat /proc/"$p"/comm /proc/"$p"/task/*/status 2>/dev/null | awk "NR == 1 { c = \$1 } /voluntary_ctxt_switches/ { s += \$2 } END { print c, s }")"; done; }
a=$(switches); sleep 3; b=$(switches); echo "$a"; [ "$a" = "$b" ]'

@test "session: between ops the runner and its machine sleep, with an interpreter of each language started" {
    session "$(run_req python 'x = 1')" "$(run_req node 'let y = 2')" "$(run_req bash 'z=3')" "$(host "$IDLE_CHECK")" \
        "$(run_req bash '(while :; do sleep 0.2; done) >/dev/null 2>&1 &')" "$(host "$IDLE_CHECK")"
    [ "$(summary 3)" = '[0,"exit",false,"",""]' ]
    # The runner, the zygote, the session sandbox's init and the three interpreters were looked at.
    [ "$(line 4 | jq -r .host_stdout | grep -c -e sandboxd-runner -e sandboxd-zygote -e node -e bash)" -ge 5 ]
    [ "$(line 4 | jq -c .host_status)" = 0 ]
    # The positive control: a process of the machine that wakes every 200 ms is seen.
    [ "$(summary 5)" = '[0,"exit",false,"",""]' ]
    [ "$(line 6 | jq -c .host_status)" = 1 ]
}
