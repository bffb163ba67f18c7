#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The warm pool of machines and GET /v1/pool.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    wait_pool_full
}

teardown() {
    if clear_settings zz-test; then
        wait_pool_full
    fi
    expect_no_leftovers
}

@test "GET /v1/pool: the four numbers, from a full pool" {
    # After a burst the pool may be larger; idle, it shrinks back to its target.
    for i in $(seq 300); do
        [ "$(pool_field warm)" = "$(pool_field target)" ] && break
        sleep 0.1
    done
    api GET /v1/pool
    expect_status 200
    expect_request_id
    [ "$(jq -r 'keys | join(",")' <<<"$body")" = "created_total,in_flight,target,warm" ]
    [ "$(field .target)" = 3 ]
    [ "$(field .warm)" = 3 ]
    [ "$(field .in_flight)" = 0 ]
    [ "$(field .created_total)" -ge 3 ]
}

@test "warm machines are systemd units, idle and ready" {
    warm=$(db "SELECT machine_id FROM pool WHERE state = 'ready'")
    [ "$(wc -l <<<"$warm")" -ge 3 ]
    for mid in $warm; do
        [[ $mid =~ ^machine-[a-z2-7]{12}$ ]]
        [ "$(in_systemd systemctl is-active "$mid.service")" = active ]
    done
}

@test "only GET works on /v1/pool" {
    for m in POST PUT DELETE; do
        api "$m" /v1/pool '{}'
        expect_error 405 "method not allowed"
    done
}

@test "created_total goes up by one for every snippet that runs, and warm returns to target" {
    before=$(pool_field created_total)
    execute '{"code":"print(1)"}'
    expect_status 200
    wait_pool_full
    [ "$(pool_field created_total)" = $((before + 1)) ]
    execute '{"code":"print(2)"}'
    execute '{"code":"print(3)"}'
    wait_pool_full
    [ "$(pool_field created_total)" = $((before + 3)) ]
}

@test "after a clean execution its machine is idle in the pool again (with one execution a machine: gone)" {
    execute '{"code":"print(1)"}'
    expect_status 200
    machine=$(db "SELECT machine_id FROM requests WHERE request_id = '$rid'")
    [[ $machine =~ ^machine-[a-z2-7]{12}$ ]]
    if [ "$(executions_per_machine)" = 1 ]; then
        expect_sandbox_gone "$machine"
        return 0
    fi
    for i in $(seq 50); do
        [ "$(db "SELECT state FROM pool WHERE machine_id = '$machine'")" = ready ] && break
        sleep 0.1
    done
    [ "$(db "SELECT state FROM pool WHERE machine_id = '$machine'")" = ready ]
    [ "$(db "SELECT executions >= 1 FROM pool WHERE machine_id = '$machine'")" = 1 ]
    [ "$(in_systemd systemctl is-active "$machine.service")" = active ]
}

@test "a sandbox is never reused: nothing persists between executions" {
    execute '{"code":"open(\"/workspace/mark\",\"w\").write(\"x\"); open(\"/tmp/mark\",\"w\").write(\"x\"); print(open(\"/proc/self/cgroup\").read().count(\"sandbox-\"))"}'
    expect_status 200
    first=$(field .sandbox_id)
    for i in 1 2 3 4; do
        execute '{"code":"import os; print(os.path.exists(\"/workspace/mark\"), os.path.exists(\"/tmp/mark\"))"}'
        expect_status 200
        [ "$(field .stdout)" = "False False" ]
        [ "$(field .sandbox_id)" != "$first" ]
    done
}

@test "in_flight counts the executions running now" {
    curl -s -X POST "$SANDBOXD_URL/v1/execute" -d '{"code":"import time; time.sleep(3)"}' >/dev/null &
    cpid=$!
    for i in $(seq 50); do
        [ "$(pool_field in_flight)" = 1 ] && break
        sleep 0.1
    done
    [ "$(pool_field in_flight)" = 1 ]
    wait "$cpid"
    for i in $(seq 50); do
        [ "$(pool_field in_flight)" = 0 ] && break
        sleep 0.1
    done
    [ "$(pool_field in_flight)" = 0 ]
}

@test "a burst larger than the pool: every request answered with its own output, then the pool refills" {
    for i in $(seq 12); do
        curl -s -o "$BATS_TEST_TMPDIR/out.$i" -w '%{http_code}' -X POST "$SANDBOXD_URL/v1/execute" \
            -d "{\"code\":\"print($i * 11)\"}" >"$BATS_TEST_TMPDIR/code.$i" &
    done
    wait
    for i in $(seq 12); do
        openapi_check_file POST /v1/execute "$(cat "$BATS_TEST_TMPDIR/code.$i")" "$BATS_TEST_TMPDIR/out.$i"
        [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/out.$i")" = "$((i * 11))" ]
    done
    wait_pool_full
    [ "$(pool_field in_flight)" = 0 ]
}

@test "pool events are in the journal: a machine created, ready, and destroyed when it retires" {
    # A timeout retires the machine that ran it.
    execute '{"code":"import time; time.sleep(30)","timeout_s":1}'
    machine=$(db "SELECT machine_id FROM requests WHERE request_id = '$rid'")
    expect_sandbox_gone "$machine"
    events=$(in_systemd journalctl -q -o json "MACHINE_ID=$machine" MESSAGE_ID=3a7e9c1b5d2f4e8a9b6c0d1e2f3a4b5c | jq -r .POOL_EVENT | sort | tr '\n' ' ')
    [ "$events" = "created destroyed ready " ]
}

@test "with no warm sandbox to be had, a request waits, then gets 503" {
    with_settings zz-test SANDBOXD_POOL_TARGET=0 SANDBOXD_POOL_MAX=0 SANDBOXD_POOL_WAIT_S=2
    for i in $(seq 100); do
        [ "$(pool_field warm)" = 0 ] && break
        sleep 0.1
    done
    SECONDS=0
    execute '{"code":"print(1)"}'
    expect_error 503 "no sandbox is available right now - try again shortly"
    [ "$SECONDS" -ge 2 ]
    [ "$(db "SELECT status FROM requests WHERE request_id = '$rid'")" = 503 ]
}

@test "restarting the workers keeps the counters and reuses or cleans the warm sandboxes" {
    before=$(pool_field created_total)
    in_systemd systemctl restart sandbox-api.service
    wait_pool_full
    [ "$(pool_field created_total)" -ge "$before" ]
    [ "$(pool_field in_flight)" = 0 ]
    execute '{"code":"print(42)"}'
    [ "$(field .stdout)" = 42 ]
}
