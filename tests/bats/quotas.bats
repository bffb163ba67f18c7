#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Every kind of work under a quota (docs/security.md, "Quotas"): a key's caps on its sessions, the
# rate quota over session creates, uploads and pauses, a session's CPU between runs billed, the
# disk reserve, the pruning of old records, and nginx's key check before it reads a body. Each
# refusal is first shown not to happen under its limit.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"
# shellcheck source=tests/bats/key-helpers.bash
source "$BATS_TEST_DIRNAME/key-helpers.bash"

setup_file() {
    require_stack
    export KEYS_MADE="$BATS_FILE_TMPDIR/keys"
    : >"$KEYS_MADE"
    KEY_PREFIX="quota-$(date +%s)-$$"
    export KEY_PREFIX
}

teardown() {
    local id token
    if [ -f "$BATS_TEST_TMPDIR/sessions" ]; then
        while read -r token id; do
            curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $token" "$SANDBOXD_URL/v1/sessions/$id" || true
        done <"$BATS_TEST_TMPDIR/sessions"
    fi
}

teardown_file() {
    if clear_settings reserve; then
        wait_up
    fi
    if clear_settings retain; then
        wait_up
    fi
    keys_off
}

# new_session TOKEN: POST /v1/sessions with the key, expected to make one: its id in $sid, kept for
# teardown.
new_session() {
    kapi "$1" POST /v1/sessions '{"ttl_s": 600}'
    expect_status 201
    sid=$(field .session_id)
    echo "$1 $sid" >>"$BATS_TEST_TMPDIR/sessions"
}

# kput TOKEN ID PATH FILE: PUT a file's bytes into a session -> $code, $body, $rid.
kput() {
    local hdr="$BATS_TEST_TMPDIR/hdr"
    body=$(curl -s -D "$hdr" -X PUT -H "Authorization: Bearer $1" --data-binary "@$4" "$SANDBOXD_URL/v1/sessions/$2/files/$3")
    read_headers "$hdr"
    openapi_check PUT "/v1/sessions/$2/files/$3" "$hdr"
}

# expect_retry_between LOW HIGH: the last 429's Retry-After, and the seconds its message names, in
# [LOW, HIGH] and equal.
expect_retry_between() {
    local ra said
    ra=$(header Retry-After)
    [[ $(field .error) =~ "retry in "([0-9]+)" s" ]] || { echo "no retry in: $body" >&2; return 1; }
    said=${BASH_REMATCH[1]}
    [ "$ra" = "$said" ] || { echo "Retry-After $ra, message $said" >&2; return 1; }
    if [ "$ra" -lt "$1" ] || [ "$ra" -gt "$2" ]; then
        echo "Retry-After $ra not in [$1, $2]" >&2
        return 1
    fi
}

@test "max-sessions: a key's active sessions are capped; a pause frees a place, a resume past it is refused" {
    keys_on
    new_key active --max-sessions 1
    # Under the cap: the first is made.
    new_session "$token"
    first=$sid
    kapi "$token" POST /v1/sessions '{"ttl_s": 600}'
    expect_error 429 "$(field .error)"
    [[ $(field .error) == "API key quota exceeded: max-sessions=1 (its active sessions) - retry in "*" s, or pause or delete one" ]]
    # Until the first is paused for being idle: its ttl_s.
    expect_retry_between 590 600
    [ "$(db "SELECT status || ' ' || key_name FROM requests WHERE request_id = '$rid'")" = "429 $kname" ]
    [ "$(db "SELECT count(*) FROM sessions WHERE key_name = '$kname' AND state != 'deleted'")" = 1 ]

    kapi "$token" POST "/v1/sessions/$first/pause"
    expect_status 200
    new_session "$token"
    kapi "$token" POST "/v1/sessions/$first/resume"
    expect_status 429
    [[ $(field .error) == "API key quota exceeded: max-sessions=1 "* ]]
    # Another key is not held to it.
    new_key active-other
    new_session "$token"
}

@test "max-paused-sessions: a key keeps at most that many sessions that can be paused; a delete frees a place" {
    keys_on
    new_key paused --max-paused-sessions 1
    new_session "$token"
    kapi "$token" POST "/v1/sessions/$sid/pause"
    expect_status 200
    kapi "$token" POST /v1/sessions
    expect_status 429
    [[ $(field .error) == "API key quota exceeded: max-paused-sessions=1 (its sessions kept, active or paused, as each may be paused) - retry in "*" s, or delete one" ]]
    # Until the paused one is deleted after SANDBOXD_SESSION_RETAIN_S (7 days by default).
    expect_retry_between 604000 604800
    kapi "$token" DELETE "/v1/sessions/$sid"
    expect_status 200
    new_session "$token"
}

@test "session-disk-bytes: a key's sessions' disks, each as large as it may grow, are capped" {
    keys_on
    disk=$(in_systemd systemctl show -P Environment sandbox-api.service | tr ' ' '\n' | sed -n 's/^SANDBOXD_SESSION_DISK_BYTES=//p' | tail -n 1)
    disk=${disk:-1073741824}
    new_key disk --session-disk-bytes $((disk * 3 / 2))
    new_session "$token"
    kapi "$token" POST /v1/sessions
    expect_status 429
    [ "$(field .error | sed 's/retry in [0-9]* s/retry in N s/')" = "API key quota exceeded: session-disk-bytes=$((disk * 3 / 2)) (its sessions' disks, $disk bytes each) - retry in N s, or delete one" ]
}

@test "executions-per-minute counts session creates, uploads and pauses too" {
    keys_on
    new_key rated --executions-per-minute 3
    printf 'x' >"$BATS_TEST_TMPDIR/f"
    # Three kinds of work, each let in under the rate: a create, an upload, a pause.
    new_session "$token"
    kput "$token" "$sid" a.txt "$BATS_TEST_TMPDIR/f"
    expect_status 201
    kapi "$token" POST "/v1/sessions/$sid/pause"
    expect_status 200
    [ "$(db "SELECT count(*) FROM requests WHERE key_name = '$kname' AND rated = 1")" = 3 ]
    # What is not rated still answers.
    kapi "$token" GET "/v1/sessions/$sid"
    expect_status 200
    # The fourth, of any kind, is over the rate.
    kput "$token" "$sid" b.txt "$BATS_TEST_TMPDIR/f"
    expect_status 429
    [[ $(field .error) == "API key quota exceeded: executions-per-minute=3 (its executions, session creates, file uploads and pauses started in the last 60 s) - retry in "*" s" ]]
    expect_retry_between 50 60
    kapi "$token" POST /v1/sessions
    expect_status 429
    kapi "$token" POST /v1/execute '{"code":"print(1)"}'
    expect_status 429
    [ "$(db "SELECT count(*) FROM requests WHERE key_name = '$kname' AND rated = 1")" = 3 ]
}

# Python for a session run: a background process that burns about $1 CPU seconds, then ends.
burner() {
    printf '%s\n' "import subprocess" \
        "subprocess.Popen(['python3', '-c', 'import time\\nt = time.process_time()\\nwhile time.process_time() - t < $1: pass'])" \
        "print('started')"
}

@test "a session's CPU between runs is in its next run's usage and billed to its key" {
    keys_on
    new_key bg --cpu-seconds-per-day 4
    new_session "$token"
    kapi "$token" POST "/v1/sessions/$sid/run" "$(jq -cn --arg c "$(burner 3)" '{language: "python", code: $c}')"
    expect_status 200
    [ "$(field .result.stdout)" = started ]
    # The run itself used little: its loop runs after it.
    [ "$(field .usage.cpu_ms)" -lt 1500 ] || { echo "$body" >&2; false; }
    sleep 4
    kapi "$token" POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(1)"}'
    expect_status 200
    cpu=$(field .usage.cpu_ms)
    echo "the run after a 3 s background loop: usage.cpu_ms $cpu"
    [ "$cpu" -ge 2500 ] || { echo "the loop's CPU is not in the next run's usage: $body" >&2; false; }
    finished "$rid" >/dev/null
    [ "$(db "SELECT cpu_ms FROM requests WHERE request_id = '$rid'")" = "$cpu" ]
    # Billed: the day's 4 CPU seconds are used up with the runs', and the next run is refused.
    kapi "$token" POST "/v1/sessions/$sid/run" "$(jq -cn --arg c "$(burner 2)" '{language: "python", code: $c}')"
    expect_status 200
    sleep 3
    # A pause asks the machine what it used since, and records it for the key.
    kapi "$token" POST "/v1/sessions/$sid/pause"
    expect_status 200
    usage=$(db "SELECT event || ' ' || (cpu_ms >= 1500) FROM session_usage WHERE session_id = '$sid' AND key_name = '$kname'")
    [ "$usage" = "pause 1" ] || { echo "session_usage: '$usage'" >&2; false; }
    kapi "$token" POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(1)"}'
    expect_status 429
    [[ $(field .error) == "API key quota exceeded: cpu-seconds-per-day=4 "* ]]
}

@test "the pool manager's idle pause records what the session's sandbox used since its last run, for its key" {
    keys_on
    new_key idle
    kapi "$token" POST /v1/sessions '{"ttl_s": 3}'
    expect_status 201
    local idle
    idle=$(field .session_id)
    echo "$token $idle" >>"$BATS_TEST_TMPDIR/sessions"
    kapi "$token" POST "/v1/sessions/$idle/run" "$(jq -cn --arg c "$(burner 1.5)" '{language: "python", code: $c}')"
    expect_status 200
    # Nothing recorded yet: the session is active, its loop running.
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$idle'")" = active ]
    [ "$(db "SELECT count(*) FROM session_usage WHERE session_id = '$idle'")" = 0 ]
    for _ in $(seq 150); do
        [ "$(db "SELECT state FROM sessions WHERE session_id = '$idle'")" = paused ] && break
        sleep 0.1
    done
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$idle'")" = paused ]
    usage=$(db "SELECT event || ' ' || key_name || ' ' || coalesce(request_id, '-') || ' ' || (cpu_ms >= 1000) FROM session_usage WHERE session_id = '$idle'")
    [ "$usage" = "expire $kname - 1" ] || { echo "session_usage: '$usage'" >&2; false; }
}

# free_bytes: what an unprivileged writer may still use on the sessions' filesystem.
free_bytes() {
    local dir
    dir=$(in_systemd systemctl show -P Environment sandbox-api.service | tr ' ' '\n' | sed -n 's/^SANDBOXD_SESSION_DIR=//p' | tail -n 1)
    stat -f -c '%a %S' "${dir:-/var/lib/sandboxd/sessions}" | awk '{ printf "%.0f\n", $1 * $2 }'
}

@test "SANDBOXD_DISK_RESERVE_BYTES: below it, no new session, no resume and no upload: 507 before anything is written" {
    keys_on
    new_key reserve
    printf 'x' >"$BATS_TEST_TMPDIR/f"
    # A reserve just below the free space: everything works.
    with_settings reserve "SANDBOXD_DISK_RESERVE_BYTES=$(($(free_bytes) - (512 << 20)))"
    wait_up
    new_session "$token"
    kput "$token" "$sid" a.txt "$BATS_TEST_TMPDIR/f"
    expect_status 201
    kapi "$token" POST "/v1/sessions/$sid/pause"
    expect_status 200

    # One above it: refused, and nothing was made.
    with_settings reserve "SANDBOXD_DISK_RESERVE_BYTES=$(($(free_bytes) + (1 << 40)))"
    wait_up
    before=$(db "SELECT count(*) FROM sessions")
    kapi "$token" POST /v1/sessions
    [[ $(field .error) =~ ^"insufficient storage: the state filesystem has "[0-9]+" bytes free, SANDBOXD_DISK_RESERVE_BYTES="[0-9]+" are kept - nothing was written"$ ]]
    expect_error 507 "$(field .error)"
    [ "$(db "SELECT count(*) FROM sessions")" = "$before" ]
    kapi "$token" POST "/v1/sessions/$sid/resume"
    expect_status 507
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = paused ]
    kput "$token" "$sid" b.txt "$BATS_TEST_TMPDIR/f"
    expect_status 507
    [ "$(db "SELECT count(*) FROM session_events WHERE session_id = '$sid' AND event = 'upload' AND detail = 'b.txt'")" = 0 ]
    # What writes nothing still answers.
    kapi "$token" GET "/v1/sessions/$sid"
    expect_status 200

    clear_settings reserve
    wait_up
    kapi "$token" POST "/v1/sessions/$sid/resume"
    expect_status 200
}

@test "SANDBOXD_RECORD_RETAIN_DAYS: the pool manager prunes older request rows, and no total goes down" {
    old=$(printf 'old%029d' $$)
    recent=$(printf 'recent%026d' $$)
    db "INSERT INTO requests (request_id, route, endpoint, status, worker_pid, started_at, finished_at) VALUES
        ('$old', 'GET /v1/pool', '/v1/pool', 200, 1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3 days'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3 days')),
        ('$recent', 'GET /v1/pool', '/v1/pool', 200, 1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 days'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 days'))"
    # Both are there, and counted in no total (inserted answered: no trigger fired).
    [ "$(db "SELECT count(*) FROM requests WHERE request_id IN ('$old', '$recent')")" = 2 ]
    totals=$(db "SELECT group_concat(endpoint || status || '=' || count) FROM request_totals")

    # The pool manager prunes at its start, then hourly.
    with_settings retain SANDBOXD_RECORD_RETAIN_DAYS=2
    wait_up
    for _ in $(seq 100); do
        [ "$(db "SELECT count(*) FROM requests WHERE request_id = '$old'")" = 0 ] && break
        sleep 0.1
    done
    [ "$(db "SELECT count(*) FROM requests WHERE request_id = '$old'")" = 0 ]
    [ "$(db "SELECT count(*) FROM requests WHERE request_id = '$recent'")" = 1 ]
    # The totals did not go down: the metrics still count what was pruned.
    now=$(db "SELECT group_concat(endpoint || status || '=' || count) FROM request_totals")
    run python3 -c 'import sys
def parse(s):
    return dict(x.rsplit("=", 1) for x in s.split(",") if x)
a, b = parse(sys.argv[1]), parse(sys.argv[2])
sys.exit(0 if all(int(b.get(k, 0)) >= int(v) for k, v in a.items()) else 1)' "$totals" "$now"
    [ "$status" = 0 ]
    journal=$(in_systemd journalctl -q -u sandboxd-poold.service --since "-2 min" -o cat | grep -c "Pruned .* records older than 2 days" || true)
    [ "$journal" -ge 1 ]
    clear_settings retain
    wait_up
    db "DELETE FROM requests WHERE request_id = '$recent'"
}

@test "nginx reads no body before the key is checked: a 128 MiB upload with a bad key is a 401 at once, the same with a good key works" {
    keys_on
    new_key upload
    good=$token
    new_session "$good"
    head -c $((128 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/big"

    # A bad key: refused before the body is sent. curl waits for 100 Continue, which nginx sends
    # only once it reads the body: it never does.
    hdr="$BATS_TEST_TMPDIR/hdr"
    out=$(curl -s -D "$hdr" -o "$BATS_TEST_TMPDIR/body" -w '%{size_upload} %{time_total}' -X PUT -H 'Expect: 100-continue' --expect100-timeout 30 \
        -H "Authorization: Bearer sbx_$(printf '0%.0s' $(seq 64))" --data-binary "@$BATS_TEST_TMPDIR/big" "$SANDBOXD_URL/v1/sessions/$sid/files/big.bin")
    body=$(cat "$BATS_TEST_TMPDIR/body")
    read_headers "$hdr"
    expect_error 401 "missing or invalid API key"
    [ "$(header WWW-Authenticate)" = 'Bearer realm="sandboxd"' ]
    read -r sent took <<<"$out"
    echo "a bad key's 128 MiB upload: $sent bytes sent, answered in $took s"
    [ "$sent" = 0 ] || { echo "curl sent $sent bytes" >&2; false; }
    [ "$(awk -v t="$took" 'BEGIN { print (t < 5) }')" = 1 ] || { echo "took $took s" >&2; false; }
    # Recorded and audited, as any request.
    [ "$(finished "$rid")" = 401 ]
    [ "$(jq -r .STATUS <<<"$(journal_entry "$rid")")" = 401 ]
    # Without Expect, a client that sends at once is answered as soon as its headers are read.
    out=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer bad" --data-binary "@$BATS_TEST_TMPDIR/big" \
        "$SANDBOXD_URL/v1/sessions/$sid/files/big.bin")
    [ "$out" = 401 ]

    # The positive control: the same upload with the good key is written whole.
    kput "$good" "$sid" big.bin "$BATS_TEST_TMPDIR/big"
    expect_status 201
    [ "$(field .size)" = $((128 << 20)) ]
    # A route that needs no key is not asked for one; a path that is no route answers as such.
    run curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/metrics"
    [ "$output" = 200 ]
    kapi "" GET /v1/no-such-route
    expect_error 404 "not found"
    # But a body is read for no one without a key, whatever the path: a path that is no route, or a
    # method the route does not take, with a 16 MiB body and no key is refused before it is sent.
    head -c $((16 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/16m"
    for target in "POST /v1/no-such-route" "PUT /v1/execute"; do
        read -r method path <<<"$target"
        out=$(curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code} %{size_upload}' -X "$method" -H 'Expect: 100-continue' \
            --expect100-timeout 30 --data-binary "@$BATS_TEST_TMPDIR/16m" "$SANDBOXD_URL$path")
        [ "$out" = "401 0" ] || { echo "$target without a key: $out (status, bytes sent)" >&2; false; }
    done
    # With the key, the same body is read, and the path answered as what it is.
    out=$(curl -s -o /dev/null -w '%{http_code} %{size_upload}' -X POST -H "Authorization: Bearer $good" \
        --data-binary "@$BATS_TEST_TMPDIR/16m" "$SANDBOXD_URL/v1/no-such-route")
    [ "$out" = "404 $((16 << 20))" ]
}
