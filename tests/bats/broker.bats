#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The broker serves every client at once: a slow operation on one connection (a session's disk being
# formatted) holds up no other (a kill, the list of units). And its clients wait for it with a
# deadline: one that does not answer is given up on. The format is made slow by a test-only
# setting of the broker's own environment (SANDBOXD_TEST_DISK_FORMAT_DELAY_S): the format unit
# sleeps first, so that the broker waits on systemd's job as it does for a real, slow format.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

CLIENT=$(cat "$BATS_TEST_DIRNAME/broker-client.py")
# sandbox_wait_gone() on its own against this systemd (tests/bus/wait-gone.c, built by make).
WAIT_GONE="$BATS_TEST_DIRNAME/../../build/tests/wait-gone"
# How long the format waits: well past what a kill or a list takes.
DELAY_S=10

setup_file() {
    require_stack
}

setup() {
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
}

teardown() {
    local id
    if [ -n "${broker_stopped:-}" ]; then
        in_systemd systemctl kill -s CONT sandboxd-broker.service
        broker_stopped=
    fi
    wait
    if clear_settings zz-broker; then
        wait_up
    fi
    while read -r id; do
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
    done <"$created"
}

as_worker_user() {
    in_systemd setpriv --reuid=sandboxd --regid=sandboxd --clear-groups "$@"
}


# formatting: a session's disk format unit is there (waiting, or formatting).
formatting() {
    [ -n "$(in_systemd systemctl list-units --all --plain --no-legend 'sandboxd-disk-*' | awk '$3 == "active" || $3 == "activating"')" ]
}

not_formatting() {
    if formatting; then
        echo "a session's disk is being formatted" >&2
        return 1
    fi
}

# unit_gone UNIT: systemd has it no more (or inactive), within 10 s.
unit_gone() {
    local state
    for _ in $(seq 100); do
        state=$(in_systemd systemctl show -P ActiveState "$1")
        [ "$state" = inactive ] || [ "$state" = failed ] && return 0
        sleep 0.1
    done
    echo "$1 is still $state" >&2
    return 1
}

# list_errors: how many of the broker's list calls failed, as GET /metrics counts them.
list_errors() {
    curl -s "$SANDBOXD_URL/metrics" | awk '$1 == "sandboxd_broker_errors_total{operation=\"list\"}" { v = $2 } END { print v + 0 }'
}

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

@test "a kill and a list are answered while another connection's session disk is being formatted" {
    with_settings zz-broker "SANDBOXD_TEST_DISK_FORMAT_DELAY_S=$DELAY_S"
    wait_up
    wait_pool_full
    # A warm machine to kill: it runs.
    machine=$(db "SELECT machine_id FROM pool WHERE state = 'ready' LIMIT 1")
    [ -n "$machine" ]
    [ "$(in_systemd systemctl show -P ActiveState "$machine.service")" = active ]
    not_formatting

    # A session's creation: its worker asks the broker, which formats its disk first.
    start=$(now_ms)
    curl -s -o "$BATS_TEST_TMPDIR/create" -w '%{http_code}' -X POST "$SANDBOXD_URL/v1/sessions" >"$BATS_TEST_TMPDIR/create.code" &
    for _ in $(seq 100); do
        formatting && break
        sleep 0.1
    done
    formatting

    # Meanwhile, on connections of their own: the kill and the list, each answered at once.
    t0=$(now_ms)
    run as_worker_user /usr/bin/python3 -c "$CLIENT" kill "$machine"
    t1=$(now_ms)
    [ "$status" -eq 0 ]
    [ "$(jq .error <<<"$output")" -eq 0 ]
    run as_worker_user /usr/bin/python3 -c "$CLIENT" list ""
    t2=$(now_ms)
    [ "$status" -eq 0 ]
    [ "$(jq .error <<<"$output")" -eq 0 ]
    echo "kill answered in $((t1 - t0)) ms, list in $((t2 - t1)) ms, during the format" >&3
    [ $((t1 - t0)) -lt 3000 ]
    [ $((t2 - t1)) -lt 3000 ]
    # The format was still going when both had their answers, and the machine is gone.
    formatting
    unit_gone "$machine.service"

    # The create had to wait for its format, and then succeeded.
    wait
    end=$(now_ms)
    [ "$(cat "$BATS_TEST_TMPDIR/create.code")" = 201 ]
    jq -r .session_id "$BATS_TEST_TMPDIR/create" >>"$created"
    echo "the create took $((end - start)) ms" >&3
    [ $((end - start)) -ge $((DELAY_S * 1000)) ]
    not_formatting
}

@test "without the test setting, a session's disk is formatted at once" {
    # Positive control of the setting above: off by default, the format is not held back.
    start=$(now_ms)
    body=$(curl -s -w '\n%{http_code}' -X POST "$SANDBOXD_URL/v1/sessions")
    end=$(now_ms)
    [ "${body##*$'\n'}" = 201 ]
    jq -r .session_id <<<"${body%$'\n'*}" >>"$created"
    [ $((end - start)) -lt $((DELAY_S * 1000)) ]
}

@test "a broker that does not answer is given up on at the deadline, and served again once it answers" {
    wait_pool_full
    before=$(list_errors)
    # Positive control: the broker answers a list now.
    run as_worker_user /usr/bin/python3 -c "$CLIENT" list ""
    [ "$(jq .error <<<"$output")" -eq 0 ]
    # Stopped, it takes connections and requests (the kernel queues them) but answers none. The pool
    # manager lists the units when it sweeps, at once on SIGHUP.
    in_systemd systemctl kill -s STOP sandboxd-broker.service
    broker_stopped=1
    start=$(now_ms)
    in_systemd systemctl kill -s HUP sandboxd-poold.service
    for _ in $(seq 400); do
        [ "$(list_errors)" -gt "$before" ] && break
        sleep 0.1
    done
    end=$(now_ms)
    in_systemd systemctl kill -s CONT sandboxd-broker.service
    broker_stopped=
    [ "$(list_errors)" -gt "$before" ]
    # Given up at the list's deadline (10 s): not before, and not never. The pool manager writes
    # its counts down once its sweep is over, after its session list's deadline too (20 s measured).
    echo "the pool manager's failed list was counted after $((end - start)) ms" >&3
    [ $((end - start)) -ge 9000 ]
    [ $((end - start)) -lt 40000 ]
    # The broker answers again, and the pool manager is not stuck: the pool is full again.
    run as_worker_user /usr/bin/python3 -c "$CLIENT" list ""
    [ "$(jq .error <<<"$output")" -eq 0 ]
    wait_pool_full
}

# calls_sent CMD...: how many messages CMD wrote to its sockets (sendmsg, writev and write calls).
calls_sent() {
    in_systemd strace -f -c -e trace=sendmsg,writev,write "$@" 2>&1 >/dev/null | awk '$NF == "total" { print $4 }'
}

@test "the wait for a unit's end is told by systemd: it returns when the unit ends, at its deadline otherwise, and sends no poll" {
    [ -x "$WAIT_GONE" ] || { echo "$WAIT_GONE is not built (make)" >&2; false; }
    run in_systemd "$WAIT_GONE" all
    printf '# %s\n' "${lines[@]}" >&3
    [ "$status" -eq 0 ]
    [ "$(grep -c '^ok' <<<"$output")" -eq 7 ]
    # Waiting 1 s for a unit's end: the matches, the subscription, one look and the start cost a
    # dozen or so messages; a look every 20 ms sent two calls each time, about a hundred.
    sent=$(calls_sent "$WAIT_GONE" ends)
    echo "messages sent while waiting 1 s for a unit's end: $sent" >&3
    [ "$sent" -gt 0 ]
    [ "$sent" -lt 40 ]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'sandboxd-test-wait-*')" ]
}

