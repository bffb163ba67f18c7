#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# POST /v1/call: an agent's own tool function, in a one-use sandbox made from its image.
# Needs the demo-agent image (make images).

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
    if [ ! -d /var/lib/machines/demo-agent ]; then
        echo "the demo-agent image is missing (run: make images)" >&2
        return 1
    fi
}

SANDBOXD_IMAGE=${SANDBOXD_IMAGE:-/usr/local/sbin/sandboxd-image}

teardown() {
    local t
    clear_settings zz-call-test || true
    for t in /var/lib/machines/sbx-test-*; do
        [ -e "$t" ] || continue
        rm -rf "$t" "$TOOL_STATE/$(basename "$t").json"
    done
    rm -rf "$TOOL_STATE"/sbx-test-*.json "$BATS_TEST_TMPDIR/src"
    expect_no_leftovers
}

# expect_no_sandbox: the last request asked for no tool sandbox (refused before one was started).
expect_no_sandbox() {
    [ "$(db "SELECT coalesce(sandbox_id, '-') FROM requests WHERE request_id = '$rid'")" = - ]
}

# expect_sandbox: the last request did start one.
expect_sandbox() {
    [[ $(db "SELECT coalesce(sandbox_id, '-') FROM requests WHERE request_id = '$rid'") == tool-* ]]
}

NOT_FOUND="could not start a sandbox for this tool call: image 'sandboxd-runtime' not found in /var/lib/machines"

call() {
    api POST /v1/call "$1"
}

@test "the reference's call: get_weather in the demo agent's image" {
    call '{"image":"registry.example/demo-agent:abc123","module":"agent","function":"get_weather","args":{"city":"Reykjavik"},"timeout_s":30}'
    expect_status 200
    expect_request_id
    [ "$(jq -c .result <<<"$body")" = '{"temp_c":4}' ]
    [[ $(field .sandbox_id) =~ ^tool-[a-z2-7]{12}$ ]]
    [[ $(field .duration_ms) =~ ^[0-9]+$ ]]
    [ "$(jq -r 'keys | join(",")' <<<"$body")" = "duration_ms,result,sandbox_id,usage" ]
    expect_sandbox_gone "$(field .sandbox_id)"
}

@test "module defaults to agent, args to none" {
    call '{"image":"demo-agent","function":"nothing"}'
    expect_status 200
    # A None result leaves "result" out: empty fields are not sent as null, and there is no error key.
    [ "$(jq -r 'keys | join(",")' <<<"$body")" = "duration_ms,sandbox_id,usage" ]
}

@test "a function that raises: the error key holds the exception text, no result" {
    call '{"image":"demo-agent","function":"fail","args":{"message":"the sky fell"}}'
    expect_status 200
    [ "$(field .error)" = "RuntimeError: the sky fell" ]
    [ "$(jq -r 'has("result")' <<<"$body")" = false ]
}

@test "bad args: the TypeError text" {
    call '{"image":"demo-agent","function":"get_weather","args":{"town":"Oslo"}}'
    expect_status 200
    [ "$(field .error)" = "TypeError: get_weather() got an unexpected keyword argument 'town'" ]
}

@test "unknown function and unknown module are tool execution failures" {
    call '{"image":"demo-agent","function":"no_such_tool"}'
    expect_error 502 "tool execution failed: module 'agent' has no function 'no_such_tool'"
    call '{"image":"demo-agent","module":"nomod","function":"f"}'
    expect_error 502 "tool execution failed: cannot import module 'nomod': ModuleNotFoundError: No module named 'nomod'"
}

@test "unknown image: could not start a sandbox" {
    call '{"image":"registry.example/no-such-agent:v1","function":"f"}'
    expect_error 503 "could not start a sandbox for this tool call: image 'no-such-agent' not found in /var/lib/machines"
    call '{"image":"registry.example/..:v1","function":"f"}'
    expect_error 503 "could not start a sandbox for this tool call: invalid image reference"
}

@test "an image without an interpreter: the tool sandbox did not start" {
    mkdir -p /var/lib/machines/sbx-test-nopython/{etc,usr/bin,tmp}
    as_tool_image sbx-test-nopython
    call '{"image":"sbx-test-nopython","function":"get_weather"}'
    expect_error 503 "the tool sandbox did not start: the tool sandbox exited before it was ready (phase Failed); the agent image must contain /usr/bin/python3"
}

# What systemd said of nspawn, logged when a tool sandbox did not start: proves the sandbox ran.
did_not_start_line() {
    in_systemd journalctl -q -o cat "REQUEST_ID=$rid" SYSLOG_IDENTIFIER=sandboxd 2>/dev/null | grep '^Tool sandbox .* did not start: '
}

did_not_start_entry() {
    poll did_not_start_line
}

@test "an interpreter nspawn cannot execute: the tool sandbox did not start, told by its exit status" {
    # /usr/bin/python3 is there (a dangling link), so the sandbox starts and nspawn fails to execute it.
    mkdir -p /var/lib/machines/sbx-test-badpython/{etc,usr/bin,tmp}
    ln -s /nonexistent /var/lib/machines/sbx-test-badpython/usr/bin/python3
    as_tool_image sbx-test-badpython
    call '{"image":"sbx-test-badpython","function":"get_weather"}'
    expect_error 503 "the tool sandbox did not start: the tool sandbox exited before it was ready (phase Failed); the agent image must contain /usr/bin/python3"
    entry=$(did_not_start_entry)
    [[ $entry == *"result exit-code, main process code 1 status 1:"* ]]
}

@test "an interpreter that exits 3 before it is ready: did not start, without blaming the image" {
    mkdir -p /var/lib/machines/sbx-test-badpython/{etc,usr/bin,tmp}
    cp -a /var/lib/machines/demo-agent/. /var/lib/machines/sbx-test-badpython/
    rm -f /var/lib/machines/sbx-test-badpython/usr/bin/python3
    printf '#!/bin/sh\nexit 3\n' >/var/lib/machines/sbx-test-badpython/usr/bin/python3
    chmod 0755 /var/lib/machines/sbx-test-badpython/usr/bin/python3
    as_tool_image sbx-test-badpython
    call '{"image":"sbx-test-badpython","function":"get_weather"}'
    expect_error 503 "the tool sandbox did not start: the tool sandbox exited before it was ready (phase Failed)"
    entry=$(did_not_start_entry)
    [[ $entry == *"result exit-code, main process code 1 status 3:"* ]]
}

@test "image and function are required" {
    for b in '{}' '{"image":"demo-agent"}' '{"function":"get_weather"}' '{"image":"","function":"f"}' '{"image":5,"function":"f"}'; do
        call "$b"
        expect_error 400 "image and function are required"
    done
}

@test "field checks: args, module, function names" {
    call '{"image":"demo-agent","function":"get_weather","args":[1]}'
    expect_error 400 "args must be a JSON object"
    call '{"image":"demo-agent","function":"get_weather","module":"../x"}'
    expect_error 400 "module must be a Python module name"
    call '{"image":"demo-agent","function":"os.system"}'
    expect_error 400 "function must be a Python function name"
    call 'not json'
    expect_error 400 "invalid JSON body"
}

@test "timeout_s: default 30, at most 120" {
    for t in 121 -1 '"30"' 1.5; do
        call "{\"image\":\"demo-agent\",\"function\":\"nothing\",\"timeout_s\":$t}"
        expect_error 400 "timeout_s must be between 1 and 120"
    done
    call '{"image":"demo-agent","function":"nothing","timeout_s":120}'
    expect_status 200
    # The default shows only in what happens at it.
    SECONDS=0
    call '{"image":"demo-agent","function":"sleep","args":{"seconds":60}}'
    expect_error 502 "tool execution failed: timed out after 30s"
    [ "$SECONDS" -ge 30 ]
}

@test "a function that sleeps past its timeout is killed" {
    SECONDS=0
    call '{"image":"demo-agent","function":"sleep","args":{"seconds":30},"timeout_s":2}'
    expect_error 502 "tool execution failed: timed out after 2s"
    [ "$SECONDS" -lt 10 ]
    expect_no_leftovers
}

@test "a result that is not JSON-serializable is a clear error" {
    call '{"image":"demo-agent","function":"unserializable"}'
    expect_error 502 "tool execution failed: the result is not JSON-serializable: Object of type object is not JSON serializable"
}

@test "a reply over 8 MiB is refused" {
    call '{"image":"demo-agent","function":"big","args":{"n":9000000}}'
    expect_error 502 "invalid response from the tool sandbox"
    call '{"image":"demo-agent","function":"big","args":{"n":1000}}'
    expect_status 200
    [ "$(jq -r '.result | length' <<<"$body")" = 1000 ]
}

@test "what a tool prints cannot forge its reply" {
    call '{"image":"demo-agent","function":"chatty"}'
    expect_status 200
    [ "$(field .result)" = clean ]
}

@test "bodies over 1 MiB are 413" {
    head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' 'a' >"$BATS_TEST_TMPDIR/big"
    api_file POST /v1/call "$BATS_TEST_TMPDIR/big"
    expect_error 413 "request body too large"
}

@test "the tool sandbox carries none of the worker's environment, credentials or sockets" {
    with_settings zz-call-test "SANDBOXD_TEST_SECRET=s3cr3t-$$"
    # The broker starts the tool sandbox, the worker asks for it: both hold the secret.
    [[ $(in_systemd systemctl show -P Environment sandbox-api.service) == *"s3cr3t-$$"* ]]
    [[ $(in_systemd systemctl show -P Environment sandboxd-broker.service) == *"s3cr3t-$$"* ]]
    call '{"image":"demo-agent","function":"environment"}'
    expect_status 200
    [[ $body != *s3cr3t* ]]
    [ "$(jq -r '.result | keys | map(select(startswith("SANDBOXD_") or . == "INVOCATION_ID" or . == "JOURNAL_STREAM")) | length' <<<"$body")" = 0 ]
    # The service's port, which answers from here (require_stack).
    call "{\"image\":\"demo-agent\",\"function\":\"reach\",\"args\":{\"port\":$(listen_port)}}"
    expect_status 200
    [ "$(jq -c .result <<<"$body")" = '{"dbus_socket_exists":false,"tcp4":"ConnectionRefusedError","tcp6":"ConnectionRefusedError","interfaces":["lo"],"host_db_visible":false,"uid":1000}' ]
}

@test "each call has its journald entry and sqlite row" {
    call '{"image":"demo-agent","function":"add","args":{"a":2,"b":3}}'
    expect_status 200
    [ "$(field .result)" = 5 ]
    sid=$(field .sandbox_id)
    entry=$(journal_entry "$rid")
    [ "$(jq -r .SANDBOX_ID <<<"$entry")" = "$sid" ]
    [ "$(jq -r .ROUTE <<<"$entry")" = "POST /v1/call" ]
    [ "$(jq -r .STATUS <<<"$entry")" = 200 ]
    [ "$(db "SELECT route, sandbox_id, status FROM requests WHERE request_id = '$rid'")" = "POST /v1/call|$sid|200" ]
}

@test "only POST works on /v1/call" {
    api GET /v1/call
    expect_error 405 "method not allowed"
}

@test "a tool sandbox that does not come up in time: timed out waiting for it to become ready" {
    rm -rf /var/lib/machines/sbx-test-slow
    cp -a /var/lib/machines/demo-agent /var/lib/machines/sbx-test-slow
    # python3 is a link to the image's python3.N: the stand-in runs that one, 30 s late.
    real=$(readlink /var/lib/machines/sbx-test-slow/usr/bin/python3)
    [[ $real == python3.* ]]
    rm -f /var/lib/machines/sbx-test-slow/usr/bin/python3
    printf '#!/bin/sh\nsleep 30\nexec /usr/bin/%s "$@"\n' "$real" >/var/lib/machines/sbx-test-slow/usr/bin/python3
    chmod 0755 /var/lib/machines/sbx-test-slow/usr/bin/python3
    as_tool_image sbx-test-slow
    with_settings zz-call-test SANDBOXD_CALL_READY_TIMEOUT_S=2
    SECONDS=0
    call '{"image":"sbx-test-slow","function":"get_weather","args":{"city":"Oslo"}}'
    rm -rf /var/lib/machines/sbx-test-slow
    expect_error 503 "timed out waiting for the tool sandbox to become ready"
    [ "$SECONDS" -lt 15 ]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'tool-*')" ]
}

@test "attack: the runtime image is in the store, with subprocess, but no call reaches it" {
    # Control: the tree is there, with an interpreter and the module the attack calls.
    [ -L /var/lib/machines/sandboxd-runtime ]
    [ -x /var/lib/machines/sandboxd-runtime/usr/bin/python3 ]
    ls /var/lib/machines/sandboxd-runtime/usr/lib/python3*/subprocess.py
    call '{"image":"sandboxd-runtime","module":"subprocess","function":"getoutput","args":{"cmd":"id"}}'
    expect_error 503 "$NOT_FOUND"
    expect_no_sandbox
    # Its tree by its own name, a hidden one: no image name at all.
    tree=$(basename "$(readlink /var/lib/machines/sandboxd-runtime)")
    [ -d "/var/lib/machines/$tree" ]
    call "{\"image\":\"$tree\",\"module\":\"subprocess\",\"function\":\"getoutput\",\"args\":{\"cmd\":\"id\"}}"
    expect_error 503 "could not start a sandbox for this tool call: invalid image reference"
    expect_no_sandbox
}

@test "attack: another tree of the store, with python3 and an agent in /app, is not callable" {
    cp -a /var/lib/machines/demo-agent /var/lib/machines/sbx-test-foreign
    rm -f /var/lib/machines/sbx-test-foreign/.sandboxd-tool.json
    # Control: the same tree made a tool image is callable.
    as_tool_image sbx-test-foreign
    call '{"image":"sbx-test-foreign","function":"get_weather","args":{"city":"Oslo"}}'
    expect_status 200
    [ "$(jq -c .result <<<"$body")" = '{"temp_c":-2}' ]
    # No manifest anywhere: as unknown, and no sandbox asked for.
    rm -f /var/lib/machines/sbx-test-foreign/.sandboxd-tool.json "$TOOL_STATE/sbx-test-foreign.json"
    call '{"image":"sbx-test-foreign","function":"get_weather","args":{"city":"Oslo"}}'
    expect_error 503 "${NOT_FOUND//sandboxd-runtime/sbx-test-foreign}"
    expect_no_sandbox
    # A workers' copy with no manifest in the image (forged, or left from a removed image): the
    # broker refuses it before starting a sandbox, with the same answer.
    tool_manifest sbx-test-foreign >"$TOOL_STATE/sbx-test-foreign.json"
    call '{"image":"sbx-test-foreign","function":"get_weather","args":{"city":"Oslo"}}'
    expect_error 503 "${NOT_FOUND//sandboxd-runtime/sbx-test-foreign}"
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'tool-*')" ]
}

@test "attack: the standard library of a tool image is not callable" {
    # Control: the module is in the image, and the image's own function answers.
    ls /var/lib/machines/demo-agent/usr/lib/python3*/subprocess.py
    call '{"image":"demo-agent","function":"add","args":{"a":1,"b":2}}'
    expect_status 200
    for m in subprocess os builtins sys; do
        call "{\"image\":\"demo-agent\",\"module\":\"$m\",\"function\":\"getoutput\",\"args\":{\"cmd\":\"id\"}}"
        expect_error 502 "tool execution failed: cannot import module '$m': ModuleNotFoundError: No module named '$m'"
        expect_no_sandbox
    done
}

@test "attack: a function the image does not declare is not callable" {
    # Control: it is a function of the module in the image's /app.
    grep '^def undeclared' /var/lib/machines/demo-agent/app/agent.py
    call '{"image":"demo-agent","function":"undeclared"}'
    expect_error 502 "tool execution failed: module 'agent' has no function 'undeclared'"
    expect_no_sandbox
    call '{"image":"demo-agent","function":"__import__"}'
    expect_error 502 "tool execution failed: module 'agent' has no function '__import__'"
}

@test "attack: the tool runner holds to the image's own manifest when the workers' copy says more" {
    cp -a /var/lib/machines/demo-agent /var/lib/machines/sbx-test-stale
    # The workers' copy declares more than the image does; the image's is demo-agent's, renamed.
    sed 's/"image": "demo-agent"/"image": "sbx-test-stale"/' /var/lib/machines/demo-agent/.sandboxd-tool.json \
        >/var/lib/machines/sbx-test-stale/.sandboxd-tool.json
    mkdir -p "$TOOL_STATE"
    tool_manifest sbx-test-stale agent get_weather undeclared >"$TOOL_STATE/sbx-test-stale.json"
    # Control: a function both declare is called.
    call '{"image":"sbx-test-stale","function":"get_weather","args":{"city":"Cairo"}}'
    expect_status 200
    call '{"image":"sbx-test-stale","function":"undeclared"}'
    expect_error 502 "tool execution failed: module 'agent' has no function 'undeclared'"
    # The worker let it through: a sandbox was started, and the runner inside refused.
    expect_sandbox
    # A module the workers' copy names with a path that is a link out of /app.
    stdlib=$(basename "$(readlink -f /var/lib/machines/sbx-test-stale/usr/bin/python3)")
    ln -s "/usr/lib/$stdlib/subprocess.py" /var/lib/machines/sbx-test-stale/app/evil.py
    [ -f "/var/lib/machines/sbx-test-stale/usr/lib/$stdlib/subprocess.py" ]
    tool_manifest sbx-test-stale evil getoutput >"$TOOL_STATE/sbx-test-stale.json"
    tool_manifest sbx-test-stale evil getoutput >/var/lib/machines/sbx-test-stale/.sandboxd-tool.json
    call '{"image":"sbx-test-stale","module":"evil","function":"getoutput","args":{"cmd":"id"}}'
    expect_error 502 "tool execution failed: cannot import module 'evil': ModuleNotFoundError: No module named 'evil'"
    expect_sandbox
}

@test "sandboxd-image build: the functions of __all__ or of --functions, nothing else, and remove forgets the image" {
    mkdir -p "$BATS_TEST_TMPDIR/src/pkg"
    printf '__all__ = ["ping"]\ndef ping():\n    return "pong"\ndef hidden():\n    return "hidden"\n' >"$BATS_TEST_TMPDIR/src/tools.py"
    printf 'def deep(x):\n    return x * 2\n' >"$BATS_TEST_TMPDIR/src/pkg/mod.py"
    # A link to the standard library's subprocess, of the images' python3.N.
    ln -s "/usr/lib/$(basename "$(readlink -f /var/lib/machines/sandboxd-runtime/usr/bin/python3)")/subprocess.py" "$BATS_TEST_TMPDIR/src/sub.py"
    "$SANDBOXD_IMAGE" build sbx-test-built "$BATS_TEST_TMPDIR/src"
    [ "$(jq -c .modules /var/lib/machines/sbx-test-built/.sandboxd-tool.json)" = '{"tools":{"functions":["ping"],"path":"tools.py"}}' ]
    cmp /var/lib/machines/sbx-test-built/.sandboxd-tool.json "$TOOL_STATE/sbx-test-built.json"
    "$SANDBOXD_IMAGE" list | grep -x sbx-test-built
    call '{"image":"sbx-test-built","module":"tools","function":"ping"}'
    expect_status 200
    [ "$(field .result)" = pong ]
    call '{"image":"sbx-test-built","module":"tools","function":"hidden"}'
    expect_error 502 "tool execution failed: module 'tools' has no function 'hidden'"
    call '{"image":"sbx-test-built","module":"sub","function":"getoutput","args":{"cmd":"id"}}'
    expect_error 502 "tool execution failed: cannot import module 'sub': ModuleNotFoundError: No module named 'sub'"

    # --functions: exactly those; one no module defines fails the build.
    "$SANDBOXD_IMAGE" build --functions pkg.mod.deep,tools.hidden sbx-test-built "$BATS_TEST_TMPDIR/src"
    call '{"image":"sbx-test-built","module":"pkg.mod","function":"deep","args":{"x":21}}'
    expect_status 200
    [ "$(field .result)" = 42 ]
    call '{"image":"sbx-test-built","module":"tools","function":"ping"}'
    expect_error 502 "tool execution failed: module 'tools' has no function 'ping'"
    run "$SANDBOXD_IMAGE" build --functions sub.getoutput sbx-test-built2 "$BATS_TEST_TMPDIR/src"
    [ "$status" = 1 ]
    [ ! -e /var/lib/machines/sbx-test-built2 ]
    run "$SANDBOXD_IMAGE" build sandboxd-runtime "$BATS_TEST_TMPDIR/src"
    [ "$status" = 1 ]

    "$SANDBOXD_IMAGE" remove sbx-test-built
    [ ! -e "$TOOL_STATE/sbx-test-built.json" ]
    call '{"image":"sbx-test-built","module":"pkg.mod","function":"deep","args":{"x":21}}'
    expect_error 503 "${NOT_FOUND//sandboxd-runtime/sbx-test-built}"
}
