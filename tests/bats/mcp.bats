#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# /mcp: the Model Context Protocol over Streamable HTTP, at the level of curl: the session's life
# (initialize, Mcp-Session-Id, DELETE), the transport's refusals (400, 403, 404, 405), the nine
# tools as their REST routes serve them, progress on an event stream, cancellation, and sessions
# that belong to the API key.
# jq programs are in single quotes: their $ are jq's.
# shellcheck disable=SC2016

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"
# shellcheck source=tests/bats/key-helpers.bash
source "$BATS_TEST_DIRNAME/key-helpers.bash"

setup_file() {
    require_stack
    export KEYS_MADE="$BATS_FILE_TMPDIR/keys"
    : >"$KEYS_MADE"
    KEY_PREFIX="bats-mcp-$(date +%s)-$$"
    export KEY_PREFIX
}

setup() {
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
    token=
}

teardown() {
    local tok id
    while read -r tok id; do
        if [ "$tok" = - ]; then
            curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
        else
            curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $tok" "$SANDBOXD_URL/v1/sessions/$id" || true
        fi
    done <"$created"
    expect_no_leftovers
}

teardown_file() {
    keys_off
}

# The session's tool call in flight that has its machine, if any.
call_with_machine() {
    db "SELECT 1 FROM mcp_calls c JOIN requests q USING (request_id) WHERE c.mcp_session_id = '$msid' AND q.machine_id IS NOT NULL"
}

# slow_call ACCEPT BODY: BODY posted to $msid's session in the background with that Accept header
# (pid in $slow; status and content type in slow.status, body in slow.body, under
# BATS_TEST_TMPDIR), then waits until the call has its machine: there is a run to cancel. Its own
# curl, not post's, whose header file the cancellation's post uses meanwhile.
slow_call() {
    curl -s -X POST "$SANDBOXD_URL/mcp" -H 'content-type: application/json' -H "accept: $1" \
        -H "mcp-session-id: $msid" -o "$BATS_TEST_TMPDIR/slow.body" -w '%{http_code} %{content_type}' >"$BATS_TEST_TMPDIR/slow.status" \
        --data-binary "$2" &
    slow=$!
    for _ in $(seq 100); do
        [ -n "$(call_with_machine)" ] && break
        sleep 0.1
    done
    [ -n "$(call_with_machine)" ]
}

# post SESSION BODY [CURL ARGS...]: one message to /mcp, as an MCP client sends it (with $token's
# key, if set) -> $code, $body, $rid, $ctype; the headers in $BATS_TEST_TMPDIR/hdr.
post() {
    post_accepting 'application/json, text/event-stream' "$@"
}

# post_accepting ACCEPT SESSION BODY [CURL ARGS...]: post, with that Accept header.
post_accepting() {
    local sid=$2 data=$3 hdr="$BATS_TEST_TMPDIR/hdr"
    local -a h=(-H 'content-type: application/json' -H "accept: $1")
    shift 3
    [ -z "$sid" ] || h+=(-H "mcp-session-id: $sid")
    [ -z "$token" ] || h+=(-H "Authorization: Bearer $token")
    body=$(curl -s -D "$hdr" -X POST "$SANDBOXD_URL/mcp" "${h[@]}" "$@" --data-binary "$data")
    read_headers "$hdr"
}

# as_key TOKEN: the key later requests send ("": none).
as_key() {
    token=$1
}

# get SESSION: GET /mcp as a client asking for the server's own stream would.
get() {
    body=$(curl -s -D "$BATS_TEST_TMPDIR/hdr" -H "mcp-session-id: $1" -H 'accept: text/event-stream' "$SANDBOXD_URL/mcp")
    read_headers "$BATS_TEST_TMPDIR/hdr"
}

# initialize [VERSION]: a new MCP session, its id in $msid, initialize's answer in $body and $rid.
initialize() {
    post "" "$(jq -cn --arg v "${1:-2025-11-25}" '{jsonrpc: "2.0", id: 0, method: "initialize",
        params: {protocolVersion: $v, capabilities: {}, clientInfo: {name: "bats", version: "1"}}}')"
    expect_status 200
    msid=$(header mcp-session-id)
    [[ $msid =~ ^[0-9a-f]{32}$ ]] || { echo "no Mcp-Session-Id: '$msid'" >&2; return 1; }
    local answer=$body answer_rid=$rid
    post "$msid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    expect_status 202
    # What initialize answered is the caller's to check.
    body=$answer
    rid=$answer_rid
}

# call TOOL ARGUMENTS [ID]: tools/call in session $msid -> $body, the JSON-RPC answer.
call() {
    post "$msid" "$(jq -cn --arg t "$1" --argjson a "$2" --argjson id "${3:-1}" \
        '{jsonrpc: "2.0", id: $id, method: "tools/call", params: {name: $t, arguments: $a}}')"
    expect_status 200
}

# The JSON-RPC error of the last answer: "CODE MESSAGE".
rpc_error() {
    jq -r '"\(.error.code) \(.error.message)"' <<<"$body"
}

@test "initialize: a session id, the version asked for, or the newest served for one not served" {
    initialize
    [ "$(field .result.protocolVersion)" = 2025-11-25 ]
    [ "$(field .result.serverInfo.name)" = sandboxd ]
    [ "$(field .result.capabilities.tools.listChanged)" = false ]
    expect_request_id
    [ "$(db "SELECT version || ' ' || (ended_at IS NULL) FROM mcp_sessions WHERE mcp_session_id = '$msid'")" = "2025-11-25 1" ]
    initialize 2025-03-26
    [ "$(field .result.protocolVersion)" = 2025-03-26 ]
    initialize 2025-06-18
    [ "$(field .result.protocolVersion)" = 2025-06-18 ]
    initialize 2099-01-01
    [ "$(field .result.protocolVersion)" = 2025-11-25 ]
    [ "$(jq -r .MCP_METHOD <<<"$(journal_entry "$rid")")" = initialize ]
}

@test "a request without Mcp-Session-Id: 400; with one: answered" {
    initialize
    post "" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 400
    [ "$(rpc_error)" = "-32000 Bad Request: Mcp-Session-Id header is required" ]
    [ "$(field .id)" = null ]
    expect_request_id
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 200
    [ "$(jq -c .result <<<"$body")" = "{}" ]
    [ "$(field .id)" = 1 ]
}

@test "DELETE ends the session: then 404 for it; an unknown id is 404 too" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 200
    code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "mcp-session-id: $msid" "$SANDBOXD_URL/mcp")
    [ "$code" = 204 ]
    post "$msid" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
    expect_status 404
    [ "$(rpc_error)" = "-32001 Session not found" ]
    code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "mcp-session-id: $msid" "$SANDBOXD_URL/mcp")
    [ "$code" = 404 ]
    [ "$(db "SELECT ended_at IS NOT NULL FROM mcp_sessions WHERE mcp_session_id = '$msid'")" = 1 ]
    post 00000000000000000000000000000000 '{"jsonrpc":"2.0","id":3,"method":"ping"}'
    expect_status 404
    code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$SANDBOXD_URL/mcp")
    [ "$code" = 400 ]
}

@test "an Origin that is not loopback's: 403 with a JSON-RPC error; loopback's: served" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Origin: http://localhost:6274'
    expect_status 200
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Origin: http://[::1]:3000'
    expect_status 200
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'Origin: http://evil.example'
    expect_status 403
    [ "$ctype" = application/json ]
    [ "$(field .error.code)" = -32000 ]
    [[ "$(field .error.message)" == *"Origin 'http://evil.example' is not allowed"* ]]
    post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' -H 'Origin: http://localhost.evil.example'
    expect_status 403
    [ -z "$(header mcp-session-id)" ]
}

@test "GET /mcp: 405, no stream of the server's own; PUT too" {
    initialize
    get "$msid"
    expect_status 405
    [ "$(header allow)" = "POST, DELETE" ]
    [ "$(field .error.code)" = -32000 ]
    code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$SANDBOXD_URL/mcp")
    [ "$code" = 405 ]
}

@test "MCP-Protocol-Version: one not served is 400; a served one, or none, is answered" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'MCP-Protocol-Version: 1999-01-01'
    expect_status 400
    [[ "$(field .error.message)" == *"Unsupported protocol version '1999-01-01'"* ]]
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}' -H 'MCP-Protocol-Version: 2025-11-25'
    expect_status 200
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 200
}

@test "notifications and responses: 202 and no body; a batch, a bad body, an unknown method: errors" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}'
    expect_status 202
    [ -z "$body" ]
    post "$msid" '{"jsonrpc":"2.0","id":"s1","result":{}}'
    expect_status 202
    [ -z "$body" ]
    post "$msid" '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
    expect_status 400
    [ "$(field .error.code)" = -32600 ]
    [[ "$(field .error.message)" == *batches* ]]
    post "$msid" '{"jsonrpc":"2.0","id":1,'
    expect_status 400
    [ "$(field .error.code)" = -32700 ]
    post "$msid" '{"jsonrpc":"1.0","id":9,"method":"ping"}'
    expect_status 400
    [ "$(rpc_error)" = '-32600 jsonrpc must be "2.0"' ]
    [ "$(field .id)" = 9 ]
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'
    expect_status 200
    [ "$(rpc_error)" = "-32601 Method not found: 'resources/list'" ]
}

@test "a batch: answered in one array at 2025-03-26, refused at the versions that dropped batches" {
    initialize 2025-06-18
    post "$msid" '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
    expect_status 400
    [ "$(rpc_error)" = "-32600 Invalid Request: JSON-RPC batches are not part of MCP 2025-06-18 (only of 2025-03-26); send one message per POST" ]
    initialize 2025-03-26
    post "$msid" '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"execute","arguments":{"code":"print(5)"}}},
        {"jsonrpc":"2.0","id":3,"method":"nope"},{"jsonrpc":"1.0","id":4,"method":"ping"},
        {"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}]'
    expect_status 200
    [ "$ctype" = application/json ]
    [ "$(jq -c '[.[] | .id]' <<<"$body")" = '[1,"c",3,4,5]' ]
    [ "$(jq -r '.[1].result.structuredContent.stdout' <<<"$body")" = 5 ]
    [ "$(jq -c '[.[2:][] | .error.code]' <<<"$body")" = '[-32601,-32600,-32600]' ]
    # One tool call a batch: the request's row is what the key's quotas count. The first runs (the
    # positive control), the second is refused, not run uncounted.
    post "$msid" '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"print(1)"}}},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":{"code":"print(2)"}}}]'
    expect_status 200
    [ "$(jq -r '.[0].result.structuredContent.stdout' <<<"$body")" = 1 ]
    [ "$(jq -r '.[1] | "\(.id) \(.error.code) \(.error.message)"' <<<"$body")" = \
        "2 -32600 Invalid Request: one tools/call per batch (each is counted against the key's quotas as one request); send the others on their own" ]
    # Its machine goes back once the answer is sent.
    for _ in $(seq 50); do
        [ "$(db "SELECT count(*) FROM pool WHERE state = 'claimed'")" = 0 ] && break
        sleep 0.1
    done
    [ "$(db "SELECT count(*) FROM pool WHERE state = 'claimed'")" = 0 ]
    post "$msid" '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"x","result":{}}]'
    expect_status 202
    [ -z "$body" ]
    post "$msid" '[]'
    expect_status 400
    [ "$(field .error.code)" = -32600 ]
}

# batch_of N METHOD: a file with a batch of N requests of METHOD (ids 1..N); prints its path.
batch_of() {
    local f="$BATS_TEST_TMPDIR/batch-$1.json"
    jq -cn --argjson n "$1" --arg m "$2" '[range(1; $n + 1) | {jsonrpc: "2.0", id: ., method: $m}]' >"$f"
    echo "$f"
}

# The worker processes' resident memory, in KiB, summed.
workers_rss_kib() {
    local pid sum=0
    for pid in $(pgrep -x sandboxd-worker || true); do
        sum=$((sum + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)))
    done
    echo "$sum"
}

@test "a batch holds at most 64 messages: a longer one is refused before it is parsed, and grows no worker" {
    initialize 2025-03-26
    # Positive control: 64 tools/list, each answered.
    post "$msid" "@$(batch_of 64 tools/list)"
    expect_status 200
    expect_request_id
    [ "$(jq length <<<"$body")" = 64 ]
    [ "$(jq '[.[] | .result.tools | length] | unique' -c <<<"$body")" = '[9]' ]
    post "$msid" "@$(batch_of 65 ping)"
    expect_status 400
    [ "$(rpc_error)" = "-32600 Invalid Request: a batch holds at most 64 messages; send the others in another POST" ]
    expect_request_id
    journal_entry "$rid" >"$BATS_TEST_TMPDIR/entry"
    [ "$(jq -r .STATUS "$BATS_TEST_TMPDIR/entry")" = 400 ]
    # What was found from outside: 20,000 tools/list in 1 MB made a 118 MB answer and 2.8 GB of
    # one worker. Now a 400 of a few bytes, and the workers stay as they were (within 64 MiB).
    before=$(workers_rss_kib)
    post "$msid" "@$(batch_of 20000 tools/list)"
    expect_status 400
    [ "${#body}" -lt 200 ]
    [ "$(field .error.code)" = -32600 ]
    after=$(workers_rss_kib)
    echo "workers' RSS: $before KiB before, $after KiB after" >&3
    [ "$after" -lt $((before + 65536)) ]
    # A single message with more values than a body may hold: refused before json-c builds them.
    jq -cn '{jsonrpc: "2.0", id: 1, method: "ping", params: {x: [range(20000) | {}]}}' >"$BATS_TEST_TMPDIR/values.json"
    post "$msid" "@$BATS_TEST_TMPDIR/values.json"
    expect_status 400
    [ "$(rpc_error)" = "-32600 Invalid Request: a body holds at most 65536 JSON values, 16384 of them arrays or objects" ]
}

# stateless METHOD PARAMS [CURL ARGS...]: a request of the stateless revision (2026-07-28), its
# revision in params._meta and the headers that mirror its body, as such a client sends it. Set,
# hdr_version, hdr_method and hdr_name replace those headers' values ("": the header is left out),
# meta_version the revision the body names; -H in the CURL ARGS adds a header.
stateless() {
    local method=$1 params=$2 hdr="$BATS_TEST_TMPDIR/hdr" v m n
    local -a h=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream')
    shift 2
    v=${hdr_version-2026-07-28} m=${hdr_method-$method} n=
    [ "$method" != tools/call ] || n=$(jq -r .name <<<"$params")
    n=${hdr_name-$n}
    [ -z "$v" ] || h+=(-H "mcp-protocol-version: $v")
    [ -z "$m" ] || h+=(-H "mcp-method: $m")
    [ -z "$n" ] || h+=(-H "mcp-name: $n")
    [ -z "$token" ] || h+=(-H "Authorization: Bearer $token")
    body=$(curl -s -D "$hdr" -X POST "$SANDBOXD_URL/mcp" "${h[@]}" "$@" --data-binary "$(jq -cn --arg m "$method" --argjson p "$params" \
        --arg v "${meta_version-2026-07-28}" '{jsonrpc: "2.0", id: 3, method: $m, params: ($p + {_meta: {"io.modelcontextprotocol/protocolVersion": $v,
          "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {name: "bats", version: "1"}}})}')")
    read_headers "$hdr"
}

@test "the stateless revision (2026-07-28): server/discover, tools/list and a call, each on its own, with no session" {
    sessions=$(db "SELECT count(*) FROM mcp_sessions")
    stateless server/discover '{}'
    expect_status 200
    [ -z "$(header mcp-session-id)" ]
    [ "$(jq -c .result.supportedVersions <<<"$body")" = '["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05","2024-10-07"]' ]
    [ "$(field .result.capabilities.tools.listChanged)" = false ]
    [ "$(field .result.resultType)" = complete ]
    [ "$(field '.result._meta["io.modelcontextprotocol/serverInfo"].name')" = sandboxd ]
    expect_request_id
    [ "$(jq -r .MCP_METHOD <<<"$(journal_entry "$rid")")" = server/discover ]
    stateless tools/list '{}'
    expect_status 200
    [ "$(jq '.result.tools | length' <<<"$body")" -eq 9 ]
    [ "$(field .result.ttlMs)" -gt 0 ]
    [ "$(field .result.cacheScope)" = public ]
    [ "$(field .result.resultType)" = complete ]
    stateless tools/call '{"name": "execute", "arguments": {"code": "print(6*7)"}}'
    expect_status 200
    [ -z "$(header mcp-session-id)" ]
    [ "$(field .id)" = 3 ]
    [ "$(field .result.structuredContent.stdout)" = 42 ]
    [ "$(field .result.resultType)" = complete ]
    [ "$(db "SELECT route || ' ' || execution || ' ' || mcp_method || ' ' || mcp_tool FROM requests WHERE request_id = '$rid'")" = "POST /mcp 1 tools/call execute" ]
    # No session was made for any of them; an initialize makes one (positive control).
    [ "$(db "SELECT count(*) FROM mcp_sessions")" -eq "$sessions" ]
    initialize
    [ "$(db "SELECT count(*) FROM mcp_sessions")" -eq $((sessions + 1)) ]
}

@test "the stateless revision: headers that differ from the body are a HeaderMismatch (-32020), each; matching ones are served" {
    # Positive control: the name sent encoded, as a client may send any, is the body's.
    hdr_name='=?base64?cnVudGltZXM=?=' stateless tools/call '{"name": "runtimes", "arguments": {}}'
    expect_status 200
    [ "$(field .result.isError)" = false ]
    hdr_name=execute stateless tools/call '{"name": "runtimes", "arguments": {}}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: Mcp-Name header value 'execute' does not match body value 'runtimes'" ]
    [ "$(field .id)" = 3 ]
    hdr_name='' stateless tools/call '{"name": "runtimes", "arguments": {}}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: the Mcp-Name header is required for tools/call" ]
    # The body's name, and another: a proxy may have read the other.
    stateless tools/call '{"name": "runtimes", "arguments": {}}' -H 'mcp-name: execute'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: MCP-Protocol-Version, Mcp-Method and Mcp-Name may each be sent once" ]
    hdr_method=tools/call stateless tools/list '{}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: Mcp-Method header value 'tools/call' does not match body value 'tools/list'" ]
    hdr_method='' stateless tools/list '{}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: the Mcp-Method header is required" ]
    hdr_version='' stateless tools/list '{}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: the MCP-Protocol-Version header is required" ]
    hdr_version=2025-11-25 stateless tools/list '{}'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'" ]
    # The header names the stateless revision, the body none: refused for that, not for a session.
    post "" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/list'
    expect_status 400
    [ "$(rpc_error)" = "-32020 Header mismatch: MCP-Protocol-Version is 2026-07-28, but params._meta names no io.modelcontextprotocol/protocolVersion" ]
    # Nothing ran for any of them.
    [ "$(db "SELECT count(*) FROM requests WHERE route = 'POST /mcp' AND status = 400 AND execution = 1")" -eq 0 ]
}

@test "the stateless revision: one not served is UnsupportedProtocolVersion (-32022) listing those served; ping and initialize's era are gone" {
    hdr_version=2099-01-01 meta_version=2099-01-01 stateless tools/list '{}'
    expect_status 400
    [ "$(jq -c .error <<<"$body")" = '{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05","2024-10-07"],"requested":"2099-01-01"}}' ]
    [ "$(field .id)" = 3 ]
    # Positive control: the same request at 2026-07-28 is served.
    stateless tools/list '{}'
    expect_status 200
    stateless ping '{}'
    expect_status 404
    [ "$(rpc_error)" = "-32601 Method not found: 'ping'" ]
    stateless resources/list '{}'
    expect_status 404
    [ "$(rpc_error)" = "-32601 Method not found: 'resources/list'" ]
    # A session's client is still served as before, on the same endpoint.
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 200
}

@test "tools/list: the nine tools, each with an inputSchema and an outputSchema" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = application/json ]
    [ "$(jq -r '[.result.tools[].name] | sort | join(" ")' <<<"$body")" = "execute runtimes session_create session_delete session_exec session_list_files session_read_file session_run session_write_file" ]
    [ "$(jq '[.result.tools[] | select(.inputSchema.type == "object" and .outputSchema.type == "object")] | length' <<<"$body")" = 9 ]
    [ "$(jq -r '.result.tools[] | select(.name == "execute") | .inputSchema.required | join(",")' <<<"$body")" = code ]
}

@test "execute: stdout, stderr and the exit code as text and structuredContent, recorded and audited" {
    initialize
    call execute '{"code": "import sys; print(6*7); print(\"e\", file=sys.stderr)"}' 5
    [ "$(field .id)" = 5 ]
    [ "$(field .result.isError)" = false ]
    [ "$(field .result.structuredContent.stdout)" = 42 ]
    [ "$(field .result.structuredContent.stderr)" = e ]
    [ "$(field .result.structuredContent.exit_code)" = 0 ]
    [ "$(jq -c '.result.content[0].text | fromjson' <<<"$body")" = "$(jq -c .result.structuredContent <<<"$body")" ]
    sandbox=$(field .result.structuredContent.sandbox_id)
    [[ $sandbox =~ ^sandbox- ]]
    entry=$(journal_entry "$rid")
    [ "$(jq -r .MCP_METHOD <<<"$entry")" = tools/call ]
    [ "$(jq -r .MCP_TOOL <<<"$entry")" = execute ]
    [ "$(jq -r .SANDBOX_ID <<<"$entry")" = "$sandbox" ]
    [ "$(jq -r .EXIT_CODE <<<"$entry")" = 0 ]
    [ "$(db "SELECT route || ' ' || sandbox_id || ' ' || exit_code || ' ' || execution || ' ' || mcp_method || ' ' || mcp_tool FROM requests WHERE request_id = '$rid'")" = "POST /mcp $sandbox 0 1 tools/call execute" ]
}

@test "a bad argument: Invalid params, in the words of the REST API's 400" {
    api POST /v1/execute '{"language": "cobol", "code": "x"}'
    expect_status 400
    rest=$(field .error)
    [ "$rest" = 'unsupported language "cobol"' ]
    initialize
    call execute '{"language": "cobol", "code": "x"}' 7
    [ "$(field .id)" = 7 ]
    [ "$(field .error.code)" = -32602 ]
    [ "$(field .error.message)" = "$rest" ]
    call execute '{"language": "python"}'
    [ "$(rpc_error)" = "-32602 code is required and must be a string" ]
    call session_run '{"language": "python", "code": "1"}'
    [ "$(rpc_error)" = "-32602 session_id is required and must be a string" ]
    call no_such_tool '{}'
    [ "$(field .error.code)" = -32602 ]
    [[ "$(field .error.message)" == "Unknown tool"* ]]
}

@test "a failed run is an isError result, not a protocol error: a non-zero exit, a session not found" {
    initialize
    call execute '{"code": "import sys; print(\"out\"); sys.exit(3)"}'
    [ "$(field .result.isError)" = true ]
    [ "$(field .result.structuredContent.exit_code)" = 3 ]
    [ "$(field .result.structuredContent.stdout)" = out ]
    [ "$(field .error)" = null ]
    call execute '{"code": "print(1)"}'
    [ "$(field .result.isError)" = false ]
    call session_run '{"session_id": "session-aaaaaaaaaaaa", "language": "python", "code": "1"}'
    [ "$(field .result.isError)" = true ]
    [ "$(field .result.structuredContent.status)" = 404 ]
    [ "$(field .result.structuredContent.error)" = "session not found" ]
}

@test "returned files: an image as image content, a text file as an embedded resource" {
    initialize
    call execute '{"code": "import base64\nopen(\"p.png\", \"wb\").write(base64.b64decode(\"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\"))\nopen(\"t.txt\", \"w\").write(\"hi\")", "return_files": ["p.png", "t.txt"]}'
    [ "$(field .result.isError)" = false ]
    [ "$(jq -r '.result.content[] | select(.type == "image") | .mimeType' <<<"$body")" = image/png ]
    [ "$(jq -r '.result.content[] | select(.type == "image") | .data' <<<"$body" | base64 -d | head -c 4 | tail -c 3)" = PNG ]
    [ "$(jq -r '.result.content[] | select(.type == "resource") | .resource.text' <<<"$body")" = hi ]
    [ "$(jq -r '.result.content[] | select(.type == "resource") | .resource.uri' <<<"$body")" = file:///workspace/t.txt ]
    [ "$(jq -c '[.result.structuredContent.files[] | [.path, .size]]' <<<"$body")" = '[["p.png",70],["t.txt",2]]' ]
}

@test "a session made through MCP: listed by GET /v1/sessions, keeps state, its files, deleted" {
    initialize
    call session_create '{"ttl_s": 120}'
    [ "$(field .result.isError)" = false ]
    sid=$(field .result.structuredContent.session_id)
    echo "- $sid" >>"$created"
    api GET /v1/sessions
    expect_status 200
    [ "$(jq -r --arg s "$sid" '.sessions[] | select(.session_id == $s) | .state' <<<"$body")" = active ]
    call session_run "$(jq -cn --arg s "$sid" '{session_id: $s, language: "python", code: "x = 20"}')"
    [ "$(field .result.isError)" = false ]
    call session_run "$(jq -cn --arg s "$sid" '{session_id: $s, language: "python", code: "print(x + 1)"}')"
    [ "$(field .result.structuredContent.result.stdout)" = 21 ]
    call session_write_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "d/a b.txt", content: "hello"}')"
    [ "$(field .result.structuredContent.size)" = 5 ]
    call session_exec "$(jq -cn --arg s "$sid" '{session_id: $s, command: "cat \"d/a b.txt\""}')"
    [ "$(field .result.structuredContent.result.stdout)" = hello ]
    call session_list_files "$(jq -cn --arg s "$sid" '{session_id: $s, dir: "d"}')"
    [ "$(jq -r '.result.structuredContent.files[0].path' <<<"$body")" = "d/a b.txt" ]
    call session_read_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "d/a b.txt"}')"
    [ "$(jq -r '.result.content[] | select(.type == "resource") | .resource.text' <<<"$body")" = hello ]
    call session_read_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "../../etc/passwd"}')"
    [ "$(rpc_error)" = "-32602 file path escapes working directory: '../../etc/passwd'" ]
    call session_delete "$(jq -cn --arg s "$sid" '{session_id: $s}')"
    [ "$(field .result.structuredContent.state)" = deleted ]
    api GET /v1/sessions
    [ -z "$(jq -r --arg s "$sid" '.sessions[] | select(.session_id == $s) | .state' <<<"$body")" ]
}

@test "runtimes: what GET /v1/runtimes lists" {
    api GET /v1/runtimes
    expect_status 200
    rest=$(jq -c .runtimes <<<"$body")
    initialize
    call runtimes '{}'
    [ "$(field .result.isError)" = false ]
    [ "$(jq -c .result.structuredContent.runtimes <<<"$body")" = "$rest" ]
}

@test "a progress token: the answer comes on an event stream, its last event the response" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"execute","arguments":{"code":"print(1)"}}}'
    expect_status 200
    [ "$ctype" = text/event-stream ]
    last=$(sed -n 's/^data: //p' <<<"$body" | tail -n 1)
    [ "$(jq -r .id <<<"$last")" = 3 ]
    [ "$(jq -r .result.structuredContent.stdout <<<"$last")" = 1 ]
    # Progress before it, the call's own, numbered upwards from 1.
    first=$(sed -n 's/^data: //p' <<<"$body" | head -n 1)
    [ "$(jq -c '[.method, .params.progressToken, .params.progress]' <<<"$first")" = '["notifications/progress","p",1]' ]
    [ "$(sed -n 's/^data: //p' <<<"$body" | jq -s '[.[] | select(.method == "notifications/progress") | .params.progress] | . == (. | sort) and (. | unique | length) == length')" = true ]
}

@test "an event stream is not buffered on the way: its first event comes while the code still runs" {
    initialize
    curl -s -N -X POST "$SANDBOXD_URL/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H "mcp-session-id: $msid" -o "$BATS_TEST_TMPDIR/stream" --data-binary \
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"execute","arguments":{"code":"import time; time.sleep(6)"}}}' &
    stream=$!
    for _ in $(seq 40); do
        grep -q '^data: ' "$BATS_TEST_TMPDIR/stream" && break
        sleep 0.1
    done
    # Within 4 s, as the code sleeps 6: the progress event, and not yet the response.
    [ "$(grep -c '"method":"notifications/progress"' "$BATS_TEST_TMPDIR/stream")" = 1 ]
    [ "$(grep -c '"id":5' "$BATS_TEST_TMPDIR/stream")" = 0 ]
    wait "$stream"
    [ "$(grep -c '"id":5' "$BATS_TEST_TMPDIR/stream")" = 1 ]
}

@test "notifications/cancelled stops the call: its machine killed, no answer, recorded as cancelled" {
    initialize
    slow_call 'application/json, text/event-stream' \
        '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"execute","arguments":{"code":"import time; time.sleep(50); print(\"done\")","timeout_s":55}}}'
    [ -n "$(db "SELECT 1 FROM mcp_calls WHERE mcp_session_id = '$msid' AND rpc_id = '41'")" ]
    start=$(date +%s)
    post "$msid" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"bats"}}'
    expect_status 202
    wait "$slow"
    [ $(($(date +%s) - start)) -lt 20 ]
    # A request's POST is answered (the transport's rule), on a stream with no message in it.
    [ "$(cat "$BATS_TEST_TMPDIR/slow.status")" = "200 text/event-stream" ]
    [ "$(grep -c '"id":41' "$BATS_TEST_TMPDIR/slow.body")" = 0 ]
    [ -z "$(db "SELECT 1 FROM mcp_calls WHERE mcp_session_id = '$msid'")" ]
    [ "$(db "SELECT error FROM requests WHERE route = 'POST /mcp' AND error LIKE '%cancelled%' ORDER BY started_at DESC LIMIT 1")" = "the call was cancelled by the client (notifications/cancelled)" ]
}

@test "a cancelled call of a client that takes JSON only: answered with an error that says so" {
    initialize
    slow_call application/json \
        '{"jsonrpc":"2.0","id":"j","method":"tools/call","params":{"name":"execute","arguments":{"code":"import time; time.sleep(50)","timeout_s":55}}}'
    post "$msid" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"j"}}'
    expect_status 202
    wait "$slow"
    [ "$(cat "$BATS_TEST_TMPDIR/slow.status")" = "200 application/json" ]
    [ "$(jq -c '[.id, .error.code, .error.message]' "$BATS_TEST_TMPDIR/slow.body")" = \
        '["j",-32800,"the call was cancelled by the client (notifications/cancelled)"]' ]
}

@test "a client that takes an event stream only gets its answer on one" {
    initialize
    post_accepting text/event-stream "$msid" '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = text/event-stream ]
    [ "$(sed -n 's/^data: //p' <<<"$body" | jq '.result.tools | length')" = 9 ]
    post_accepting application/json "$msid" '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = application/json ]
}

@test "Accept is read as media ranges with weights: q=0 refuses a type, a wildcard takes it, a longer name is not it" {
    initialize
    # Positive control: JSON named, JSON answered.
    post_accepting application/json "$msid" '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = application/json ]
    expect_request_id
    # JSON refused by name (q=0): the answer comes on the stream the client does take.
    post_accepting 'application/json;q=0, text/event-stream' "$msid" '{"jsonrpc":"2.0","id":5,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = text/event-stream ]
    [ "$(sed -n 's/^data: //p' <<<"$body" | jq .id)" = 5 ]
    post_accepting 'text/*' "$msid" '{"jsonrpc":"2.0","id":6,"method":"tools/list"}'
    expect_status 200
    [ "$ctype" = text/event-stream ]
    # Neither taken: 406, with the request's id and its record.
    post_accepting 'application/jsonx' "$msid" '{"jsonrpc":"2.0","id":7,"method":"tools/list"}'
    expect_status 406
    [ "$(field .error.code)" = -32000 ]
    expect_request_id
    [ "$(db "SELECT status FROM requests WHERE request_id = '$rid'")" = 406 ]
    post_accepting '*/*;q=0' "$msid" '{"jsonrpc":"2.0","id":8,"method":"tools/list"}'
    expect_status 406
    journal_entry "$rid" >"$BATS_TEST_TMPDIR/entry"
    [ "$(jq -r .STATUS "$BATS_TEST_TMPDIR/entry")" = 406 ]
}

@test "a NUL in a method, a tool's name or a file's path is no name cut at it; file text keeps its NULs" {
    initialize
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    expect_status 200
    [ "$(field '.result.tools | length')" = 9 ]
    post "$msid" '{"jsonrpc":"2.0","id":2,"method":"tools/list\u0000x"}'
    expect_status 400
    [ "$(rpc_error)" = "-32600 method must not contain a NUL" ]
    [ "$(field .id)" = 2 ]
    expect_request_id
    call runtimes '{}' 3
    [ "$(field .result.isError)" = false ]
    post "$msid" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"runtimes\u0000x","arguments":{}}}'
    expect_status 200
    [ "$(field .error.code)" = -32602 ]
    call session_create '{}'
    sid=$(field .result.structuredContent.session_id)
    echo "- $sid" >>"$created"
    call session_write_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "nul.txt", content: "a\u0000b"}')"
    [ "$(field .result.isError)" = false ]
    [ "$(field .result.structuredContent.size)" = 3 ]
    curl -s "$SANDBOXD_URL/v1/sessions/$sid/files/nul.txt" -o "$BATS_TEST_TMPDIR/nul.txt"
    [ "$(od -An -c "$BATS_TEST_TMPDIR/nul.txt" | tr -s ' ')" = " a \0 b" ]
    call session_write_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "x.txt\u0000../../y", content: "z"}')"
    [ "$(rpc_error)" = "-32602 the file path must name a file in the working directory" ]
    expect_request_id
    [ "$(db "SELECT count(*) FROM requests WHERE request_id = '$rid' AND status = 200")" = 1 ]
}

@test "session_read_file returns at most 16 MiB: a larger file is an error result naming the cap, before its base64 is made" {
    initialize
    call session_create '{}'
    sid=$(field .result.structuredContent.session_id)
    echo "- $sid" >>"$created"
    head -c 1000 /dev/zero | tr '\0' 'a' >"$BATS_TEST_TMPDIR/small.txt"
    head -c $((17 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/big.bin"
    for f in small.txt big.bin; do
        [ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'content-type: application/octet-stream' --data-binary "@$BATS_TEST_TMPDIR/$f" \
            "$SANDBOXD_URL/v1/sessions/$sid/files/$f")" = 201 ]
    done
    # Positive control: a small file comes back whole.
    call session_read_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "small.txt"}')"
    [ "$(field .result.isError)" = false ]
    [ "$(field .result.structuredContent.size)" = 1000 ]
    call session_read_file "$(jq -cn --arg s "$sid" '{session_id: $s, path: "big.bin"}')"
    expect_request_id
    [ "$(field .result.isError)" = true ]
    [ "$(field .result.structuredContent.status)" = 413 ]
    [ "$(field .result.structuredContent.error)" = "the file is 17825792 bytes; session_read_file returns at most 16777216 (GET /v1/sessions/{id}/files/{path} returns any)" ]
    [ "${#body}" -lt 2000 ]
    journal_entry "$rid" >/dev/null
}

@test "notifications/cancelled stops a session run, by the worker that serves it; the next run says the state was lost" {
    initialize
    call session_create '{}'
    sid=$(field .result.structuredContent.session_id)
    echo "- $sid" >>"$created"
    call session_run "$(jq -cn --arg s "$sid" '{session_id: $s, language: "python", code: "x = 1"}')"
    [ "$(field .result.structuredContent.session.state_reset)" = false ]
    # Its own curl, not post's: post's header file is the cancellation's below.
    curl -s -X POST "$SANDBOXD_URL/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H "mcp-session-id: $msid" -o "$BATS_TEST_TMPDIR/slow.body" --data-binary "$(jq -cn --arg s "$sid" '{jsonrpc: "2.0", id: "slow",
        method: "tools/call", params: {name: "session_run", arguments: {session_id: $s, language: "python", code: "import time; time.sleep(50)"}}}')" &
    slow=$!
    for _ in $(seq 100); do
        [ "$(db "SELECT run_count FROM sessions WHERE session_id = '$sid'")" = 2 ] && break
        sleep 0.1
    done
    sleep 1
    start=$(date +%s)
    post "$msid" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}'
    expect_status 202
    wait "$slow"
    [ $(($(date +%s) - start)) -lt 20 ]
    [ "$(grep -c '"id":"slow"' "$BATS_TEST_TMPDIR/slow.body")" = 0 ]
    [ "$(db "SELECT error FROM requests WHERE route = 'POST /mcp' AND session_id = '$sid' AND error LIKE '%cancelled%'")" = \
        "the call was cancelled by the client (notifications/cancelled)" ]
    call session_run "$(jq -cn --arg s "$sid" '{session_id: $s, language: "python", code: "print(2)"}')"
    [ "$(field .result.structuredContent.result.stdout)" = 2 ]
    [ "$(field .result.structuredContent.session.state_reset)" = true ]
}

@test "with API keys: the MCP session and the sessions it makes are the key's" {
    keys_on
    new_key a
    token_a=$token
    new_key b
    token_b=$token
    as_key ""
    post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
    expect_status 401
    as_key "$token_a"
    initialize
    call session_create '{}'
    sid=$(field .result.structuredContent.session_id)
    echo "$token_a $sid" >>"$created"
    kapi "$token_a" GET /v1/sessions
    [ "$(jq -r --arg s "$sid" '.sessions[] | select(.session_id == $s) | .state' <<<"$body")" = active ]
    kapi "$token_b" GET /v1/sessions
    [ -z "$(jq -r --arg s "$sid" '.sessions[] | select(.session_id == $s) | .state' <<<"$body")" ]
    [ "$(db "SELECT key_name FROM mcp_sessions WHERE mcp_session_id = '$msid'")" = "$KEY_PREFIX-a" ]
    as_key "$token_b"
    post "$msid" '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    expect_status 404
    initialize
    call session_run "$(jq -cn --arg s "$sid" '{session_id: $s, language: "python", code: "1"}')"
    [ "$(field .result.structuredContent.error)" = "session not found" ]
}

@test "with API keys: a tool call meets the key's quotas as its REST route does" {
    keys_on
    new_key rated --executions-per-minute 1
    initialize
    call execute '{"code": "print(1)"}'
    [ "$(field .result.isError)" = false ]
    call execute '{"code": "print(2)"}'
    [ "$(field .result.isError)" = true ]
    [ "$(field .result.structuredContent.status)" = 429 ]
    [[ $(field .result.structuredContent.error) == "API key quota exceeded: executions-per-minute=1 "* ]]
    # The tool call counted as the REST execution would: REST is refused now too.
    kapi "$token" POST /v1/execute '{"code": "print(3)"}'
    expect_status 429
}

@test "with API keys: each request of a batch counts against executions-per-minute; those past it are refused with the quota's words" {
    keys_on
    new_key batch --executions-per-minute 3
    initialize 2025-03-26
    post "$msid" "@$(batch_of 5 tools/list)"
    expect_status 200
    expect_request_id
    [ "$(jq -c '[.[] | if .result then (.result.tools | length) else .error.code end]' <<<"$body")" = '[9,9,9,-32000,-32000]' ]
    [ "$(jq -c '[.[3:][] | .id]' <<<"$body")" = '[4,5]' ]
    [ "$(jq -r '[.[3:][] | .error.code] | unique | .[]' <<<"$body")" = -32000 ]
    [[ $(jq -r '.[4].error.message' <<<"$body") == "API key quota exceeded: executions-per-minute=3 "* ]]
    [ "$(db "SELECT rated FROM requests WHERE request_id = '$rid'")" = 3 ]
    journal_entry "$rid" >/dev/null
    # The three counted as three REST requests would: the key's REST work is refused now too.
    kapi "$token" POST /v1/execute '{"code": "print(3)"}'
    expect_status 429
    # A single tools/list is not rated work, as before.
    post "$msid" '{"jsonrpc":"2.0","id":9,"method":"tools/list"}'
    expect_status 200
    [ "$(field '.result.tools | length')" = 9 ]
}

@test "the stateless revision with API keys: the key is every request's; a session made by a call is the key's" {
    keys_on
    new_key mcp-stateless
    key=$token
    as_key ""
    stateless tools/list '{}'
    expect_status 401
    as_key "$key"
    stateless tools/list '{}'
    expect_status 200
    stateless tools/call '{"name": "session_create", "arguments": {}}'
    expect_status 200
    sid=$(field .result.structuredContent.session_id)
    echo "$token $sid" >>"$created"
    [ "$(curl -s -H "Authorization: Bearer $token" "$SANDBOXD_URL/v1/sessions" | jq -r --arg s "$sid" '[.sessions[].session_id] | index($s) != null')" = true ]
    stateless tools/call "$(jq -cn --arg s "$sid" '{name: "session_run", arguments: {session_id: $s, language: "python", code: "x = 6"}}')"
    expect_status 200
    stateless tools/call "$(jq -cn --arg s "$sid" '{name: "session_run", arguments: {session_id: $s, language: "python", code: "print(x * 7)"}}')"
    expect_status 200
    [ "$(field .result.structuredContent.result.stdout)" = 42 ]
}
