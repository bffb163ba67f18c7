#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# POST /v1/execute over real HTTP: nginx -> FastCGI worker -> sd-bus -> systemd-nspawn.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

teardown() {
    execute_abandon
    expect_no_leftovers
}

# bats test_tags=vm
@test "print(2**32) runs in a sandbox and answers the reference's shape" {
    execute '{"code":"print(2**32)"}'
    expect_status 200
    expect_request_id
    [ "$ctype" = application/json ]
    [ "$(field .stdout)" = 4294967296 ]
    [ "$(jq -c '{stdout, stderr, exit_code}' <<<"$body")" = '{"stdout":"4294967296\n","stderr":"","exit_code":0}' ]
    [[ $(field .sandbox_id) =~ ^sandbox-[a-z2-7]{12}$ ]]
    [ "$(jq -r '.duration_ms | type' <<<"$body")" = number ]
    # The reference's fields, and what the run used.
    [ "$(jq -r 'keys | join(",")' <<<"$body")" = "duration_ms,exit_code,sandbox_id,stderr,stdout,usage" ]
}

@test "every call gets a different sandbox" {
    execute '{"code":"print(1)"}'
    first=$(field .sandbox_id)
    execute '{"code":"print(1)"}'
    [ "$(field .sandbox_id)" != "$first" ]
}

# bats test_tags=vm
@test "the code runs unprivileged, in its working directory, with no network but loopback" {
    execute "$(code_json 'import os, socket
print(os.getuid(), os.getcwd())
print(sorted(i[1] for i in socket.if_nameindex()))')"
    expect_status 200
    [ "$(field .stdout)" = "1000 /workspace
['lo']" ]
}

@test "a non-zero exit is still 200, with the exit code" {
    execute '{"code":"import sys; print(\"bye\"); sys.exit(3)"}'
    expect_status 200
    [ "$(field .exit_code)" = 3 ]
    [ "$(field .stdout)" = bye ]
}

# bats test_tags=vm
@test "an uncaught exception exits 1 with the traceback on stderr" {
    execute '{"code":"1/0"}'
    expect_status 200
    [ "$(field .exit_code)" = 1 ]
    [[ $(field .stderr) == *"ZeroDivisionError: division by zero"* ]]
}

# What depends on the runtime image only: in the VM that keeps an image of its own (tests/vm/guest).
# bats test_tags=vm-image
@test "python3 -c semantics: each snippet answers as the image's /usr/bin/python3 -c does bare" {
    # Differential: the same code through the API and through the same interpreter run bare (in an
    # empty directory, the sandbox's environment), compared stream by stream with the exit status.
    snippets=(
        'import sys; print(sys.argv, __name__, sorted(globals()))'
        $'def f():\n    1/0\nf()'
        'x = ('
        'import sys; sys.exit(2**64)'
        'import sys; sys.exit("bye")'
        'raise KeyboardInterrupt'
        $'try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise ValueError("v") from e'
        $'class A:\n    def __del__(self):\n        print("del")\na = A()\nprint("end")'
        $'def g():\n    try:\n        yield 1\n    finally:\n        print("finally")\nit = g()\nnext(it)'
        $'import atexit, threading, time\natexit.register(print, "atexit")\nthreading.Thread(target=lambda: (time.sleep(0.2), print("thread"))).start()\nprint("main")'
        'import sys; print("x", end=""); sys.stdout.close()'
        'import os; os.setsid(); print("own session")'
        'import sys; print(sys.orig_argv[1:])'
        'print("no newline at the end", end="")'
    )
    tmp=$(mktemp -d)
    for code in "${snippets[@]}"; do
        rc=0
        runtime_bare "$tmp" /usr/bin/python3 -c "$code" || rc=$?
        execute "$(code_json "$code")"
        expect_status 200
        expect_like_host "$tmp" "$code" "$rc"
    done
    rm -rf "$tmp"
}

@test "a file the code left open is complete when it comes back" {
    execute "$(code_json 'f = open("out.txt", "w"); f.write("hello")' '{return_files: ["out.txt"]}')"
    expect_status 200
    [ "$(field '.files[0].content_b64')" = "$(printf hello | base64)" ]
}

@test "death by a signal reads as 128 + the signal" {
    execute '{"code":"import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}'
    expect_status 200
    [ "$(field .exit_code)" = 137 ]
}

@test "timeout: stderr 'timed out after Ns', exit code -1, every process killed" {
    marker="sbx-timeout-$RANDOM$RANDOM"
    code_json "import subprocess
subprocess.Popen($(marker_argv "$marker"))
subprocess.Popen(['/bin/sh', '-c', 'while :; do :; done'])
while True: pass" '{timeout_s: 2}' >"$BATS_TEST_TMPDIR/req"
    execute_async "$BATS_TEST_TMPDIR/req"
    marker_pid "$marker"
    execute_wait
    expect_status 200
    [ "$(field .stderr)" = "timed out after 2s" ]
    [ "$(field .exit_code)" = -1 ]
    [ "$(field .stdout)" = "" ]
    [ "$(field .duration_ms)" -ge 2000 ]
    [ "$(field .duration_ms)" -lt 10000 ]
    expect_no_leftovers
    expect_marker_gone "$marker"
}

@test "timeout_s 0 or absent means the default of 20 s" {
    # The default shows only in what happens at it: both requests time out after 20 s, together.
    code_json 'import time; time.sleep(60)' '{timeout_s: 0}' >"$BATS_TEST_TMPDIR/zero"
    execute_async "$BATS_TEST_TMPDIR/zero"
    execute "$(code_json 'import time; time.sleep(60)')"
    expect_status 200
    [ "$(field .stderr)" = "timed out after 20s" ]
    [ "$(field .duration_ms)" -ge 20000 ]
    execute_wait
    expect_status 200
    [ "$(field .stderr)" = "timed out after 20s" ]
    [ "$(field .exit_code)" = -1 ]
    [ "$(field .duration_ms)" -ge 20000 ]
    execute '{"code":"print(1)","timeout_s":0}'
    expect_status 200
    [ "$(field .stdout)" = 1 ]
}

@test "a background child left running when the snippet exits is killed with it" {
    marker="sbx-bg-$RANDOM$RANDOM"
    # The snippet ends once the test has seen its child running.
    code_json "import os, subprocess, time
subprocess.Popen($(marker_argv "$marker"))
$(until_released seen finished 500)" >"$BATS_TEST_TMPDIR/req"
    execute_async "$BATS_TEST_TMPDIR/req"
    pid=$(marker_pid "$marker")
    release "$pid" seen
    execute_wait
    expect_status 200
    [ "$(field .stdout)" = finished ]
    [ "$(field .exit_code)" = 0 ]
    expect_no_leftovers
    expect_marker_gone "$marker"
}

@test "stdin is fed to the program" {
    execute '{"code":"import sys; print(sys.stdin.read().upper())","stdin":"hello\nworld"}'
    expect_status 200
    [ "$(field .stdout)" = "HELLO
WORLD" ]
}

# bats test_tags=vm
@test "files land in the working directory, subfolders created, binary content intact" {
    head -c 4096 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
    b64=$(base64 -w0 "$BATS_TEST_TMPDIR/blob")
    execute "$(jq -cn --arg b "$b64" '{code: "import hashlib; print(hashlib.sha256(open(\"data/in/blob.bin\",\"rb\").read()).hexdigest())",
        files: [{path: "data/in/blob.bin", content_b64: $b}, {path: "notes.txt", content_b64: "aGk="}]}')"
    expect_status 200
    [ "$(field .stdout)" = "$(sha256sum <"$BATS_TEST_TMPDIR/blob" | cut -d' ' -f1)" ]
}

@test "return_files: binary content comes back byte for byte, missing files are left out" {
    head -c 1000 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
    b64=$(base64 -w0 "$BATS_TEST_TMPDIR/blob")
    execute "$(jq -cn --arg b "$b64" '{code: "import shutil, os; os.makedirs(\"out\"); shutil.copy(\"in.bin\", \"out/copy.bin\")",
        files: [{path: "in.bin", content_b64: $b}], return_files: ["out/copy.bin", "nothing-here.txt"]}')"
    expect_status 200
    [ "$(jq -r '.files | length' <<<"$body")" = 1 ]
    [ "$(jq -r '.files[0].path' <<<"$body")" = out/copy.bin ]
    [ "$(jq -r '.files[0].content_b64' <<<"$body")" = "$b64" ]
}

@test "a file written by the code comes back through return_files" {
    execute '{"code":"open(\"result.csv\",\"w\").write(\"a,b\\n1,2\\n\")","return_files":["result.csv"]}'
    expect_status 200
    [ "$(jq -r '.files[0].content_b64' <<<"$body" | base64 -d)" = "a,b
1,2" ]
}

@test "file paths that climb out of the working directory are refused with the sandbox's 502" {
    # The worker refuses these itself, in the runner's words, before it claims a sandbox: the
    # runner's own check is tested directly (runner.bats).
    for p in ../x /etc/passwd a/../../x; do
        execute "$(jq -cn --arg p "$p" '{code: "print(1)", files: [{path: $p, content_b64: "eA=="}]}')"
        expect_error 502 "the sandbox returned HTTP 400: file path escapes working directory: '$p'"
    done
}

@test "the runner's own refusals reach the client as the sandbox's 502: return files over the cap, a file it cannot write" {
    # Paths that climb out are refused by the worker before a sandbox is involved (above); these two
    # only the runner inside the sandbox can find out. The return cap is 8 MiB in all.
    execute "$(code_json 'open("big", "wb").write(b"r" * (8 * 1024 * 1024 + 1))' '{return_files: ["big"]}')"
    expect_error 502 "the sandbox returned HTTP 400: return_files are larger than 8388608 bytes"
    execute '{"code":"print(1)","files":[{"path":"a","content_b64":""},{"path":"a/b","content_b64":""}]}'
    expect_error 502 "the sandbox returned HTTP 400: could not write 'a/b': Not a directory"
}

@test "a reply at every cap at once: stdout and stderr at the output cap, return files at the return cap" {
    # 1 MiB each for stdout and stderr (SANDBOXD_OUTPUT_CAP_BYTES), 8 MiB of returned files in all.
    setting_default SANDBOXD_OUTPUT_CAP_BYTES
    setting_default SANDBOXD_RETURN_CAP_BYTES
    execute "$(code_json 'import sys
sys.stdout.write("o" * (2 << 20))
sys.stderr.write("e" * (2 << 20))
for i in range(8):
    open("r%d" % i, "wb").write(bytes([65 + i]) * (1 << 20))' '{return_files: ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"]}')"
    expect_status 200
    [ "$(jq -c '[(.stdout | length), .stdout_truncated, (.stderr | length), .stderr_truncated, .exit_code]' <<<"$body")" = '[1048576,true,1048576,true,0]' ]
    [ "$(jq -r '.stdout + .stderr | explode | unique | implode' <<<"$body")" = eo ]
    [ "$(jq -c '[.files[] | [.path, (.content_b64 | @base64d | length), (.content_b64 | @base64d | explode | unique | implode)]]' <<<"$body")" = \
        '[["r0",1048576,"A"],["r1",1048576,"B"],["r2",1048576,"C"],["r3",1048576,"D"],["r4",1048576,"E"],["r5",1048576,"F"],["r6",1048576,"G"],["r7",1048576,"H"]]' ]
}

@test "invalid base64 content is a 400 with a clear message" {
    execute '{"code":"print(1)","files":[{"path":"a.txt","content_b64":"not base64!"}]}'
    expect_error 400 "files[0].content_b64 is not valid base64"
}

@test "output that is not UTF-8 still yields valid JSON" {
    execute '{"code":"import sys; sys.stdout.buffer.write(b\"ok \\xff\\xfe \\xc3\\x28 end\\n\"); sys.stderr.buffer.write(b\"\\x80\")"}'
    expect_status 200
    [ "$(field .stdout)" = "ok �� �( end" ]
    [ "$(field .stderr)" = "�" ]
}

@test "output past the cap is cut and flagged; a small output carries no flag" {
    execute '{"code":"import sys; sys.stdout.write(\"x\" * 3000000); sys.stderr.write(\"e\" * 10)"}'
    expect_status 200
    [ "$(jq -r '.stdout | length' <<<"$body")" = 1048576 ]
    [ "$(field .stdout_truncated)" = true ]
    [ "$(field .stderr)" = eeeeeeeeee ]
    [ "$(jq -r 'has("stderr_truncated")' <<<"$body")" = false ]
}

@test "a 200 MiB print ends in bounded time with a bounded body" {
    SECONDS=0
    execute '{"code":"import sys\nchunk = \"y\" * (1 << 20)\nfor _ in range(200): sys.stdout.write(chunk)"}'
    expect_status 200
    [ "$SECONDS" -lt 30 ]
    [ "$(field .stdout_truncated)" = true ]
    [ "${#body}" -lt 3000000 ]
}

@test "invalid JSON bodies are 400 'invalid JSON body'" {
    for b in 'nope' '' '[1,2]' '"code"' '{"code":"x"} trailing' '{"code":' "$(printf '{"code":"\xff"}')"; do
        execute "$b"
        expect_error 400 "invalid JSON body"
    done
}

@test "code missing or not a string is a 400" {
    execute '{}'
    expect_error 400 "code is required and must be a string"
    execute '{"code": 42}'
    expect_error 400 "code is required and must be a string"
}

@test "unsupported language" {
    execute '{"code":"puts 1","language":"ruby"}'
    expect_error 400 'unsupported language "ruby"'
    execute '{"code":"print(1)","language":"python"}'
    expect_status 200
}

@test "timeout_s out of range or of the wrong type" {
    for t in 61 -1 1000000 '"5"' 5.5 true '[]' 99999999999999999999; do
        execute "{\"code\":\"print(1)\",\"timeout_s\":$t}"
        expect_error 400 "timeout_s must be between 1 and 60"
    done
}

@test "only POST works on /v1/execute" {
    for m in GET PUT DELETE PATCH; do
        api "$m" /v1/execute
        expect_error 405 "method not allowed"
    done
}

@test "unknown routes are a JSON 404, inside /v1/ and outside" {
    api GET /v1/nothing
    expect_error 404 "not found"
    api GET /
    expect_error 404 "not found"
}

@test "a body over the cap is nginx's JSON 413, with a request id" {
    head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$BATS_TEST_TMPDIR/big"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/big"
    expect_error 413 "request body too large"
}

# bats test_tags=vm
@test "each request has its journald audit entry and its sqlite row" {
    execute '{"code":"import sys; sys.exit(7)"}'
    expect_status 200
    sid=$(field .sandbox_id)
    entry=$(journal_entry "$rid")
    [ "$(jq -r .SANDBOX_ID <<<"$entry")" = "$sid" ]
    [ "$(jq -r .STATUS <<<"$entry")" = 200 ]
    [ "$(jq -r .EXIT_CODE <<<"$entry")" = 7 ]
    [ "$(jq -r .ROUTE <<<"$entry")" = "POST /v1/execute" ]
    [[ $(jq -r .DURATION_MS <<<"$entry") =~ ^[0-9]+$ ]]
    # Where its time went: waiting for a machine, then the exchange with it.
    [[ $(jq -r .CLAIM_USEC <<<"$entry") =~ ^[1-9][0-9]*$ ]]
    [[ $(jq -r .EXCHANGE_USEC <<<"$entry") =~ ^[1-9][0-9]*$ ]]
    [ "$(db "SELECT route, sandbox_id, status, exit_code FROM requests WHERE request_id = '$rid'")" = "POST /v1/execute|$sid|200|7" ]
}

@test "errors are recorded too" {
    execute '{"code":"x","language":"cobol"}'
    expect_status 400
    [ "$(db "SELECT status, error FROM requests WHERE request_id = '$rid'")" = '400|unsupported language "cobol"' ]
    entry=$(journal_entry "$rid")
    [ "$(jq -r .STATUS <<<"$entry")" = 400 ]
    # Refused before any machine was claimed: no stage it never reached.
    [ "$(jq -r 'has("CLAIM_USEC"), has("EXCHANGE_USEC")' <<<"$entry" | sort -u)" = false ]
}
