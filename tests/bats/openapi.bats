#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# GET /v1/openapi.json, and the check every suite makes of every response it receives against the
# description (helpers.bash: openapi_check): it is proved to catch a response that drifted from it.

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

@test "a client generated from the description runs code and reads the pool through the service" {
    # make openapi-client generated it (openapi-typescript, openapi-fetch) and compiled it against
    # the description's types (tests/openapi-client/client.ts).
    client="$BATS_TEST_DIRNAME/../../build/openapi-client/out/client.js"
    [ -f "$client" ] || { echo "no generated client: run make openapi-client" >&2; false; }
    run node "$client" "$SANDBOXD_URL"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ ${lines[0]} =~ ^stdout=\"4294967296\\n\"\ exit_code=0\ cpu_ms=[0-9]+\ memory_peak_bytes=[0-9]+$ ]]
    [[ ${lines[1]} =~ ^warm=[0-9]+\ target=[0-9]+$ ]]
}
