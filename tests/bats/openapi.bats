#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# GET /v1/openapi.json, and the check every suite makes of every response it receives against the
# description (helpers.bash: openapi_check): it is proved to catch a response that drifted from it,
# and it passes the streamed answers of runs (text/event-stream) the service sends.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

DOCUMENT="$BATS_TEST_DIRNAME/../../docs/openapi.json"

setup_file() {
    require_stack
}

# check STATUS METHOD PATH JSON: the check's verdict on that response, in $status and $output.
check() {
    printf '%s' "$4" >"$BATS_TEST_TMPDIR/body"
    run "$OPENAPI_CHECK" "$2" "$3" "$1" "$BATS_TEST_TMPDIR/body"
}

# check_stream STREAM [PATH]: the check's verdict on a 200 of POST PATH (/v1/execute) whose body,
# text/event-stream, is STREAM, in $status and $output.
check_stream() {
    printf '%s' "$1" >"$BATS_TEST_TMPDIR/stream"
    printf 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Request-Id: %s\r\n\r\n' \
        0123456789abcdef0123456789abcdef >"$BATS_TEST_TMPDIR/stream-hdr"
    run "$OPENAPI_CHECK" --headers "$BATS_TEST_TMPDIR/stream-hdr" POST "${2:-/v1/execute}" 200 "$BATS_TEST_TMPDIR/stream"
}

# stream POST_PATH JSON: the request, asking for an event stream -> $code, $ctype, $rid, the body in
# $BATS_TEST_TMPDIR/stream, the headers in $BATS_TEST_TMPDIR/hdr; fails when the response is not as
# the description has it.
stream() {
    code=$(curl -s -N -D "$BATS_TEST_TMPDIR/hdr" -o "$BATS_TEST_TMPDIR/stream" -w '%{http_code}' -X POST "$SANDBOXD_URL$1" \
        -H 'Accept: text/event-stream' -H 'content-type: application/json' --data-binary "$2")
    cat "$BATS_TEST_TMPDIR/stream"
    read_headers "$BATS_TEST_TMPDIR/hdr"
    openapi_check_file --headers "$BATS_TEST_TMPDIR/hdr" POST "$1" "$code" "$BATS_TEST_TMPDIR/stream"
}

# The data of the stream's last event: its result.
stream_result() {
    grep '^data: ' "$BATS_TEST_TMPDIR/stream" | tail -n 1 | cut -c7-
}

teardown() {
    if [ -n "${sid:-}" ]; then
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$sid" || true
    fi
}

@test "GET /v1/openapi.json answers the repository's description, as JSON" {
    api GET /v1/openapi.json
    expect_status 200
    [ "$ctype" = application/json ]
    expect_request_id
    [ "$(jq -S . <<<"$body")" = "$(jq -S . "$DOCUMENT")" ]
    [ "$(field .openapi)" = 3.1.0 ]
}

@test "GET only: another method on /v1/openapi.json is 405 with Allow" {
    hdr="$BATS_TEST_TMPDIR/hdr"
    curl -s -D "$hdr" -o "$BATS_TEST_TMPDIR/body" -X POST "$SANDBOXD_URL/v1/openapi.json"
    grep -qi '^allow: GET' "$hdr"
    api POST /v1/openapi.json '{}'
    expect_error 405 "method not allowed"
}

@test "every route of the description answers as it describes (positive control of the paths)" {
    # What the description lists is what the service routes: a listed method is never 404 or 405.
    api GET /v1/pool
    expect_status 200
    api GET /v1/runtimes
    expect_status 200
    api POST /v1/execute '{}'
    expect_error 400 "code is required and must be a string"
    api POST /execute '{}'
    expect_error 400 "code is required and must be a string"
    api POST /v1/call '{}'
    expect_error 400 "image and function are required"
    # The sessions' paths, with an id that is no session's: each answers as its description says.
    for p in /v1/sessions/session-aaaaaaaaaaaa /v1/sessions/session-aaaaaaaaaaaa/files /v1/sessions/session-aaaaaaaaaaaa/files/x; do
        api GET "$p"
        expect_error 404 "session not found"
    done
    for p in run exec pause resume; do
        api POST "/v1/sessions/session-aaaaaaaaaaaa/$p" '{"language":"python","code":"1","command":"true"}'
        expect_error 404 "session not found"
    done
    for p in run exec; do
        api POST "/session/session-aaaaaaaaaaaa/$p" '{"language":"python","code":"1","command":"true"}'
        expect_error 404 "session not found"
    done
    api GET /v1/sessions
    expect_status 200
    # MCP: a message without a session is refused in the transport's JSON-RPC shape.
    api POST /mcp '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 400
    hdr="$BATS_TEST_TMPDIR/hdr"
    code=$(curl -s -D "$hdr" -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' "$SANDBOXD_URL/metrics")
    [ "$code" = 200 ]
    openapi_check_file --headers "$hdr" GET /metrics 200 "$BATS_TEST_TMPDIR/body"
    [ "$(jq -r '.paths | keys | sort | join(" ")' "$DOCUMENT")" = "/execute /mcp /metrics /session/{session_id}/exec /session/{session_id}/run /v1/call /v1/execute \
/v1/openapi.json /v1/pool /v1/runtimes /v1/sessions /v1/sessions/{session_id} /v1/sessions/{session_id}/exec \
/v1/sessions/{session_id}/files /v1/sessions/{session_id}/files/{path} /v1/sessions/{session_id}/pause \
/v1/sessions/{session_id}/resume /v1/sessions/{session_id}/run" ]
}

@test "the check passes a response as the description has it, and fails one that drifted from it" {
    ok='{"sandbox_id":"sandbox-abcdefgh2345","stdout":"4\n","stderr":"","exit_code":0,"duration_ms":31,"usage":{"cpu_ms":9,"memory_peak_bytes":1863680}}'
    check 200 POST /v1/execute "$ok"
    [ "$status" -eq 0 ]
    # A field the description does not have, a field missing, a wrong type, a malformed id.
    for bad in "$(jq -c '. + {extra: 1}' <<<"$ok")" "$(jq -c 'del(.duration_ms)' <<<"$ok")" \
        "$(jq -c '.exit_code = "0"' <<<"$ok")" "$(jq -c '.sandbox_id = "sandbox-ABCDEFGH2345"' <<<"$ok")" \
        "$(jq -c '.stdout_truncated = false' <<<"$ok")" "$(jq -c 'del(.usage)' <<<"$ok")" "$(jq -c '.usage.cpu_ms = -1' <<<"$ok")"; do
        check 200 POST /v1/execute "$bad"
        [ "$status" -eq 1 ]
        [[ $output == "openapi-check: POST /v1/execute 200: "* ]]
    done
    # An error text the description does not list, a status it does not list, a body not JSON.
    check 400 POST /v1/execute '{"error":"timeout_s must be between 1 and 60"}'
    [ "$status" -eq 0 ]
    check 400 POST /v1/execute '{"error":"timeout_s must be between 1 and 61"}'
    [ "$status" -eq 1 ]
    check 418 POST /v1/execute '{"error":"I am a teapot"}'
    [ "$status" -eq 1 ]
    [[ $output == *"lists no response 418"* ]]
    check 200 GET /v1/pool 'warm=3'
    [ "$status" -eq 1 ]
    [[ $output == *"not JSON"* ]]
    # A path the description does not have is 404, and a method its path does not take is 405.
    check 404 GET /v1/nope '{"error":"not found"}'
    [ "$status" -eq 0 ]
    check 200 GET /v1/nope '{"error":"not found"}'
    [ "$status" -eq 1 ]
    check 405 GET /v1/execute '{"error":"method not allowed"}'
    [ "$status" -eq 0 ]
    check 200 GET /v1/execute '{"error":"method not allowed"}'
    [ "$status" -eq 1 ]
}

@test "the check fails a response without the headers the description requires, or of another type" {
    pool='{"warm":3,"target":3,"in_flight":0,"created_total":17}'
    printf '%s' "$pool" >"$BATS_TEST_TMPDIR/body"
    printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: %s\r\n\r\n' \
        0123456789abcdef0123456789abcdef >"$BATS_TEST_TMPDIR/hdr"
    run "$OPENAPI_CHECK" --headers "$BATS_TEST_TMPDIR/hdr" GET /v1/pool 200 "$BATS_TEST_TMPDIR/body"
    [ "$status" -eq 0 ]
    grep -v '^X-Request-Id' "$BATS_TEST_TMPDIR/hdr" >"$BATS_TEST_TMPDIR/no-rid"
    run "$OPENAPI_CHECK" --headers "$BATS_TEST_TMPDIR/no-rid" GET /v1/pool 200 "$BATS_TEST_TMPDIR/body"
    [ "$status" -eq 1 ]
    [[ $output == *"no X-Request-Id header"* ]]
    sed 's#application/json#text/html#' "$BATS_TEST_TMPDIR/hdr" >"$BATS_TEST_TMPDIR/html"
    run "$OPENAPI_CHECK" --headers "$BATS_TEST_TMPDIR/html" GET /v1/pool 200 "$BATS_TEST_TMPDIR/body"
    [ "$status" -eq 1 ]
    [[ $output == *"content-type text/html"* ]]
}

@test "the check reads an event stream: each event one the description lists, of its schema, the result last" {
    result='{"sandbox_id":"sandbox-abcdefgh2345","stdout":"4\n","stderr":"","exit_code":0,"duration_ms":31,"usage":{"cpu_ms":9,"memory_peak_bytes":1863680}}'
    out=$'event: stdout\ndata: {"data":"4\\n","base64":false}\n\n'
    last=$'event: result\ndata: '"$result"$'\n\n'
    # As the service sends it: comments, output as text and as base64, the result, a comment after.
    check_stream $': the code runs\n\n'"$out"$'event: stderr\ndata: {"data":"/w==","base64":true}\n\n'"$last"$': the code runs\n\n'
    echo "$output"
    [ "$status" -eq 0 ]
    # As a stream may be written too: CRLF line ends, a data field over two lines; an error as the result.
    check_stream $'event: result\r\ndata: {"error":\r\ndata: "sandbox execution failed: killed"}\r\n\r\n'
    [ "$status" -eq 0 ]
    # Each operation's result is its own body: /v1/execute's is not a session run's.
    check_stream "$last" /v1/sessions/session-aaaaaaaaaaaa/exec
    [ "$status" -eq 1 ]
    [[ $output == *"POST /v1/sessions/session-aaaaaaaaaaaa/exec 200: event 1 ('result', line 3): "* ]]
    # A name the description does not list (or none, "message"), a chunk without base64, base64 that is not.
    check_stream $'event: output\ndata: {"data":"4\\n","base64":false}\n\n'"$last"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('output', line 3): not an event the description lists (stdout, stderr, result)"* ]]
    check_stream $'data: {"data":"4\\n","base64":false}\n\n'"$last"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('message', line 2): not an event the description lists"* ]]
    check_stream $'event: stdout\ndata: {"data":"4\\n"}\n\n'"$last"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('stdout', line 3): its data: 'base64' is a required property"* ]]
    check_stream $'event: stdout\ndata: {"data":"4 2","base64":true}\n\n'"$last"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('stdout', line 3): ['data']: '4 2' does not match"* ]]
    # No result, a result cut before its blank line, an event after the result, a field after it.
    check_stream "$out"
    [ "$status" -eq 1 ]
    [[ $output == *"the event stream has no result event (1 events)"* ]]
    check_stream "$out${last%$'\n'}"
    [ "$status" -eq 1 ]
    [[ $output == *"the event stream has no result event (1 events and ends in the middle of one)"* ]]
    check_stream "$last$out"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('result', line 3): the result event is not the last: 'stdout' follows it"* ]]
    check_stream "$last"$'id: 7\n'
    [ "$status" -eq 1 ]
    [[ $output == *"after the result event, what is not a comment: 'id: 7'"* ]]
    # A result that is neither the body nor an error, and data that is not JSON.
    check_stream "$out"$'event: result\ndata: {"stdout":"4\\n"}\n\n'
    [ "$status" -eq 1 ]
    [[ $output == *"event 2 ('result', line 6): "* ]]
    check_stream $'event: stdout\ndata: four\n\n'"$last"
    [ "$status" -eq 1 ]
    [[ $output == *"event 1 ('stdout', line 3): its data is not JSON"* ]]
    # The schemas are the description's: one whose chunks want another field fails the same stream.
    jq '.components.schemas.OutputChunk.required += ["fd"]' "$DOCUMENT" >"$BATS_TEST_TMPDIR/drifted.json"
    SANDBOXD_OPENAPI="$BATS_TEST_TMPDIR/drifted.json" check_stream "$out$last"
    [ "$status" -eq 1 ]
    [[ $output == *"'fd' is a required property"* ]]
}

@test "a streamed run answers as the description has it; an error before the code starts stays JSON" {
    stream /v1/execute '{"code":"import sys, time\nprint(1, flush=True)\ntime.sleep(0.3)\nprint(2, file=sys.stderr)"}'
    expect_status 200
    [ "$ctype" = text/event-stream ]
    expect_request_id
    grep -qx 'event: stdout' "$BATS_TEST_TMPDIR/stream"
    grep -qx 'event: stderr' "$BATS_TEST_TMPDIR/stream"
    [ "$(stream_result | jq -c '[.stdout, .stderr, .exit_code]')" = '["1\n","2\n",0]' ]
    # X-Accel-Buffering is the worker's word to nginx, which keeps it.
    run grep -ci '^x-accel-buffering' "$BATS_TEST_TMPDIR/hdr"
    [ "$output" = 0 ]
    # Refused before the code starts: the JSON error and its status, as without the header.
    stream /v1/execute '{}'
    body=$(cat "$BATS_TEST_TMPDIR/stream")
    expect_error 400 "code is required and must be a string"
}

@test "a session's streamed exec and run, under /v1/sessions and /session, answer as the description has it" {
    api POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    # Bytes that are not UTF-8 come as base64.
    stream "/v1/sessions/$sid/exec" "$(jq -cn --arg c "printf 'a\\377\\n'" '{command: $c}')"
    expect_status 200
    [ "$ctype" = text/event-stream ]
    grep -qx 'data: {"data":"Yf8K","base64":true}' "$BATS_TEST_TMPDIR/stream"
    [ "$(stream_result | jq -r .status)" = success ]
    stream "/session/$sid/run" '{"language":"python","code":"print(6 * 7)"}'
    expect_status 200
    grep -qx 'data: {"data":"42\\n","base64":false}' "$BATS_TEST_TMPDIR/stream"
    [ "$(stream_result | jq -c --arg sid "$sid" '[.session_id == $sid, .result.stdout]')" = '[true,"42\n"]' ]
    # No such session: the JSON 404, before any stream.
    stream /v1/sessions/session-aaaaaaaaaaaa/run '{"language":"python","code":"1"}'
    body=$(cat "$BATS_TEST_TMPDIR/stream")
    expect_error 404 "session not found"
}

@test "api checks what it receives: a response the description does not match fails the request" {
    # The same request passes against the real description...
    api GET /v1/pool
    expect_status 200
    # ... and fails against one that wants a field the service does not send.
    jq '.components.schemas.Pool.required += ["idle"]' "$DOCUMENT" >"$BATS_TEST_TMPDIR/drifted.json"
    SANDBOXD_OPENAPI="$BATS_TEST_TMPDIR/drifted.json" run api GET /v1/pool
    [ "$status" -eq 1 ]
    [[ $output == *"'idle' is a required property"* ]]
}

@test "a client generated from the description runs code, reads the pool and reads a streamed run through the service" {
    # make openapi-client generated it (openapi-typescript, openapi-fetch) and compiled it against
    # the description's types (tests/openapi-client/client.ts).
    client="$BATS_TEST_DIRNAME/../../build/openapi-client/out/client.js"
    [ -f "$client" ] || { echo "no generated client: run make openapi-client" >&2; false; }
    run node "$client" "$SANDBOXD_URL"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ ${lines[0]} =~ ^stdout=\"4294967296\\n\"\ exit_code=0\ cpu_ms=[0-9]+\ memory_peak_bytes=[0-9]+$ ]]
    [[ ${lines[1]} =~ ^warm=[0-9]+\ target=[0-9]+$ ]]
    # The streamed run: stdout events as the code wrote, stderr, and the result's typed body last.
    [[ ${lines[2]} =~ ^streamed\ stdout_events=[1-9][0-9]*\ stdout=\"0\\n1\\n2\\n\"\ stderr=\"e\\n\"\ result\.exit_code=0$ ]]
    [ "${#lines[@]}" -eq 3 ]
}
