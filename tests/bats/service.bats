#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The service as an operator sees it: units, restarts, nginx's own errors, concurrency.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

# Every unit of sandboxd's: each is part of sandboxd.target.
SANDBOXD_UNITS="sandbox-api.socket sandbox-api.service sandboxd-broker.socket sandboxd-broker.service sandboxd-poold.socket
    sandboxd-poold.service sandboxd-nginx.service"
SANDBOXD_SERVICES="sandbox-api.service sandboxd-broker.service sandboxd-poold.service sandboxd-nginx.service"

teardown() {
    settings_restore
    # A test that stopped sandboxd, and failed before it started it again.
    if [ "$(in_systemd systemctl is-active sandboxd.target || true)" != active ]; then
        in_systemd systemctl start sandboxd.target
        wait_up
    fi
    expect_no_leftovers
}

# The services' main PIDs, one line each.
main_pids() {
    local u
    for u in $SANDBOXD_SERVICES; do
        echo "$u $(in_systemd systemctl show -P MainPID "$u")"
    done
}

# When each unit last became active, one line each.
active_since() {
    local u
    for u in $SANDBOXD_UNITS; do
        echo "$u $(in_systemd systemctl show -P ActiveEnterTimestampMonotonic "$u")"
    done
}

# sandboxd's journal entries since $1 (a time journalctl takes: @SECONDS.MICROSECONDS), their messages.
journal_since() {
    in_systemd journalctl -q -o cat --since "$1" SYSLOG_IDENTIFIER=sandboxd
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

# bats test_tags=vm
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

# bats test_tags=vm
@test "settings: restart of sandboxd.target restarts every unit, with what sandboxd.conf says now" {
    settings_save
    execute '{"code":"print(1)"}'
    expect_status 200
    before=$(active_since)

    echo SANDBOXD_API_KEYS=on >>"$SETTINGS_FILE"
    in_systemd systemctl restart sandboxd.target
    wait_up
    execute '{"code":"print(1)"}'
    expect_status 401

    after=$(active_since)
    for u in $SANDBOXD_UNITS; do
        old=$(awk -v u="$u" '$1 == u { print $2 }' <<<"$before")
        new=$(awk -v u="$u" '$1 == u { print $2 }' <<<"$after")
        [ "$new" -gt "$old" ] || { echo "$u was not restarted: $old, $new" >&2; return 1; }
    done
}

# bats test_tags=vm
@test "settings: reload of sandboxd.target applies SANDBOXD_API_KEYS, both ways, and restarts nothing" {
    settings_save
    execute '{"code":"print(1)"}'
    expect_status 200
    since=@$(date +%s.%6N)
    before=$(main_pids)

    echo SANDBOXD_API_KEYS=on >>"$SETTINGS_FILE"
    in_systemd systemctl reload sandboxd.target
    # The reload returned once the workers had the file: the very next request needs a key.
    execute '{"code":"print(1)"}'
    expect_status 401
    [ "$(main_pids)" = "$before" ]

    sed -i '$d' "$SETTINGS_FILE"
    in_systemd systemctl reload sandboxd.target
    execute '{"code":"print(1)"}'
    expect_status 200
    [ "$(main_pids)" = "$before" ]

    # Each service read the file, the workers applied the setting; nginx reloaded too.
    run journal_since "$since"
    [ "$(grep -c "sandboxd-fcgi: reloaded the settings of '$SETTINGS_FILE', applied SANDBOXD_API_KEYS" <<<"$output")" = 2 ]
    [ "$(grep -c "sandboxd-broker: reloaded the settings" <<<"$output")" = 2 ]
    [ "$(grep -c "sandboxd-poold: reloaded the settings" <<<"$output")" = 2 ]
    run in_systemd journalctl -q -o cat --since "$since" UNIT=sandboxd-nginx.service
    grep -q '^Reloaded ' <<<"$output"
}

@test "settings: reload leaves a setting that needs a restart as it is, and says so" {
    settings_save
    status_before=$(in_systemd systemctl show -P StatusText sandbox-api.service)
    workers=${status_before%% *}
    since=@$(date +%s.%6N)

    echo "SANDBOXD_WORKERS=$((workers + 1))" >>"$SETTINGS_FILE"
    in_systemd systemctl reload sandboxd.target
    status_after=$(in_systemd systemctl show -P StatusText sandbox-api.service)
    [[ $status_after == "$workers workers, "* ]]
    [[ $status_after == *"; restart needed for SANDBOXD_WORKERS" ]]
    run journal_since "$since"
    grep -q "sandboxd-fcgi: settings SANDBOXD_WORKERS of '$SETTINGS_FILE' apply on restart only (systemctl restart sandboxd.target)" <<<"$output"

    in_systemd systemctl restart sandboxd.target
    wait_up
    [[ $(in_systemd systemctl show -P StatusText sandbox-api.service) == "$((workers + 1)) workers, "* ]]
}

@test "settings: reload refuses a file with an invalid value whole: nothing of it applies" {
    settings_save
    since=@$(date +%s.%6N)

    printf 'SANDBOXD_API_KEYS=on\nSANDBOXD_POOL_TTL_S=often\n' >>"$SETTINGS_FILE"
    in_systemd systemctl reload sandboxd.target
    execute '{"code":"print(1)"}'
    expect_status 200
    run journal_since "$since"
    grep -q "sandboxd-fcgi: failed to reload the settings: invalid setting SANDBOXD_POOL_TTL_S in '$SETTINGS_FILE', keeping the running ones" <<<"$output"
}

# bats test_tags=vm
@test "stop of sandboxd.target stops every unit of sandboxd, its sockets too; start brings it back" {
    for u in $SANDBOXD_UNITS; do
        [ "$(in_systemd systemctl is-active "$u")" = active ] || { echo "$u is not active before" >&2; return 1; }
    done

    # The target stops at once; its units after it, each once what it serves is gone.
    in_systemd systemctl stop sandboxd.target
    for _ in $(seq 300); do
        run in_systemd systemctl list-units --all --plain --no-legend --state=active,activating,reloading,deactivating 'sandbox*'
        active=$(grep -v '^sandboxd-host\.target ' <<<"$output" || true)
        [ -n "$active" ] || break
        sleep 0.1
    done
    [ -z "$active" ] || { echo "still active: $active" >&2; return 1; }
    run in_systemd test -e /run/sandboxd/fcgi.sock
    [ "$status" -ne 0 ]
    run curl -s -o /dev/null "$SANDBOXD_URL/metrics"
    [ "$status" -ne 0 ]

    in_systemd systemctl start sandboxd.target
    wait_ok
}
