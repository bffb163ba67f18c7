#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Least privilege: the processes that parse requests are not root and cannot manage systemd units;
# the one that can (the broker) does so only for sandboxd's own units, and only for them.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

# The client's text, run with python3 -c: the checkout may sit where systemd's namespace does not see
# it (a private /tmp), or where the users tried here may not read.
CLIENT=$(cat "$BATS_TEST_DIRNAME/broker-client.py")

setup_file() {
    require_stack
}

setup() {
    wait_pool_full
}

# service_pids UNIT NAME: pids of UNIT's processes whose name is NAME
service_pids() {
    local cg
    cg=$(in_systemd systemctl show -P ControlGroup "$1")
    [ -n "$cg" ] || return 0
    for p in $(in_systemd cat "/sys/fs/cgroup/systemd$cg/cgroup.procs"); do
        [ "$(in_systemd cat "/proc/$p/comm")" = "$2" ] && echo "$p"
    done
    return 0
}

as_worker_user() {
    in_systemd setpriv --reuid=sandboxd --regid=sandboxd --clear-groups "$@"
}

@test "master, workers and pool manager run as sandboxd with no capabilities; the broker is root with none" {
    workers=$(service_pids sandbox-api.service sandboxd-worker)
    master=$(service_pids sandbox-api.service sandboxd-fcgi)
    poold=$(service_pids sandboxd-poold.service sandboxd-poold)
    [ "$(wc -w <<<"$workers")" -ge 1 ]
    [ "$(wc -w <<<"$master")" -eq 1 ]
    [ "$(wc -w <<<"$poold")" -eq 1 ]
    for p in $master $workers $poold; do
        status=$(in_systemd cat "/proc/$p/status")
        grep -Eq "^Uid:\s+$(id -u sandboxd)\s+$(id -u sandboxd)\s+$(id -u sandboxd)\s+$(id -u sandboxd)$" <<<"$status"
        grep -Eq "^Gid:\s+$(id -g sandboxd)\s+" <<<"$status"
        grep -Eq '^Groups:\s*'"$(id -g sandboxd)"'?\s*$' <<<"$status"
        grep -q '^CapEff:\s*0000000000000000$' <<<"$status"
        grep -q '^CapPrm:\s*0000000000000000$' <<<"$status"
        grep -q '^CapBnd:\s*0000000000000000$' <<<"$status"
        grep -q '^NoNewPrivs:\s*1$' <<<"$status"
    done
    # The broker: root, which systemd asks of a client that manages units, and no capability at all.
    in_systemd /usr/bin/python3 -c "$CLIENT" list "" >/dev/null   # socket activation: it runs once asked
    broker=$(service_pids sandboxd-broker.service sandboxd-broker)
    [ "$(wc -w <<<"$broker")" -eq 1 ]
    status=$(in_systemd cat "/proc/$broker/status")
    grep -Eq '^Uid:\s+0\s+0\s+0\s+0$' <<<"$status"
    grep -q '^CapEff:\s*0000000000000000$' <<<"$status"
    grep -q '^CapPrm:\s*0000000000000000$' <<<"$status"
    grep -q '^CapBnd:\s*0000000000000000$' <<<"$status"
    grep -q '^NoNewPrivs:\s*1$' <<<"$status"
}

@test "the workers' user cannot start, stop or kill units through systemd" {
    run as_worker_user systemd-run --unit=sbx-test-evil --wait /bin/true
    [ "$status" -ne 0 ]
    [[ $output == *"Access denied"* || $output == *"nteractive authentication required"* || $output == *"not allowed"* ]]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'sbx-test-evil*')" ]

    unit=$(in_systemd systemctl list-units --plain --no-legend 'machine-*.service' | awk '{ print $1; exit }')
    [ -n "$unit" ]
    run as_worker_user systemctl kill "$unit"
    [ "$status" -ne 0 ]
    run as_worker_user systemctl stop sandbox-api.service
    [ "$status" -ne 0 ]
    in_systemd systemctl is-active --quiet "$unit"
    in_systemd systemctl is-active --quiet sandbox-api.service
}

@test "the broker refuses every user but the workers' own" {
    run in_systemd setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c "$CLIENT" list ""
    [ "$status" -eq 0 ]
    [ "$output" = '{"closed": true}' ]
    run as_worker_user /usr/bin/python3 -c "$CLIENT" list ""
    [ "$status" -eq 0 ]
    [ "$(jq .error <<<"$output")" -eq 0 ]
}

@test "the broker acts only on sandboxd's own units" {
    for id in sandbox-api dbus systemd-journald sandboxd-nginx "machine-abcdefghijkl.service" "../sandbox-api" "tool-ABCDEFGHIJKL"; do
        for op in kill reset-failed; do
            run as_worker_user /usr/bin/python3 -c "$CLIENT" "$op" "$id"
            [ "$status" -eq 0 ]
            [ "$(jq .error <<<"$output")" -eq -22 ]   # -EINVAL
        done
    done
    # A machine may only be started under a machine id; a tool runs only under a tool id.
    run as_worker_user /usr/bin/python3 -c "$CLIENT" start-warm "tool-abcdefghijkl"
    [ "$(jq .error <<<"$output")" -eq -22 ]
    run as_worker_user /usr/bin/python3 -c "$CLIENT" run-tool "machine-abcdefghijkl"
    [ "$(jq .error <<<"$output")" -eq -22 ]
    # Without the listening socket it must pass, no machine is started.
    run as_worker_user /usr/bin/python3 -c "$CLIENT" start-warm "machine-abcdefghijkl"
    [ "$(jq .error <<<"$output")" -eq -9 ]    # -EBADF
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'machine-abcdefghijkl*')" ]
    in_systemd systemctl is-active --quiet sandbox-api.service sandboxd-broker.service sandboxd-poold.service dbus.service \
        systemd-journald.service sandboxd-nginx.service
}

@test "malformed broker messages are refused and the service stays up" {
    for hex in "" 00 "$(printf '%0440d' 0)" "336b6273$(printf '%0432d' 0)" "336b627303000000$(printf 'ff%.0s' $(seq 212))"; do
        run as_worker_user /usr/bin/python3 -c "$CLIENT" --raw "$hex"
        [ "$status" -eq 0 ]
        [[ $output == '{"closed": true}' || $(jq .error <<<"$output") -lt 0 ]]
    done
    execute '{"code":"print(\"still up\")"}'
    expect_status 200
    [ "$(field .stdout)" = "still up" ]
}

@test "descriptors passed to the broker are never kept, whatever message carries them" {
    broker=$(service_pids sandboxd-broker.service sandboxd-broker)
    before=$(in_systemd ls "/proc/$broker/fd" | wc -l)
    for _ in $(seq 20); do
        # An empty message, a malformed one, and a request that takes no descriptor.
        as_worker_user /usr/bin/python3 -c "$CLIENT" --fds 4 "" >/dev/null
        as_worker_user /usr/bin/python3 -c "$CLIENT" --fds 4 00 >/dev/null
        as_worker_user /usr/bin/python3 -c "$CLIENT" --fds 4 "336b627305000000$(printf '%0424d' 0)" >/dev/null
    done
    after=$(in_systemd ls "/proc/$broker/fd" | wc -l)
    [ "$after" -le "$before" ] || { echo "broker descriptors: $before before, $after after" >&2; false; }
    execute '{"code":"print(\"still up\")"}'
    expect_status 200
}
