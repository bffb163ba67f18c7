#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The service as an operator sees it: units, restarts, nginx's own errors, concurrency.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

teardown() {
    expect_no_leftovers
}

wait_ok() {
    local i
    for i in $(seq 100); do
        execute '{"code":"print(\"back\")"}'
        [ "$code" = 200 ] && return 0
        sleep 0.1
    done
    echo "the service did not come back: $code $body" >&2
    return 1
}

@test "the units are active under systemd" {
    for u in sandboxd.target sandbox-api.socket sandbox-api.service sandboxd-broker.socket sandboxd-broker.service \
        sandboxd-poold.service sandboxd-nginx.service; do
        [ "$(in_systemd systemctl is-active "$u")" = active ]
    done
}

@test "several requests run concurrently, each getting its own output" {
    pids=()
    for i in $(seq 8); do
        curl -s -o "$BATS_TEST_TMPDIR/out.$i" -w '%{http_code}' -X POST "$SANDBOXD_URL/v1/execute" \
            -d "{\"code\":\"import time; time.sleep(0.5); print($i * 7)\"}" >"$BATS_TEST_TMPDIR/code.$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
    for i in $(seq 8); do
        openapi_check_file POST /v1/execute "$(cat "$BATS_TEST_TMPDIR/code.$i")" "$BATS_TEST_TMPDIR/out.$i"
        [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/out.$i")" = "$((i * 7))" ]
    done
}

@test "a worker killed mid-request: nginx answers JSON 502, the record says so, the next request succeeds" {
    curl -s -D "$BATS_TEST_TMPDIR/h" -o "$BATS_TEST_TMPDIR/b" -X POST "$SANDBOXD_URL/v1/execute" \
        -d '{"code":"import time; time.sleep(30)"}' &
    cpid=$!
    # The worker holding the request is the one with a sandbox running.
    for i in $(seq 100); do
        sid=$(db "SELECT sandbox_id, worker_pid FROM requests WHERE status IS NULL AND sandbox_id IS NOT NULL ORDER BY started_at DESC LIMIT 1")
        [ -n "$sid" ] && break
        sleep 0.1
    done
    [ -n "$sid" ]
    wpid=${sid#*|}
    in_systemd kill -9 "$wpid"
    wait "$cpid" || true
    [ "$(awk 'NR == 1 { print $2 }' "$BATS_TEST_TMPDIR/h")" = 502 ]
    jq -e .error "$BATS_TEST_TMPDIR/b"
    openapi_check_file --headers "$BATS_TEST_TMPDIR/h" POST /v1/execute 502 "$BATS_TEST_TMPDIR/b"
    grep -qi '^x-request-id: [0-9a-f]\{32\}' "$BATS_TEST_TMPDIR/h"
    expect_no_leftovers
    for i in $(seq 50); do
        row=$(db "SELECT status, error FROM requests WHERE sandbox_id = '${sid%|*}'")
        [ "${row%%|*}" = 502 ] && break
        sleep 0.1
    done
    [ "$row" = "502|sandbox execution failed: the worker handling the request died" ]
    wait_ok
}

@test "the service restarts after a crash" {
    main=$(in_systemd systemctl show -P MainPID sandbox-api.service)
    in_systemd kill -9 "$main"
    wait_ok
    [ "$(in_systemd systemctl show -P MainPID sandbox-api.service)" != "$main" ]
}

@test "the broker and the pool manager are restarted by systemd after a crash, and used again" {
    for u in sandboxd-broker.service sandboxd-poold.service; do
        main=$(in_systemd systemctl show -P MainPID "$u")
        [ "$main" -gt 0 ]
        in_systemd kill -9 "$main"
        for i in $(seq 100); do
            now=$(in_systemd systemctl show -P MainPID "$u")
            [ "$now" -gt 0 ] && [ "$now" != "$main" ] && break
            sleep 0.1
        done
        [ "$now" -gt 0 ]
        [ "$now" != "$main" ]
        [ "$(in_systemd systemctl show -P NRestarts "$u")" -ge 1 ]
    done
    # The workers reach the new broker (a used sandbox is destroyed through it), the pool manager
    # refills the pool through it.
    wait_ok
    wait_pool_full
    execute '{"code":"print(\"again\")"}'
    [ "$(field .stdout)" = again ]
}

@test "workers down: nginx answers a JSON 502 with a request id, and the socket brings them back" {
    in_systemd systemctl stop sandbox-api.socket sandbox-api.service
    api POST /v1/execute '{"code":"print(1)"}'
    in_systemd systemctl start sandbox-api.socket sandbox-api.service
    expect_status 502
    expect_request_id
    jq -e .error <<<"$body"
    wait_ok
}
