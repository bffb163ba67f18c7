#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Nothing left behind, nothing kept past its right, nothing shared: sessions' disks are root's only,
# every running machine has a UID range of its own, the pool manager's sweep removes what no row
# owns (at its start and on SIGHUP), a revoked key's sessions are paused, and what a process killed
# mid-operation leaves is found. Each "gone" is first shown to have been there.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

SANDBOXCTL=${SANDBOXCTL:-/usr/local/sbin/sandboxctl}
SESSION_DIR=/var/lib/sandboxd/sessions

setup_file() {
    require_stack
}

setup() {
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
}

teardown() {
    local id
    # Whatever a test stopped runs again; keys off, so that any session may be deleted.
    in_systemd systemctl kill -s CONT sandboxd-broker.service >/dev/null 2>&1 || true
    in_systemd systemctl start sandboxd-broker.socket >/dev/null 2>&1 || true
    if clear_settings zz-cleanup; then
        wait_up
    fi
    while read -r id; do
        chattr -i "$SESSION_DIR/$id.img" 2>/dev/null || true
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
    done <"$created"
}


# session_new [TOKEN]: a new session, its id in $sid (deleted after the test).
session_new() {
    local -a auth=()
    [ -z "${1:-}" ] || auth=(-H "Authorization: Bearer $1")
    body=$(curl -s -w '\n%{http_code}' -X POST "${auth[@]}" "$SANDBOXD_URL/v1/sessions")
    code=${body##*$'\n'}
    body=${body%$'\n'*}
    [ "$code" = 201 ] || { echo "session create: $code $body" >&2; return 1; }
    sid=$(jq -r .session_id <<<"$body")
    echo "$sid" >>"$created"
}

# unit_active UNIT: systemd has it active.
unit_active() {
    [ "$(in_systemd systemctl show -P ActiveState "$1")" = active ]
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

# disk_mounted ID: the session's disk is mounted where the broker mounts it.
disk_mounted() {
    local mounts
    mounts=$(in_systemd findmnt -rn -o TARGET)
    grep -x "/run/sandboxd/disks/${1#session-}" <<<"$mounts" >/dev/null
}

# uid_reserved OWNER: the broker holds a UID range for that unit id.
uid_reserved() {
    [ -n "$(find "$SESSION_DIR/uid-ranges" -maxdepth 1 -type l -lname "$1")" ]
}

# sweep_now: the pool manager's sweep, at once (SIGHUP).
sweep_now() {
    in_systemd systemctl kill -s HUP sandboxd-poold.service
}

# swept_entry KIND ID: the sweep's journal entry for a session or a machine, if written yet.
swept_entry() {
    if [ "$1" = session ]; then
        in_systemd journalctl -q -o json SESSION_EVENT=swept "SESSION_ID=$2" 2>/dev/null | tail -n 1
    else
        in_systemd journalctl -q -o json POOL_EVENT=swept "MACHINE_ID=$2" 2>/dev/null | tail -n 1
    fi
}

# all_gone ID: nothing of session ID is left on the host (machine, mount, disk, UID range), within 10 s.
all_gone() {
    for _ in $(seq 100); do
        if [ "$(in_systemd systemctl show -P ActiveState "$1.service")" != active ] && ! disk_mounted "$1" &&
            [ ! -e "$SESSION_DIR/$1.img" ] && ! uid_reserved "$1"; then
            return 0
        fi
        sleep 0.1
    done
    echo "left of $1: unit $(in_systemd systemctl show -P ActiveState "$1.service"), image $(ls "$SESSION_DIR/$1.img" 2>&1)," \
        "range $(find "$SESSION_DIR/uid-ranges" -maxdepth 1 -lname "$1")" >&2
    return 1
}

# The container's first process of a machine unit (nspawn's child), and its UID map's host range.
machine_uid_map() {
    local main child
    main=$(in_systemd systemctl show -P MainPID "$1")
    [ "$main" -gt 0 ] || { echo "$1 has no main process" >&2; return 1; }
    for child in $(in_systemd pgrep -P "$main"); do
        in_systemd cat "/proc/$child/uid_map"
        return 0
    done
    echo "$1: nspawn has no child" >&2
    return 1
}

@test "a session's disk is mounted where only root may go: another account of the host cannot read it" {
    session_new
    api POST "/v1/sessions/$sid/run" '{"language": "python", "code": "open(\"secret.txt\", \"w\").write(\"tenant data\")"}'
    expect_status 200
    where="/run/sandboxd/disks/${sid#session-}"
    # Positive control: the file is there, and root reads it.
    disk_mounted "$sid"
    [ "$(in_systemd cat "$where/secret.txt")" = "tenant data" ]
    [ "$(in_systemd stat -c '%a %U' /run/sandboxd/disks)" = "700 root" ]
    [ "$(stat -c '%a %U' "$SESSION_DIR")" = "700 root" ]
    # Any other account: refused at the directory, by name or by listing.
    run in_systemd setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$where/secret.txt"
    [ "$status" -ne 0 ]
    [[ $output == *"Permission denied"* ]]
    run in_systemd setpriv --reuid=nobody --regid=nogroup --clear-groups ls /run/sandboxd/disks
    [ "$status" -ne 0 ]
    run setpriv --reuid=nobody --regid=nogroup --clear-groups ls "$SESSION_DIR"
    [ "$status" -ne 0 ]
}

@test "no two running machines share a UID range: two sessions and an execution machine, read from their uid_map" {
    session_new
    a=$sid
    session_new
    b=$sid
    wait_pool_full
    m=$(db "SELECT machine_id FROM pool WHERE state = 'ready' LIMIT 1")
    [ -n "$m" ]
    maps=""
    for u in "$a" "$b" "$m"; do
        map=$(machine_uid_map "$u.service")
        # Positive control: a user namespace of 65536 UIDs, not the host's identity map.
        read -r inside host count <<<"$map"
        [ "$inside" = 0 ] && [ "$count" = 65536 ] && [ "$host" -ge 524288 ] || { echo "$u: $map" >&2; false; }
        # And the range the broker holds for it is that one.
        [ "$(readlink "$SESSION_DIR/uid-ranges/$(printf '%08x' "$host")")" = "$u" ]
        maps+="$host $u"$'\n'
    done
    # Ranges of 65536 from distinct multiples of 65536 never overlap: distinct starts suffice.
    [ "$(awk 'NF { print $1 }' <<<"$maps" | sort -u | wc -l)" = 3 ] || { echo "$maps" >&2; false; }
    # A machine's range is given up with its unit: every range held by a machine is a running unit's.
    # A range is reserved just before its unit is made, so one whose unit is not there yet is looked
    # at again: only a range that stays without a unit for 10 s is a leak.
    for _ in $(seq 20); do
        leaks=""
        for l in "$SESSION_DIR"/uid-ranges/*; do
            [ -L "$l" ] || continue
            owner=$(readlink "$l")
            case $owner in
            machine-* | tool-*)
                if [ "$(in_systemd systemctl show -P ActiveState "$owner.service")" = inactive ]; then
                    leaks+="$owner holds ${l##*/} but its unit is gone"$'\n'
                fi
                ;;
            esac
        done
        [ -n "$leaks" ] || break
        sleep 0.5
    done
    [ -z "$leaks" ] || { echo "$leaks" >&2; false; }
}

@test "/metrics answers a loopback scraper only: 127.0.0.1 gets the figures, another address a 403" {
    # Positive control: from 127.0.0.1, the figures.
    body=$(curl -s -w '\n%{http_code}' "$SANDBOXD_URL/metrics")
    [ "${body##*$'\n'}" = 200 ]
    grep '^sandboxd_http_requests_total' <<<"$body" >/dev/null
    # From 127.0.0.2 (still loopback, but not an allowed address): refused by nginx, in JSON.
    body=$(curl -s --interface 127.0.0.2 -w '\n%{http_code}' "$SANDBOXD_URL/metrics")
    [ "${body##*$'\n'}" = 403 ]
    [ "$(jq -r .error <<<"${body%$'\n'*}")" = forbidden ]
    # The API itself is not limited that way (a positive control for the address).
    [ "$(curl -s --interface 127.0.0.2 -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/v1/pool")" = 200 ]
}

@test "a deleted session whose disk could not be removed is removed by the sweep once it can be" {
    session_new
    [ -f "$SESSION_DIR/$sid.img" ]
    # The broker cannot remove an immutable file: the delete answers, but the disk stays.
    chattr +i "$SESSION_DIR/$sid.img"
    api DELETE "/v1/sessions/$sid"
    expect_status 200
    unit_gone "$sid.service"
    [ -f "$SESSION_DIR/$sid.img" ]
    uid_reserved "$sid"
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = deleted ]
    # A sweep while it still cannot: still there, and it says so.
    sweep_now
    poll in_systemd journalctl -q -o cat -u sandboxd-poold.service --grep "remove what is left of session '$sid'" >/dev/null
    [ -f "$SESSION_DIR/$sid.img" ]
    # Once it can, the next sweep removes the disk and the UID range, and logs it.
    chattr -i "$SESSION_DIR/$sid.img"
    sweep_now
    all_gone "$sid"
    entry=$(poll swept_entry session "$sid")
    [[ $(jq -r .DETAIL <<<"$entry") == *disk* ]]
}

@test "the sweep at the pool manager's start removes a session and a machine that have no row" {
    session_new
    # An orphan session: its row gone while its machine runs (as a crash between two steps leaves).
    unit_active "$sid.service"
    disk_mounted "$sid"
    db "DELETE FROM session_queue WHERE session_id = '$sid'; DELETE FROM sessions WHERE session_id = '$sid'"
    # An orphan machine: a machine-* unit nobody recorded.
    orphan=machine-zzzzzzzzzzzz
    in_systemd systemd-run -q --unit="$orphan.service" --slice=sandbox.slice sleep 600
    unit_active "$orphan.service"
    [ -z "$(db "SELECT 1 FROM pool WHERE machine_id = '$orphan'")" ]

    in_systemd systemctl restart sandboxd-poold.service
    unit_gone "$orphan.service"
    all_gone "$sid"
    poll swept_entry session "$sid" >/dev/null
    poll swept_entry machine "$orphan" >/dev/null
    wait_pool_full
}

@test "a revoked key's active sessions are paused, and its requests get 401" {
    with_settings zz-cleanup SANDBOXD_API_KEYS=on
    wait_up
    kname="bats-cleanup-$(date +%s)-$$"
    token=$("$SANDBOXCTL" key add "$kname")
    [[ $token =~ ^sbx_ ]]
    session_new "$token"
    # Positive control: in force, the key runs in its session, which stays active.
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'content-type: application/json' \
        -X POST "$SANDBOXD_URL/v1/sessions/$sid/run" --data-binary '{"language": "python", "code": "print(1)"}')
    [ "$code" = 200 ]
    sleep 2
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = active ]

    "$SANDBOXCTL" key revoke "$kname"
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$SANDBOXD_URL/v1/sessions/$sid")" = 401 ]
    for _ in $(seq 50); do
        [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = paused ] && break
        sleep 0.1
    done
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = paused ]
    unit_gone "$sid.service"
    [ -n "$(db "SELECT 1 FROM session_events WHERE session_id = '$sid' AND event = 'revoke'")" ]
}

@test "broker and worker killed (-9) in the middle of a delete: what they left is shown, then swept" {
    session_new
    unit_active "$sid.service"
    # The broker stopped, the delete reaches the worker, which marks the row and waits on the broker.
    in_systemd systemctl kill -s STOP sandboxd-broker.service
    curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$sid" &
    for _ in $(seq 50); do
        [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = deleted ] && break
        sleep 0.1
    done
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = deleted ]
    # The session is written into the request's row when it is answered: the one in flight is it.
    worker=$(db "SELECT worker_pid FROM requests WHERE route LIKE 'DELETE %' AND status IS NULL")
    [ -n "$worker" ]
    in_systemd kill -9 "$worker"
    in_systemd systemctl kill -s KILL sandboxd-broker.service
    # The delete dies with them: no broker may find it queued on its socket when it comes back.
    in_systemd systemctl stop sandboxd-broker.socket
    wait
    # What they left: the machine, its mount, its disk and its UID range, with no live row.
    unit_active "$sid.service"
    disk_mounted "$sid"
    [ -f "$SESSION_DIR/$sid.img" ]
    uid_reserved "$sid"
    # The broker back, the sweep removes all of it (the broker asks for one as it starts; this one
    # would do too).
    in_systemd systemctl start sandboxd-broker.socket sandboxd-broker.service
    sweep_now
    all_gone "$sid"
    poll swept_entry session "$sid" >/dev/null
}

@test "a worker killed (-9) in the middle of a create: the stop leaves nothing running, mounted or looped" {
    in_systemd systemctl kill -s STOP sandboxd-broker.service
    curl -s -o /dev/null -X POST "$SANDBOXD_URL/v1/sessions" &
    # The create holds its session's first turn while it waits on the broker: its row is made, its
    # request in flight.
    for _ in $(seq 50); do
        cid=$(db "SELECT session_id FROM sessions WHERE state = 'active' AND up = 0 ORDER BY created_at DESC LIMIT 1")
        [ -n "$cid" ] && break
        sleep 0.1
    done
    [ -n "$cid" ]
    echo "$cid" >>"$created"
    worker=$(db "SELECT worker_pid FROM requests WHERE route = 'POST /v1/sessions' AND status IS NULL")
    in_systemd kill -9 "$worker"
    wait
    # The broker goes on with the create nobody waits for any more: a machine and a mount, left.
    in_systemd systemctl kill -s CONT sandboxd-broker.service
    for _ in $(seq 100); do unit_active "$cid.service" && break; sleep 0.1; done
    unit_active "$cid.service"
    disk_mounted "$cid"
    # The stop ends every process, mount and loop device of sandboxd's.
    "$SANDBOXD_HOST" down
    run "$BATS_TEST_DIRNAME/../check-down"
    echo "$output"
    [ "$status" -eq 0 ]
    without_fds "$SANDBOXD_HOST" up
    for _ in $(seq 300); do curl -s -o /dev/null "$SANDBOXD_URL/v1/pool" && break; sleep 0.1; done
    wait_pool_full
}

@test "the broker's session list (what the sweep reads) takes no id, and SESSION_DELETE only a session's" {
    client=$(cat "$BATS_TEST_DIRNAME/broker-client.py")
    session_new
    # Positive control: the workers' user gets the list.
    run in_systemd setpriv --reuid=sandboxd --regid=sandboxd --clear-groups /usr/bin/python3 -c "$client" session-list ""
    [ "$status" -eq 0 ]
    [ "$(jq .error <<<"$output")" -eq 0 ]
    for id in "$sid" "../../etc" "machine-abcdefghijkl"; do
        run in_systemd setpriv --reuid=sandboxd --regid=sandboxd --clear-groups /usr/bin/python3 -c "$client" session-list "$id"
        [ "$(jq .error <<<"$output")" -eq -22 ]
    done
    for id in "machine-abcdefghijkl" "session-ABCDEFGHIJKL" "session-abc/../../x" "sandbox-api"; do
        run in_systemd setpriv --reuid=sandboxd --regid=sandboxd --clear-groups /usr/bin/python3 -c "$client" session-delete "$id"
        [ "$(jq .error <<<"$output")" -eq -22 ]
    done
    # Anyone else is hung up on.
    run in_systemd setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c "$client" session-list ""
    [ "$output" = '{"closed": true}' ]
    unit_active "$sid.service"
}

# without_fds CMD...: CMD with no descriptor of ours but stdin, stdout and stderr, all /dev/null.
without_fds() {
    (
        for fd in "/proc/$BASHPID/fd/"*; do
            fd=${fd##*/}
            [ "$fd" -gt 2 ] && eval "exec $fd>&-"
        done
        exec "$@" </dev/null >/dev/null 2>&1
    )
}
