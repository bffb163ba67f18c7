#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Who waits on whom: the pool manager hands machines to claims in arrival order, refuses claims past
# SANDBOXD_QUEUE_MAX at once, drops a claim whose client went, grants each session's turns
# first in, first out, and waits for no broker answer while it does so.

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
    if [ -n "${broker_stopped:-}" ]; then
        in_systemd systemctl kill -s CONT sandboxd-broker.service
        broker_stopped=
    fi
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

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

# timed NAME METHOD PATH [BODY]: the request, its status in $code, its body in $body and how long it
# took in $ms; given up after 10 s (status 000), so that a pool manager that waits is a failure, not
# a hang.
timed() {
    local start
    start=$(now_ms)
    if [ $# -ge 4 ]; then
        body=$(curl -s --max-time 10 -o "$work/$1" -w '%{http_code}' -X "$2" "$SANDBOXD_URL$3" -H 'content-type: application/json' --data-binary "$4") || true
    else
        body=$(curl -s --max-time 10 -o "$work/$1" -w '%{http_code}' -X "$2" "$SANDBOXD_URL$3") || true
    fi
    ms=$(($(now_ms) - start))
    code=$body
    body=$(cat "$work/$1")
}

session_state() {
    db "SELECT state FROM sessions WHERE session_id = '$1'"
}

@test "a session's pause the broker is slow to answer holds up no claim and no GET /v1/pool" {
    api POST /v1/sessions '{"ttl_s": 2}'
    expect_status 201
    sid=$(field .session_id)
    [ "$(session_state "$sid")" = active ]
    # Positive control: a claim is served at once while the broker answers.
    timed control POST /v1/execute '{"code":"print(0)"}'
    [ "$code" = 200 ]
    [ "$(jq -r .stdout <<<"$body")" = 0 ]

    # The broker stopped takes requests (the kernel queues them) and answers none: the pool
    # manager's pause of the idle session is asked at its idle end, and waits for the broker.
    in_systemd systemctl kill -s STOP sandboxd-broker.service
    broker_stopped=1
    for _ in $(seq 100); do
        [ "$(session_state "$sid")" = pausing ] && break
        sleep 0.1
    done
    [ "$(session_state "$sid")" = pausing ]
    sleep 0.5

    # Meanwhile the warm machine is handed out and put back, and the pool is told, each at once.
    for i in 1 2 3; do
        timed "run$i" POST /v1/execute "{\"code\":\"print($i)\"}"
        echo "execution $i: $code in $ms ms while the pause waits for the broker" >&3
        [ "$code" = 200 ]
        [ "$(jq -r .stdout <<<"$body")" = "$i" ]
        [ "$ms" -lt 3000 ]
    done
    timed pool GET /v1/pool
    [ "$code" = 200 ]
    [ "$ms" -lt 1000 ]
    # Still waiting for the broker: the pause has not ended behind those claims' backs.
    [ "$(session_state "$sid")" = pausing ]

    # The broker answers again: the pause ends.
    in_systemd systemctl kill -s CONT sandboxd-broker.service
    broker_stopped=
    for _ in $(seq 100); do
        [ "$(session_state "$sid")" = paused ] && break
        sleep 0.1
    done
    [ "$(session_state "$sid")" = paused ]
    [ "$(db "SELECT count(*) FROM session_events WHERE session_id = '$sid' AND event = 'expire'")" = 1 ]
    curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$sid"
}
