#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Who waits on whom: the pool manager hands machines to claims in arrival order, refuses claims past
# SANDBOXD_QUEUE_MAX at once, drops a claim whose client went, and grants each session's turns
# first in, first out.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    # One machine at most: every execution after the first waits for it.
    with_settings zz-poold SANDBOXD_POOL_TARGET=1 SANDBOXD_POOL_MAX=1 SANDBOXD_QUEUE_MAX=2 SANDBOXD_EXECUTIONS_PER_MACHINE=1000
    wait_pool_full
    work=$(mktemp -d)
}

teardown() {
    wait
    rm -rf "$work"
    if clear_settings zz-poold; then
        wait_pool_full
    fi
    expect_no_leftovers
}

# post_async NAME CODE: POST /v1/execute of CODE in the background, its response in $work/NAME.
post_async() {
    code_json "$2" >"$work/$1.json"
    curl -s -D "$work/$1.hdr" -o "$work/$1.body" -X POST "$SANDBOXD_URL/v1/execute" \
        -H 'content-type: application/json' --data-binary "@$work/$1.json" &
}

# waits_now: how many claims ever had to wait.
waits_now() {
    db "SELECT value FROM counters WHERE name = 'waits'"
}

# until_waits N: waits (bounded) until N claims have had to wait.
until_waits() {
    for _ in $(seq 100); do
        [ "$(waits_now)" -ge "$1" ] && return 0
        sleep 0.05
    done
    echo "waits stayed at $(waits_now), not $1" >&2
    return 1
}

@test "claims are served in arrival order, each as soon as the machine is back" {
    waits=$(waits_now)
    post_async first 'import time; time.sleep(1.5); print(time.time())'
    sleep 0.3
    post_async second 'import time; print(time.time())'
    until_waits $((waits + 1))
    post_async third 'import time; print(time.time())'
    until_waits $((waits + 2))
    wait
    for n in first second third; do
        [ "$(awk '/^HTTP\// { c = $2 } END { print c }' "$work/$n.hdr")" = 200 ]
    done
    t1=$(jq -r .stdout "$work/first.body")
    t2=$(jq -r .stdout "$work/second.body")
    t3=$(jq -r .stdout "$work/third.body")
    # Each ran after the one before it, on the one machine.
    python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); sys.exit(0 if a < b < c else 1)" "$t1" "$t2" "$t3"
    [ "$(jq -r .sandbox_id "$work/second.body")" != "$(jq -r .sandbox_id "$work/third.body")" ]
}

@test "past SANDBOXD_QUEUE_MAX a claim gets 503 at once, with Retry-After" {
    waits=$(waits_now)
    post_async busy 'import time; time.sleep(3); print("busy")'
    sleep 0.3
    post_async q1 'print("q1")'
    until_waits $((waits + 1))
    post_async q2 'print("q2")'
    until_waits $((waits + 2))
    # Positive control above: two wait. The third is refused without waiting.
    SECONDS=0
    hdr=$(mktemp)
    body=$(curl -s -D "$hdr" -X POST "$SANDBOXD_URL/v1/execute" -H 'content-type: application/json' --data-binary '{"code":"print(3)"}')
    read_headers "$hdr"
    retry=$(awk 'tolower($1) == "retry-after:" { sub("\r", "", $2); print $2 }' "$hdr")
    openapi_check POST /v1/execute "$hdr"
    rm -f "$hdr"
    expect_error 503 "no sandbox is available right now - try again shortly"
    [ "$SECONDS" -lt 2 ]
    [[ $retry =~ ^[1-9][0-9]*$ ]]
    [ "$(db "SELECT status FROM requests WHERE request_id = '$rid'")" = 503 ]
    wait
    # The ones that waited were served.
    [ "$(jq -r .stdout "$work/q1.body")" = q1 ]
    [ "$(jq -r .stdout "$work/q2.body")" = q2 ]
}

@test "a client that goes while its claim waits is dropped: its code never runs" {
    waits=$(waits_now)
    marker="bats-poold-gone-$$"
    post_async busy "$(printf '%s\n' 'import time' 'time.sleep(2.5)' 'print("busy")')"
    sleep 0.3
    # Its code would start a marker process if it ran.
    code_json "$(printf '%s\n' 'import subprocess, time' "subprocess.Popen($(marker_argv "$marker"))" 'time.sleep(1)')" >"$work/gone.json"
    curl -s -o /dev/null --max-time 1 -X POST "$SANDBOXD_URL/v1/execute" -H 'content-type: application/json' \
        --data-binary "@$work/gone.json" || true
    # Positive control: it did wait in the queue.
    until_waits $((waits + 1))
    gone=$(db "SELECT request_id FROM requests WHERE route = 'POST /v1/execute' ORDER BY rowid DESC LIMIT 1")
    for _ in $(seq 50); do
        [ -n "$(db "SELECT status FROM requests WHERE request_id = '$gone'")" ] && break
        sleep 0.1
    done
    # Recorded as abandoned by its client, before the machine was free.
    [ "$(db "SELECT status FROM requests WHERE request_id = '$gone'")" = 499 ]
    [ -z "$(db "SELECT machine_id FROM requests WHERE request_id = '$gone'")" ]
    wait
    [ "$(jq -r .stdout "$work/busy.body")" = busy ]
    # The machine went to the next claim instead: this one, at once; the dropped code never ran.
    SECONDS=0
    execute '{"code":"print(\"next\")"}'
    expect_status 200
    [ "$(field .stdout)" = next ]
    [ "$SECONDS" -lt 3 ]
    expect_marker_gone "$marker"
}

@test "a session's operations take their turns first in, first out" {
    body=$(curl -s -X POST "$SANDBOXD_URL/v1/sessions")
    sid=$(jq -r .session_id <<<"$body")
    [[ $sid =~ ^session- ]]
    run_async() {
        jq -cn --arg c "$2" '{language: "python", code: $c}' >"$work/$1.json"
        curl -s -o "$work/$1.body" -X POST "$SANDBOXD_URL/v1/sessions/$sid/run" -H 'content-type: application/json' \
            --data-binary "@$work/$1.json" &
    }
    run_async first 'import time; time.sleep(1.5); order = ["first"]; print(time.time())'
    sleep 0.3
    run_async second 'import time; order.append("second"); print(time.time())'
    sleep 0.3
    run_async third 'import time; order.append("third"); print(",".join(order))'
    wait
    for n in first second third; do
        [ "$(jq -r .status "$work/$n.body")" = success ]
    done
    # The third ran last, after the second, which waited for the first.
    [ "$(jq -r .result.stdout "$work/third.body")" = "first,second,third" ]
    [ "$(jq -r .usage.queue_wait_ms "$work/second.body" | cut -d. -f1)" -ge 500 ]
    curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$sid"
}
