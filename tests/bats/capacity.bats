#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Capacity (docs/capacity.md): a slow snippet holds a machine, never the API. Control answers while
# work fills every worker; work past SANDBOXD_MAX_INFLIGHT is refused at once with Retry-After; a
# request whose client has gone stops its code; a key has a max-concurrent even when it set none.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"
# shellcheck source=tests/bats/key-helpers.bash
source "$BATS_TEST_DIRNAME/key-helpers.bash"

setup_file() {
    require_stack
    export KEYS_MADE="$BATS_FILE_TMPDIR/keys"
    : >"$KEYS_MADE"
    KEY_PREFIX="capacity-$(date +%s)-$$"
    export KEY_PREFIX
}

teardown() {
    local p
    if [ -f "$BATS_TEST_TMPDIR/session" ]; then
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$(cat "$BATS_TEST_TMPDIR/session")" || true
    fi
    # Held executions are released by their own bound (until_released's tries) if a test failed.
    for p in "${held_curl[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    held_curl=()
}

teardown_file() {
    if clear_settings capacity; then
        wait_up
    fi
    keys_off
}

held_curl=()
held_pid=()
held_marker=()

# hold N [TOKEN]: N executions started in the background, each running until released (release_all)
# or for about 60 s at most; returns once every one of them runs its code (their marker processes
# are the positive control). Their answers land in $BATS_TEST_TMPDIR/held-I.
hold() {
    local n=$1 token=${2-} i marker
    local -a auth=()
    [ -z "$token" ] || auth=(-H "Authorization: Bearer $token")
    for i in $(seq "$n"); do
        marker="sbx-hold-$i-$RANDOM$RANDOM"
        code_json "import os, subprocess, time
subprocess.Popen($(marker_argv "$marker"))
$(until_released "go-$i" "held-$i" 2500)" | jq -c '. + {timeout_s: 60}' >"$BATS_TEST_TMPDIR/held-req-$i"
        curl -s -o "$BATS_TEST_TMPDIR/held-$i" -X POST "${auth[@]}" "$SANDBOXD_URL/v1/execute" \
            -H 'content-type: application/json' --data-binary "@$BATS_TEST_TMPDIR/held-req-$i" &
        held_curl+=($!)
        held_marker+=("$marker")
    done
    for i in $(seq "$n"); do
        held_pid[i]=$(marker_pid "${held_marker[i - 1]}") || return 1
    done
}

# release_all: every held execution ends; each answered 200 with its own word.
release_all() {
    local i
    for i in "${!held_pid[@]}"; do
        release "${held_pid[i]}" "go-$i"
    done
    for i in "${!held_pid[@]}"; do
        wait "${held_curl[i - 1]}"
        [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/held-$i")" = "held-$i" ] || {
            echo "held execution $i answered: $(cat "$BATS_TEST_TMPDIR/held-$i")" >&2
            return 1
        }
    done
    held_curl=()
    held_pid=()
    held_marker=()
}

# quick METHOD PATH: a request that must be answered within 5 s -> $code, $body.
quick() {
    local out
    out=$(curl -s -m 5 -w '\n%{http_code}' -X "$1" "$SANDBOXD_URL$2") || { echo "$1 $2 was not answered within 5 s" >&2; return 1; }
    code=${out##*$'\n'}
    body=${out%$'\n'*}
}

@test "control and short executions answer while slow snippets hold more requests than there are workers" {
    with_settings capacity SANDBOXD_WORKERS=2 SANDBOXD_POOL_MAX=12
    wait_up
    # Six held executions: three times the workers, each of which once held one request for life.
    hold 6
    quick GET /v1/pool
    [ "$code" = 200 ]
    [ "$(field .in_flight)" -ge 6 ]
    quick GET /v1/runtimes
    [ "$code" = 200 ]
    quick GET /metrics
    [ "$code" = 200 ]
    quick GET /v1/sessions
    [ "$code" = 200 ]
    # Work that is short gets through too: a machine of its own, while the six keep theirs.
    run curl -s -m 60 -X POST "$SANDBOXD_URL/v1/execute" -d '{"code":"print(2**32)"}'
    [ "$status" = 0 ]
    [ "$(jq -r .stdout <<<"$output")" = 4294967296 ]
    release_all
}

# The most executions in flight (GET /v1/pool) seen while background jobs run: $peak.
peak_in_flight() {
    local cur
    peak=0
    while [ -n "$(jobs -pr)" ]; do
        quick GET /v1/pool || return 1
        cur=$(field .in_flight)
        [ "$cur" -le "$peak" ] || peak=$cur
        sleep 0.2
    done
}

@test "executions beyond the host's CPUs start while the CPUs idle: sleeping ones all run, CPU-bound ones wait for a CPU" {
    local cpus n i
    cpus=$(getconf _NPROCESSORS_ONLN)
    n=$((cpus * 4))
    [ "$n" -le 64 ] || skip "$cpus CPUs: $n executions at once is more than this test holds"
    with_settings capacity SANDBOXD_POOL_MAX=$((n + 4))
    wait_up
    # Snippets that sleep leave the CPUs idle: four times as many as the CPUs all run at once.
    hold "$n"
    quick GET /v1/pool
    [ "$(field .in_flight)" -ge "$n" ]
    release_all
    # As many that spin: the CPUs' count runs, and twice the idle CPUs more before the next sample
    # shows them busy (docs/capacity.md); the rest wait for a CPU, and each, once it runs, spins for
    # its second of CPU and ends well inside its timeout.
    for i in $(seq "$n"); do
        curl -s -o "$BATS_TEST_TMPDIR/spin-$i" -X POST "$SANDBOXD_URL/v1/execute" \
            -d '{"code":"import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass\nprint(\"spun\")","timeout_s":20}' &
    done
    peak_in_flight
    wait
    echo "peak in flight: $peak of $n on $cpus CPUs" >&3
    [ "$peak" -ge "$cpus" ]
    [ "$peak" -le $((cpus * 3)) ]
    for i in $(seq "$n"); do
        [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/spin-$i")" = spun ] || { cat "$BATS_TEST_TMPDIR/spin-$i" >&2; return 1; }
    done
}

@test "work past SANDBOXD_MAX_INFLIGHT is a 503 with Retry-After at once; control still answers" {
    with_settings capacity SANDBOXD_MAX_INFLIGHT=2
    wait_up
    # Under the bound: both run (the positive control of the refusal below).
    hold 2
    before=$(db "SELECT count(*) FROM requests WHERE route = 'POST /v1/execute'")
    kapi "" POST /v1/execute '{"code":"print(1)"}'
    expect_error 503 "no sandbox is available right now - try again shortly"
    [ "$(header Retry-After)" = 1 ]
    # Recorded as any answer, and it reached no sandbox.
    row=$(db "SELECT status, coalesce(sandbox_id, '-') FROM requests WHERE request_id = '$rid'")
    [ "$row" = "503|-" ]
    [ "$(db "SELECT count(*) FROM requests WHERE route = 'POST /v1/execute'")" = $((before + 1)) ]
    # Other work says what it is over.
    kapi "" POST /v1/sessions '{"ttl_s": 60}'
    expect_error 503 "too many requests in flight right now (the limit is 2) - try again shortly"
    [ "$(header Retry-After)" = 1 ]
    # Control has places of its own.
    kapi "" GET /v1/pool
    expect_status 200
    release_all
    # Places given back: work is taken again.
    execute '{"code":"print(3)"}'
    expect_status 200
    [ "$(field .stdout)" = 3 ]
}

@test "a client that goes away stops its code: the machine is killed and the request recorded as 499" {
    marker="sbx-gone-$RANDOM$RANDOM"
    code_json "import subprocess, time
subprocess.Popen($(marker_argv "$marker"))
time.sleep(50)" | jq -c '. + {timeout_s: 60}' >"$BATS_TEST_TMPDIR/req"
    curl -s -o /dev/null -X POST "$SANDBOXD_URL/v1/execute" -H 'content-type: application/json' \
        --data-binary "@$BATS_TEST_TMPDIR/req" &
    client=$!
    # The code runs (the positive control of its end below).
    pid=$(marker_pid "$marker")
    [ -n "$pid" ]
    retired_before=$(curl -s "$SANDBOXD_URL/metrics" | awk '/^sandboxd_machines_retired_total\{reason="client_gone"\}/ {print $2}')
    kill "$client"
    wait "$client" || true
    # Gone within seconds, not after its 50 s.
    expect_execution_abandoned "$marker"
    retired_after=$(curl -s "$SANDBOXD_URL/metrics" | awk '/^sandboxd_machines_retired_total\{reason="client_gone"\}/ {print $2}')
    [ "${retired_after:-0}" -eq $((${retired_before:-0} + 1)) ]
    expect_no_leftovers
}

@test "a session run whose client goes away ends with everything it started; the session and its files stay" {
    api POST /v1/sessions '{"ttl_s": 600}'
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >"$BATS_TEST_TMPDIR/session"
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"open(\"kept\", \"w\").write(\"still here\")"}'
    expect_status 200
    marker="sbx-srun-$RANDOM$RANDOM"
    jq -cn --arg code "import subprocess, time
subprocess.Popen($(marker_argv "$marker"))
time.sleep(50)" '{language: "python", code: $code, timeout: 60}' >"$BATS_TEST_TMPDIR/req"
    curl -s -o /dev/null -X POST "$SANDBOXD_URL/v1/sessions/$sid/run" -H 'content-type: application/json' \
        --data-binary "@$BATS_TEST_TMPDIR/req" &
    client=$!
    # The run's code runs (the positive control of its end below).
    pid=$(marker_pid "$marker")
    [ -n "$pid" ]
    kill "$client"
    wait "$client" || true
    for _ in $(seq 100); do
        expect_marker_gone "$marker" 2>/dev/null && break
        sleep 0.1
    done
    expect_marker_gone "$marker"
    # The session answers its next run at once, with its files.
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(open(\"kept\").read())"}'
    expect_status 200
    [ "$(field .result.stdout)" = "still here" ]
    row=$(db "SELECT status FROM requests WHERE session_id = '$sid' AND route LIKE 'POST %/run' ORDER BY rowid DESC LIMIT 1 OFFSET 1")
    [ "$row" = 499 ]
}

@test "a key without max-concurrent has the default one: SANDBOXD_KEY_MAX_CONCURRENT" {
    with_settings keys SANDBOXD_API_KEYS=on SANDBOXD_KEY_MAX_CONCURRENT=1
    wait_up
    new_key plain
    hold 1 "$token"
    kapi "$token" POST /v1/execute '{"code":"print(2)"}'
    expect_error 429 "API key quota exceeded: max-concurrent=1 (its requests in flight at once) - retry when one has ended"
    # Its status still answers.
    kapi "$token" GET /v1/pool
    expect_status 200
    # A key that says its own is held to that instead (the positive control of the refusal above).
    new_key wide --max-concurrent 2
    kapi "$token" POST /v1/execute '{"code":"print(3)"}'
    expect_status 200
    [ "$(field .stdout)" = 3 ]
    release_all
}
