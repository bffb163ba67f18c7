#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# API keys (SANDBOXD_API_KEYS): off by default; on, every route but /metrics needs a key in force,
# each key's quotas hold before anything is done, its name (never its token) is in every record,
# and its sessions are its own. Keys are made with sandboxctl, as an administrator would.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"
# shellcheck source=tests/bats/key-helpers.bash
source "$BATS_TEST_DIRNAME/key-helpers.bash"


setup_file() {
    require_stack
    # The keys this file made, revoked at its end: their names are never given out again, so each
    # run makes its own.
    export KEYS_MADE="$BATS_FILE_TMPDIR/keys"
    : >"$KEYS_MADE"
    KEY_PREFIX="bats-$(date +%s)-$$"
    export KEY_PREFIX
}

teardown() {
    local id token
    egress_allow_restore
    if [ -f "$BATS_TEST_TMPDIR/sessions" ]; then
        while read -r token id; do
            curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $token" "$SANDBOXD_URL/v1/sessions/$id" || true
        done <"$BATS_TEST_TMPDIR/sessions"
    fi
    if [ -n "${slow_pid:-}" ]; then
        wait "$slow_pid" || true
        slow_pid=
    fi
}

teardown_file() {
    keys_off
}

created_total() {
    db "SELECT value FROM counters WHERE name = 'created_total'"
}

# expect_refused_row RID STATUS KEY: the request's row: refused with STATUS, naming KEY (or none),
# not an execution, no sandbox, no machine.
expect_refused_row() {
    local row
    finished "$1" >/dev/null
    row=$(db "SELECT status, coalesce(key_name, '-'), execution, coalesce(language, '-'), coalesce(sandbox_id, '-'), coalesce(machine_id, '-')
              FROM requests WHERE request_id = '$1'")
    [ "$row" = "$2|$3|0|-|-|-" ] || { echo "row of $1: $row" >&2; return 1; }
}

# in_flight KEY: the key's requests in flight.
in_flight() {
    db "SELECT count(*) FROM requests WHERE key_name = '$1' AND status IS NULL"
}

# wait_in_flight KEY N: until the key has N requests in flight.
wait_in_flight() {
    for _ in $(seq 100); do
        [ "$(in_flight "$1")" = "$2" ] && return 0
        sleep 0.05
    done
    echo "$1 has $(in_flight "$1") requests in flight, not $2" >&2
    return 1
}

@test "API keys are off by default: requests need no header" {
    setting_default SANDBOXD_API_KEYS
    api GET /v1/pool
    expect_status 200
    execute '{"code":"print(6 * 7)"}'
    expect_status 200
    [ "$(field .stdout)" = 42 ]
    [ "$(db "SELECT coalesce(key_name, '-') || ' ' || execution FROM requests WHERE request_id = '$rid'")" = "- 1" ]
}

# bats test_tags=vm
@test "keys on: no key in force is a 401 with the exact JSON, whatever is wrong with it, and nothing is done" {
    keys_on
    new_key valid
    good=$token
    new_key revoked
    revoked=$token
    # Positive controls: both keys work, on the very routes refused below.
    kapi "$good" GET /v1/pool
    expect_status 200
    kapi "$revoked" POST /v1/execute '{"code":"print(1)"}'
    expect_status 200
    "$SANDBOXCTL" key revoke "$kname"

    before=$(created_total)
    kapi "" POST /v1/execute '{"code":"print(1)"}'
    expect_error 401 "missing or invalid API key"
    [ "$(header WWW-Authenticate)" = 'Bearer realm="sandboxd"' ]
    expect_refused_row "$rid" 401 -
    kapi "$revoked" POST /v1/execute '{"code":"print(1)"}'
    expect_error 401 "missing or invalid API key"
    expect_refused_row "$rid" 401 -
    kapi "sbx_$(printf '0%.0s' $(seq 64))" POST /v1/sessions
    expect_error 401 "missing or invalid API key"
    for h in "Basic dXNlcjpwYXNz" "Bearer" "Bearer $good extra" "Token $good" "$good" "Bearer a\"b"; do
        kapi_header "$h" GET /v1/pool
        expect_error 401 "missing or invalid API key"
    done
    # The token is sent whole or not at all: one character off is another token.
    kapi "${good%?}x" GET /v1/runtimes
    expect_error 401 "missing or invalid API key"
    kapi "" GET /v1/openapi.json
    expect_error 401 "missing or invalid API key"
    [ "$(created_total)" = "$before" ]
    # The scheme's case is free (RFC 7235).
    kapi_header "bearer $good" GET /v1/pool
    expect_status 200
}

@test "keys on: /metrics needs no key; a path that is no route, or a method it does not take, is answered as such" {
    keys_on
    run curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/metrics"
    [ "$output" = 200 ]
    kapi "" GET /v1/no-such-route
    expect_error 404 "not found"
    kapi "" DELETE /v1/execute
    expect_error 405 "method not allowed"
}

# bats test_tags=vm
@test "a valid key: its name in the row, the journal entry and the metric labels; its token in none of them" {
    keys_on
    new_key records
    since=$(date +@%s)
    kapi "$token" POST /v1/execute '{"code":"print(\"keyed\")"}'
    expect_status 200
    [ "$(field .stdout)" = keyed ]
    [ "$(db "SELECT key_name || ' ' || execution || ' ' || language FROM requests WHERE request_id = '$rid'")" = "$kname 1 python" ]
    entry=$(journal_entry "$rid")
    [ "$(jq -r .API_KEY <<<"$entry")" = "$kname" ]
    [ "$(jq -r .STATUS <<<"$entry")" = 200 ]

    curl -s "$SANDBOXD_URL/metrics" >"$BATS_TEST_TMPDIR/m"
    promtool check metrics <"$BATS_TEST_TMPDIR/m"
    grep -qx "sandboxd_http_requests_total{route=\"/v1/execute\",code=\"200\",key=\"$kname\"} 1" "$BATS_TEST_TMPDIR/m"
    grep -qx "sandboxd_executions_total{language=\"python\",termination=\"ok\",key=\"$kname\"} 1" "$BATS_TEST_TMPDIR/m"
    grep -qx "sandboxd_executions_total{language=\"node\",termination=\"ok\",key=\"$kname\"} 0" "$BATS_TEST_TMPDIR/m"

    # The token is nowhere: not in the database's files (its hash is: the positive control of the
    # search), not in the journal since the request (the key's name is).
    hash=$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)
    cat "$SANDBOXD_DB"* | grep -aqF "$hash"
    run sh -c 'cat "$1"* | grep -acF "$2"' sh "$SANDBOXD_DB" "$token"
    [ "$output" = 0 ]
    run grep -aF "$token" <(db .dump)
    [ "$status" = 1 ]
    in_systemd journalctl -q -o export --since "$since" >"$BATS_TEST_TMPDIR/journal"
    grep -aqF "API_KEY=$kname" "$BATS_TEST_TMPDIR/journal"
    run grep -acF "${token#sbx_}" "$BATS_TEST_TMPDIR/journal"
    [ "$output" = 0 ]
}

@test "max-concurrent: a request past it is a 429 with Retry-After, and reaches no sandbox" {
    keys_on
    new_key conc --max-concurrent 1
    # One request in flight, held for a few seconds.
    curl -s -o "$BATS_TEST_TMPDIR/slow" -X POST -H "Authorization: Bearer $token" "$SANDBOXD_URL/v1/execute" \
        -d '{"code":"import time; time.sleep(4); print(\"slow\")"}' &
    slow_pid=$!
    wait_in_flight "$kname" 1

    before=$(created_total)
    kapi "$token" POST /v1/execute '{"code":"print(2)"}'
    expect_error 429 "API key quota exceeded: max-concurrent=1 (its requests in flight at once) - retry when one has ended"
    [ "$(header Retry-After)" = 1 ]
    expect_refused_row "$rid" 429 "$kname"
    # Any work counts, not only executions: a session's files wait for its turn and its machine.
    kapi "$token" POST /v1/sessions '{"ttl_s": 60}'
    expect_status 429
    # Control is never refused for it: the key still sees how its work is doing.
    kapi "$token" GET /v1/pool
    expect_status 200
    [ "$(created_total)" = "$before" ]

    wait "$slow_pid"
    slow_pid=
    [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/slow")" = slow ]
    # Its place is free again, once its row is closed.
    wait_in_flight "$kname" 0
    kapi "$token" POST /v1/execute '{"code":"print(3)"}'
    expect_status 200
    [ "$(field .stdout)" = 3 ]
}

@test "executions-per-minute: past it a 429 says when the window frees, as Retry-After does; other routes still answer" {
    keys_on
    new_key rate --executions-per-minute 2
    kapi "$token" POST /v1/execute '{"code":"print(1)"}'
    expect_status 200
    kapi "$token" POST /execute '{"code":"print(2)"}'
    expect_status 200
    # Not an execution: not counted, not refused.
    kapi "$token" GET /v1/pool
    expect_status 200

    before=$(created_total)
    kapi "$token" POST /v1/execute '{"code":"print(3)"}'
    expect_status 429
    [[ $(field .error) =~ ^"API key quota exceeded: executions-per-minute=2 (its executions, session creates, file uploads and pauses started in the last 60 s) - retry in "([0-9]+)" s"$ ]]
    wait_s=${BASH_REMATCH[1]}
    [ "$(header Retry-After)" = "$wait_s" ]
    # The first of the two leaves the window a minute after it started: not before the test began.
    [ "$wait_s" -ge 50 ]
    [ "$wait_s" -le 60 ]
    expect_refused_row "$rid" 429 "$kname"
    kapi "$token" POST /v1/call '{"image":"registry.example/demo-agent:x","function":"f"}'
    expect_status 429
    expect_refused_row "$rid" 429 "$kname"
    [ "$(created_total)" = "$before" ]
    # Refusals are not executions: the count stays at the two let in.
    [ "$(db "SELECT count(*) FROM requests WHERE key_name = '$kname' AND execution = 1")" = 2 ]
}

@test "cpu-seconds-per-day: once a key's executions used it, the next is a 429 until the day's window frees" {
    keys_on
    new_key cpu --cpu-seconds-per-day 1
    kapi "$token" POST /v1/execute '{"code":"import time\nt = time.process_time()\nwhile time.process_time() - t < 1.3:\n    pass\nprint(\"spent\")"}'
    expect_status 200
    [ "$(field .stdout)" = spent ]
    finished "$rid"
    cpu_ms=$(db "SELECT cpu_ms FROM requests WHERE request_id = '$rid'")
    [ "$cpu_ms" -ge 1000 ] || { echo "cpu_ms: $cpu_ms" >&2; return 1; }

    before=$(created_total)
    kapi "$token" POST /v1/execute '{"code":"print(1)"}'
    expect_status 429
    [[ $(field .error) =~ ^"API key quota exceeded: cpu-seconds-per-day=1 (its executions' CPU seconds in the last 24 h) - retry in "([0-9]+)" s"$ ]]
    wait_s=${BASH_REMATCH[1]}
    [ "$(header Retry-After)" = "$wait_s" ]
    [ "$wait_s" -ge 86000 ]
    [ "$wait_s" -le 86400 ]
    expect_refused_row "$rid" 429 "$kname"
    [ "$(created_total)" = "$before" ]
    # What does not run code is not held to it.
    kapi "$token" GET /v1/runtimes
    expect_status 200
}

@test "a session belongs to the key that made it: any other key gets the 404 of an unknown one" {
    keys_on
    new_key owner
    a=$token
    new_key other
    b=$token
    kapi "$a" POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    echo "$a $sid" >>"$BATS_TEST_TMPDIR/sessions"
    [ "$(db "SELECT key_name FROM sessions WHERE session_id = '$sid'")" = "$KEY_PREFIX-owner" ]

    # The owner sees it, runs in it, lists it.
    kapi "$a" GET "/v1/sessions/$sid"
    expect_status 200
    kapi "$a" POST "/v1/sessions/$sid/run" '{"language":"python","code":"x = 5"}'
    expect_status 200
    kapi "$a" GET /v1/sessions
    [ "$(jq -r --arg s "$sid" '[.sessions[].session_id] | index($s) != null' <<<"$body")" = true ]

    # Another key: as if it did not exist, whatever it asks.
    kapi "$b" GET "/v1/sessions/$sid"
    expect_error 404 "session not found"
    kapi "$b" POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(x)"}'
    expect_error 404 "session not found"
    kapi "$b" POST "/session/$sid/exec" '{"command":"ls"}'
    expect_error 404 "session not found"
    kapi "$b" GET "/v1/sessions/$sid/files"
    expect_error 404 "session not found"
    kapi "$b" DELETE "/v1/sessions/$sid"
    expect_error 404 "session not found"
    kapi "$b" GET "/v1/sessions/session-aaaaaaaaaaaa"
    expect_error 404 "session not found"
    kapi "$b" GET /v1/sessions
    expect_status 200
    [ "$(jq -r --arg s "$sid" '[.sessions[].session_id] | index($s) == null' <<<"$body")" = true ]

    # Still the owner's, untouched.
    kapi "$a" POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(x)"}'
    expect_status 200
    [ "$(field .result.stdout)" = 5 ]
    kapi "$a" DELETE "/v1/sessions/$sid"
    expect_status 200
}

@test "sandboxctl key: help for each command, list as a table and as JSON, a name once, revoke once" {
    for cmd in "key --help" "key add --help" "key list --help" "key revoke --help"; do
        # shellcheck disable=SC2086 # the words of the command
        run "$SANDBOXCTL" $cmd
        [ "$status" = 0 ]
        [[ $output == Usage:* ]]
    done
    run "$SANDBOXCTL" --help
    [[ $output == *"key "*"API keys"* ]]

    new_key listed --max-concurrent 3 --executions-per-minute 40
    run "$SANDBOXCTL" key add "$kname"
    [ "$status" = 1 ]
    [[ $output == *"a key named '$kname' exists already"* ]]
    run "$SANDBOXCTL" key add "bad name"
    [ "$status" = 1 ]
    run "$SANDBOXCTL" key add "$KEY_PREFIX-zero" --max-concurrent 0
    [ "$status" = 1 ]

    run "$SANDBOXCTL" key list
    [ "$status" = 0 ]
    [[ $output == NAME* ]]
    grep -E "^$kname +3 +40 +- " <<<"$output"
    "$SANDBOXCTL" --json key list >"$BATS_TEST_TMPDIR/list.json"
    jq -e --arg n "$kname" '.keys[] | select(.name == $n) | .max_concurrent == 3 and .executions_per_minute == 40 and
        .cpu_seconds_per_day == null and .revoked_at == null and (.created_at | test("^20[0-9-]+T"))' "$BATS_TEST_TMPDIR/list.json"
    "$SANDBOXCTL" key list --json | cmp - "$BATS_TEST_TMPDIR/list.json"
    run grep -c sbx_ "$BATS_TEST_TMPDIR/list.json"
    [ "$output" = 0 ]

    "$SANDBOXCTL" key revoke "$kname"
    "$SANDBOXCTL" key list --json | jq -e --arg n "$kname" '.keys[] | select(.name == $n) | .revoked_at | test("^20")'
    run "$SANDBOXCTL" key revoke "$kname"
    [ "$status" = 1 ]
    run "$SANDBOXCTL" key revoke "$KEY_PREFIX-never-made"
    [ "$status" = 1 ]
    [[ $output == *"no key named"* ]]

    # Run as root, it left nothing the services' user cannot open.
    files=("$SANDBOXD_DB"*)
    [ -e "${files[0]}" ]
    run stat -c %U "${files[@]}"
    [ "$(sort -u <<<"$output")" = sandboxd ]
}

@test "a key's images: it calls only those; any other answers as an image that does not exist" {
    [ -d /var/lib/machines/demo-agent ] || skip "the demo-agent image is missing (run: make images)"
    keys_on
    call='{"image":"registry.example/demo-agent:v1","function":"add","args":{"a":2,"b":3}}'
    not_found="could not start a sandbox for this tool call: image 'demo-agent' not found in /var/lib/machines"
    # Control: the key that may call demo-agent does, and so does a key with no list.
    new_key may --images other-agent,demo-agent
    may=$token
    kapi "$may" POST /v1/call "$call"
    expect_status 200
    [ "$(field .result)" = 5 ]
    new_key any
    kapi "$token" POST /v1/call "$call"
    expect_status 200
    # A key whose list leaves it out gets the answer of an image that does not exist, and no sandbox.
    new_key may-not --images other-agent
    kapi "$token" POST /v1/call "$call"
    expect_error 503 "$not_found"
    [ "$(db "SELECT coalesce(sandbox_id, '-') FROM requests WHERE request_id = '$rid'")" = - ]
    kapi "$token" POST /v1/call '{"image":"no-such-agent","function":"add"}'
    expect_error 503 "could not start a sandbox for this tool call: image 'no-such-agent' not found in /var/lib/machines"
    # No key may call the runtime image, listed or not (it is in the store: the control).
    [ -d /var/lib/machines/sandboxd-runtime/usr/lib ]
    new_key runtime --images sandboxd-runtime,demo-agent
    kapi "$token" POST /v1/call '{"image":"sandboxd-runtime","module":"subprocess","function":"getoutput","args":{"cmd":"id"}}'
    expect_error 503 "could not start a sandbox for this tool call: image 'sandboxd-runtime' not found in /var/lib/machines"
    # Revoked, the key that could may not.
    "$SANDBOXCTL" key revoke "$KEY_PREFIX-may"
    kapi "$may" POST /v1/call "$call"
    expect_status 401
    # Listed: its images, '*' for every one.
    run "$SANDBOXCTL" key list
    grep -E "^$KEY_PREFIX-may-not .* other-agent +\*$" <<<"$output"
    grep -E "^$KEY_PREFIX-any .* \* +\*$" <<<"$output"
    "$SANDBOXCTL" key list --json | jq -e --arg n "$KEY_PREFIX-may-not" '.keys[] | select(.name == $n) | .images == ["other-agent"]'
    "$SANDBOXCTL" key list --json | jq -e --arg n "$KEY_PREFIX-any" '.keys[] | select(.name == $n) | .images == null'
    run "$SANDBOXCTL" key add "$KEY_PREFIX-bad" --images "demo-agent,../x"
    [ "$status" = 1 ]
    [[ $output == *"'../x' is not an image name"* ]]
    run "$SANDBOXCTL" key add "$KEY_PREFIX-bad" --images ""
    [ "$status" = 1 ]
}

@test "a key's egress: it may ask for what it lists, within the host's egress.allow; anything else is a 400 naming it" {
    keys_on
    egress_allow_save
    printf 'pypi.org\nfiles.pythonhosted.org\n*.example.org:8443\n' >/etc/sandboxd/egress.allow
    new_key egress-any
    local any=$token
    new_key egress-pypi --egress "PyPI.org,*.example.org:8443"
    local pypi=$token
    new_key egress-none --egress none

    # Control: the key that lists nothing has the host's whole list, so its request gets past both
    # lists (and, with no egress relay started on this host, is answered 503).
    kapi "$any" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["files.pythonhosted.org"]}}')"
    expect_error 503 "egress is unavailable: the host's egress relay is not running"
    kapi "$pypi" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org", "a.example.org:8443"]}}')"
    expect_error 503 "egress is unavailable: the host's egress relay is not running"
    # What the host allows but the key does not: a 400 naming it, nothing run.
    kapi "$pypi" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org", "files.pythonhosted.org"]}}')"
    expect_error 400 'network.allow[1]: egress to "files.pythonhosted.org" is not allowed for this API key'
    finished "$rid" >/dev/null
    [ "$(db "SELECT status || ' ' || key_name || ' ' || coalesce(sandbox_id, '-') || ' ' || coalesce(machine_id, '-')
             FROM requests WHERE request_id = '$rid'")" = "400 $KEY_PREFIX-egress-pypi - -" ]
    kapi "$token" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "pypi.org" is not allowed for this API key'
    kapi "$token" POST /v1/sessions '{"network": {"allow": ["pypi.org"]}}'
    expect_error 400 'network.allow[0]: egress to "pypi.org" is not allowed for this API key'
    [ "$(db "SELECT count(*) FROM sessions WHERE key_name = '$kname'")" = 0 ]
    # What the host does not allow, the key cannot widen.
    kapi "$any" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["registry.npmjs.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "registry.npmjs.org" is not allowed on this host'
    # Revoked, the key asks in vain (401 before any list is read).
    "$SANDBOXCTL" key revoke "$KEY_PREFIX-egress-pypi"
    kapi "$pypi" POST /v1/execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_status 401

    # Listed, and kept as the lists print them (lower case).
    run "$SANDBOXCTL" key list
    grep -E "^$KEY_PREFIX-egress-none .* none$" <<<"$output"
    grep -E "^$KEY_PREFIX-egress-any .* \*$" <<<"$output"
    "$SANDBOXCTL" key list --json | jq -e --arg n "$KEY_PREFIX-egress-pypi" '.keys[] | select(.name == $n) | .egress == ["pypi.org", "*.example.org:8443"]'
    "$SANDBOXCTL" key list --json | jq -e --arg n "$KEY_PREFIX-egress-none" '.keys[] | select(.name == $n) | .egress == []'
    "$SANDBOXCTL" key list --json | jq -e --arg n "$KEY_PREFIX-egress-any" '.keys[] | select(.name == $n) | .egress == null'
    run "$SANDBOXCTL" key add "$KEY_PREFIX-bad" --egress "pypi.org,10.0.0.1"
    [ "$status" = 1 ]
    [[ $output == *"'10.0.0.1' is not a host name"* ]]
    run "$SANDBOXCTL" key add "$KEY_PREFIX-bad" --egress ""
    [ "$status" = 1 ]
}

# bats test_tags=vm
@test "keys off again: no header needed" {
    keys_on
    kapi "" GET /v1/pool
    expect_status 401
    clear_settings keys
    wait_up
    kapi "" GET /v1/pool
    expect_status 200
}
