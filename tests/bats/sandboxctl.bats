#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sandboxctl, as installed, against the running stack: each verb's output against what the API,
# systemd, the journal and the database say, its usage errors, and its errors when the service
# cannot be reached.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

SANDBOXCTL=${SANDBOXCTL:-/usr/local/sbin/sandboxctl}
MAN8=${MAN8:-/usr/local/share/man/man8/sandboxctl.8}
VERBS="status sessions machines run logs"

setup_file() {
    require_stack
    [ -x "$SANDBOXCTL" ] || { echo "$SANDBOXCTL is not installed (make install)" >&2; return 1; }
}

setup() {
    export SANDBOXD_URL
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
}

teardown() {
    local id
    while read -r id; do
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
    done <"$created"
    settings_restore
    expect_no_leftovers
}

ctl() {
    "$SANDBOXCTL" "$@"
}

# ctl_files ARGS...: sandboxctl's stdout in $out, stderr in $err (files, byte for byte), its exit
# status in $rc.
ctl_files() {
    out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/err"
    rc=0
    "$SANDBOXCTL" "$@" >"$out" 2>"$err" || rc=$?
}

# A new session through the API, its id in $sid (deleted after the test).
session_new() {
    api POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >>"$created"
}

# The audit entry of request $1, as sandboxctl logs --json shows it, once the journal has it.
ctl_logs_now() {
    "$SANDBOXCTL" logs --json "$1" 2>/dev/null | jq -c 'select(.usage != null)'
}

@test "--help: sandboxctl and each verb say how they are used, and the man page is installed with every verb" {
    run ctl --help
    [ "$status" -eq 0 ]
    top=$output
    for v in $VERBS; do
        grep -q "^  $v " <<<"$top" || { echo "sandboxctl --help does not list $v: $top" >&2; return 1; }
        run ctl "$v" --help
        [ "$status" -eq 0 ]
        [[ ${lines[0]} == "Usage: sandboxctl $v"* ]] || { echo "$v --help: $output" >&2; return 1; }
    done

    [ -f "$MAN8" ]
    page=$(MANWIDTH=100 man -l "$MAN8" 2>/dev/null)
    for s in $VERBS key "EXIT STATUS" ENVIRONMENT; do
        grep -q "^ *$s" <<<"$page" || { echo "the man page has no section '$s'" >&2; return 1; }
    done
    [ -z "$(groff -man -ww -z "$MAN8" 2>&1)" ]
}

@test "bad arguments: exit 2 and a message naming the fault" {
    check_usage() {
        local want=$1
        shift
        run ctl "$@"
        [ "$status" -eq 2 ] || { echo "sandboxctl $*: exit $status, not 2: $output" >&2; return 1; }
        [[ $output == *"$want"* ]] || { echo "sandboxctl $*: '$output' does not say '$want'" >&2; return 1; }
    }
    check_usage "unknown verb 'frob'" frob
    check_usage "Usage: sandboxctl" --frob status
    check_usage "Usage: sandboxctl"
    check_usage "is not a URL sandboxctl can use" --url ftp://127.0.0.1 status
    check_usage "is not a URL sandboxctl can use" --url http://127.0.0.1:99999 status
    for v in $VERBS; do
        check_usage "sandboxctl $v --help" "$v" --frob
    done
    check_usage "no arguments expected" status extra
    check_usage "no arguments expected" machines extra
    check_usage "unknown subcommand 'frob'" sessions frob
    check_usage "rm needs the id of a session" sessions rm
    check_usage "is not a session id" sessions rm ../pool
    check_usage "one FILE" run
    check_usage "one FILE" run a.py b.py
    check_usage "--timeout takes a number of seconds" run --timeout soon a.py
    check_usage "is not a request id" logs 1234
    check_usage "one request id at most" logs 0123456789abcdef0123456789abcdef 0123456789abcdef0123456789abcdef
    check_usage "-n takes a number" logs -n 0
    check_usage "-n takes a number" logs -n -5
}

@test "an unreachable service: a clear error and exit 1, whatever the verb" {
    # Port 1 on loopback: nothing listens there, as with a stopped service.
    for args in "status" "sessions" "sessions rm session-aaaaaaaaaaaa" "run -"; do
        # shellcheck disable=SC2086 # the verb and its arguments, split
        run ctl --url http://127.0.0.1:1 $args </dev/null
        [ "$status" -eq 1 ] || { echo "$args: exit $status: $output" >&2; return 1; }
        [[ $output == *"sandboxctl: cannot connect to 127.0.0.1 port 1: Connection refused"* ]] || { echo "$args: $output" >&2; return 1; }
    done
    run ctl --url 'http://[::1]:1' sessions
    [ "$status" -eq 1 ]
    [[ $output == *"cannot connect to ::1 port 1"* ]]
    run ctl --url http://no-such-host.invalid sessions
    [ "$status" -eq 1 ]
    [[ $output == *"cannot resolve 'no-such-host.invalid'"* ]]
    # Positive control: the same verb reaches the service by its name as well as its address.
    run ctl --url "http://localhost:$(listen_port)" sessions
    [ "$status" -eq 0 ]
}

@test "run: the snippet's stdout and stderr byte for byte, as the API returns them, and its exit code" {
    f="$BATS_TEST_TMPDIR/job.py"
    printf '%s\n' 'import sys' 'sys.stdout.write("out: caf\u00e9\n\tno newline at the end")' \
        'sys.stderr.write("err line 1\nerr line 2")' 'sys.exit(3)' >"$f"
    ctl_files run "$f"
    [ "$rc" -eq 3 ]

    api POST /v1/execute "$(jq -n --rawfile code "$f" '{code: $code}')"
    expect_status 200
    jq -j .stdout <<<"$body" | cmp - "$out"
    jq -j .stderr <<<"$body" | cmp - "$err"
    [ "$(cat "$out")" = "$(printf 'out: caf\u00e9\n\tno newline at the end')" ]

    # A death by signal reads 128+N, as from a shell.
    printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' >"$f"
    ctl_files run "$f"
    [ "$rc" -eq 137 ]
    # And success is 0, from standard input.
    ctl_files run - <<<'print("from stdin")'
    [ "$rc" -eq 0 ]
    [ "$(cat "$out")" = "from stdin" ]
    [ ! -s "$err" ]
}

@test "run: the language from the extension, or --language" {
    d=$BATS_TEST_TMPDIR
    echo 'console.log(typeof process.versions.node)' >"$d/a.js"
    # shellcheck disable=SC2016 # the snippet's $, for its bash to expand
    echo 'echo "bash ${BASH_VERSINFO[0]}"; exit 4' >"$d/a.sh"
    echo 'print("python", 1 + 1)' >"$d/a.txt"
    run ctl run "$d/a.js"
    [ "$status" -eq 0 ]
    [ "$output" = string ]
    run ctl run "$d/a.sh"
    [ "$status" -eq 4 ]
    [ "$output" = "bash 5" ]
    run ctl run "$d/a.txt"
    [ "$status" -eq 0 ]
    [ "$output" = "python 2" ]
    cp "$d/a.sh" "$d/b.py"
    run ctl run --language bash "$d/b.py"
    [ "$status" -eq 4 ]
    [ "$output" = "bash 5" ]
}

@test "run: a timeout, a refusal and a missing file are errors, not the snippet's output" {
    ctl_files run --timeout 1 - <<<'import time; time.sleep(30)'
    [ "$rc" -eq 124 ]
    [ "$(cat "$err")" = "sandboxctl: timed out after 1s" ]
    [ ! -s "$out" ]

    run ctl run --language cobol - <<<'DISPLAY "HI".'
    [ "$status" -eq 1 ]
    [ "$output" = 'sandboxctl: 400 unsupported language "cobol"' ]

    run ctl run "$BATS_TEST_TMPDIR/none.py"
    [ "$status" -eq 1 ]
    [[ $output == "sandboxctl: cannot open '$BATS_TEST_TMPDIR/none.py': No such file or directory" ]]

    printf 'print(1)\n\xff\n' >"$BATS_TEST_TMPDIR/bin.py"
    run ctl run "$BATS_TEST_TMPDIR/bin.py"
    [ "$status" -eq 1 ]
    [[ $output == *"is not UTF-8 text"* ]]
}

@test "run --json: the API's answer with its request id; -v names the request" {
    run ctl run --json - <<<'print(7 * 6)'
    [ "$status" -eq 0 ]
    [ "$(jq -r .stdout <<<"$output")" = 42 ]
    [[ $(jq -r .request_id <<<"$output") =~ ^[0-9a-f]{32}$ ]]
    [[ $(jq -r .sandbox_id <<<"$output") =~ ^sandbox- ]]

    ctl_files run -v - <<<'print("v")'
    [ "$rc" -eq 0 ]
    [ "$(cat "$out")" = v ]
    grep -Eq '^sandboxctl: request [0-9a-f]{32}: sandbox sandbox-[a-z2-7]{12}, [0-9]+ ms, exit 0$' "$err"
}

@test "logs ID: the request's journal entries and what it cost, as the journal has them" {
    ctl_files run -v - <<<'x = sum(range(10**6)); print(x)'
    [ "$rc" -eq 0 ]
    id=$(sed -nE 's/^sandboxctl: request ([0-9a-f]{32}):.*/\1/p' "$err")
    [ -n "$id" ]
    entry=$(journal_entry "$id")
    poll ctl_logs_now "$id" >/dev/null

    # Every field of the audit entry that measures its cost is in "usage", with its value.
    logs=$(ctl logs --json "$id")
    [ "$(jq -r .request_id <<<"$logs")" = "$id" ]
    n=0
    for f in $(jq -r 'keys[] | select(test("^[A-Z].*(_MS|_USEC|_NSEC|_BYTES)$"))' <<<"$entry"); do
        want=$(jq -r ".$f" <<<"$entry")
        got=$(jq -r ".usage.${f,,}" <<<"$logs")
        [ "$got" = "$want" ] || { echo "usage $f: sandboxctl says '$got', the journal '$want'" >&2; return 1; }
        n=$((n + 1))
    done
    [ "$n" -ge 2 ] # DURATION_MS and the CPU time at least
    [ "$(jq -r .usage.duration_ms <<<"$logs")" = "$(jq -r .DURATION_MS <<<"$entry")" ]

    # The same for people: the audit entry's line, its fields, and a usage line.
    run ctl logs "$id"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "request $id" ]
    grep -q "  info     POST /v1/execute $id: 200$" <<<"$output"
    for kv in status=200 exit_code=0 "machine_id=$(jq -r .MACHINE_ID <<<"$entry")" "sandbox_id=$(jq -r .SANDBOX_ID <<<"$entry")"; do
        grep -Eq "^    (.* )?$kv( |$)" <<<"$output" || { echo "logs $id does not say $kv: $output" >&2; return 1; }
    done
    grep -Eq "^    usage: .*duration_ms=$(jq -r .DURATION_MS <<<"$entry")( |$)" <<<"$output"

    # An id no request has had: drawn at random, as a fixed one may have been sent by hand.
    unknown=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    run ctl logs "$unknown"
    [ "$status" -eq 1 ]
    [ "$output" = "sandboxctl: no journal entry for request $unknown" ]
}

@test "logs: the last requests' audit entries, newest last, as the journal lists them" {
    api GET /v1/pool
    expect_status 200
    last=$rid
    journal_entry "$last" >/dev/null
    # Other requests may be answered meanwhile (the pool manager makes none; a test's own might):
    # ours is among the last few.
    run ctl logs -n 5
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 6 ]
    [[ ${lines[0]} == TIME* ]]
    grep -Eq "^[0-9-]{10} [0-9:]{8}  $last  200     GET /v1/pool " <<<"$output"

    json=$(ctl logs -n 5 --json)
    [ "$(jq length <<<"$json")" -eq 5 ]
    want=$(in_systemd journalctl -q -o json -n 5 MESSAGE_ID=8c2f1d5e6a3b4c7d9e0f1a2b3c4d5e6f | jq -r .REQUEST_ID)
    [ "$(jq -r '.[].REQUEST_ID' <<<"$json")" = "$want" ]
}

@test "status: says which services run with settings older than sandboxd.conf, what to run, and not once they are applied" {
    settings_save
    run ctl status
    [ "$status" -eq 0 ]
    grep -qx "settings:  as in $SETTINGS_FILE" <<<"$output"

    # A setting only a restart applies: first the file is not read, then the setting waits.
    echo SANDBOXD_POOL_TTL_S=601 >>"$SETTINGS_FILE"
    run ctl status
    [ "$status" -eq 0 ]
    grep -qx "settings:  $SETTINGS_FILE changed since sandbox-api.service, sandboxd-broker.service, sandboxd-poold.service read it: run systemctl reload sandboxd.target" <<<"$output"
    run ctl status --json
    [ "$(jq -c .settings.reload <<<"$output")" = '["sandbox-api.service","sandboxd-broker.service","sandboxd-poold.service"]' ]

    in_systemd systemctl reload sandboxd.target
    run ctl status
    [ "$status" -eq 0 ]
    grep -qx "settings:  sandbox-api.service runs without SANDBOXD_POOL_TTL_S of $SETTINGS_FILE, which only a restart applies: run systemctl restart sandboxd.target" <<<"$output"
    run ctl status --json
    [ "$(jq -c .settings.restart <<<"$output")" = '{"sandbox-api.service":"SANDBOXD_POOL_TTL_S","sandboxd-broker.service":"SANDBOXD_POOL_TTL_S","sandboxd-poold.service":"SANDBOXD_POOL_TTL_S"}' ]

    in_systemd systemctl restart sandboxd.target
    wait_up
    run ctl status
    [ "$status" -eq 0 ]
    grep -qx "settings:  as in $SETTINGS_FILE" <<<"$output"
    run ctl status --json
    [ "$(jq -c '[.settings.reload, .settings.restart]' <<<"$output")" = '[[],{}]' ]
}

@test "sessions: lists what GET /v1/sessions lists, and rm deletes one" {
    session_new
    run ctl sessions
    [ "$status" -eq 0 ]
    grep -Eq "^$sid +active " <<<"$output" # the positive control: it is listed
    [ "$(ctl sessions --json | jq -S .)" = "$(curl -s "$SANDBOXD_URL/v1/sessions" | jq -S .)" ]

    run ctl sessions rm "$sid"
    [ "$status" -eq 0 ]
    [ "$output" = "$sid: deleted" ]
    api GET "/v1/sessions/$sid"
    expect_error 404 "session not found"
    run ctl sessions
    [ "$status" -eq 0 ]
    if grep -q "^$sid " <<<"$output"; then
        echo "still listed after rm: $output" >&2
        return 1
    fi

    run ctl sessions rm "$sid"
    [ "$status" -eq 1 ]
    [ "$output" = "sandboxctl: 404 session not found" ]
}

@test "machines: the machines the pool and systemd say exist, with what the pool records of each" {
    wait_pool_full
    session_new
    # The pool moves on its own (a machine retires, another starts): the two reads are compared
    # once the pool holds still between them.
    for _ in $(seq 20); do
        json=$(ctl machines --json)
        warm=$(pool_field warm)
        all_active=1
        for id in $(jq -r '.[] | select(.kind == "pool") | .id' <<<"$json"); do
            [ "$(in_systemd systemctl is-active "$id.service")" = active ] || all_active=0
        done
        if [ "$all_active" = 1 ] && [ "$(jq '[.[] | select(.state == "idle")] | length' <<<"$json")" = "$warm" ]; then
            break
        fi
        sleep 0.5
    done

    # Every machine the pool records, with its state, language and executions as recorded.
    rows=$(db "SELECT machine_id, state, prepared, executions FROM pool ORDER BY machine_id")
    [ -n "$rows" ]
    while IFS='|' read -r id state prepared executions; do
        m=$(jq -c --arg id "$id" '.[] | select(.id == $id)' <<<"$json")
        [ -n "$m" ] || { echo "machines does not list $id" >&2; return 1; }
        [ "$(jq -r '[.kind, .pool_state, .prepared, .executions] | join(" ")' <<<"$m")" = "pool $state $prepared $executions" ]
    done <<<"$rows"
    # As many idle as the pool says are warm, and each is a running unit using memory.
    [ "$(jq '[.[] | select(.state == "idle")] | length' <<<"$json")" = "$warm" ]
    for id in $(jq -r '.[] | select(.kind == "pool") | .id' <<<"$json"); do
        [ "$(in_systemd systemctl is-active "$id.service")" = active ]
    done
    [ "$(jq '[.[] | select(.kind == "pool" and .memory_bytes > 0 and .age_s >= 0)] | length' <<<"$json")" -ge 1 ]
    # The session's own machine, by its id.
    [ "$(jq -r --arg id "$sid" '.[] | select(.id == $id) | .kind + " " + .active_state' <<<"$json")" = "session active" ]
    # Every unit systemd has of them, no more.
    units=$(in_systemd systemctl list-units --all --plain --no-legend 'machine-*' 'session-*' 'tool-*' | awk '{ sub(".service$", "", $1); print $1 }' | sort)
    [ "$(jq -r '.[].id' <<<"$json" | sort)" = "$units" ]

    run ctl machines
    [ "$status" -eq 0 ]
    [[ ${lines[0]} == MACHINE* ]]
    grep -Eq "^$sid +session " <<<"$output"
}

@test "status: the pool, machines and sessions as the API and systemd say, and sandboxd's recent errors from the journal" {
    wait_pool_full
    session_new
    # An error to find: a tool call on an image that does not exist is a 503, logged as a warning.
    api POST /v1/call '{"image":"registry.example/no-such-agent:v1","function":"f"}'
    expect_status 503
    error_rid=$rid
    journal_entry "$error_rid" >/dev/null

    # The pool moves on its own (a machine retires, another starts): the two reads are compared
    # once the pool holds still between them.
    for _ in $(seq 20); do
        json=$(ctl status --json)
        pool=$(curl -s "$SANDBOXD_URL/v1/pool" | jq -S .)
        [ "$(jq -S .pool <<<"$json")" != "$pool" ] || break
        sleep 0.5
    done
    [ "$(jq -S .pool <<<"$json")" = "$pool" ]
    [ "$(jq .sessions.total <<<"$json")" = "$(curl -s "$SANDBOXD_URL/v1/sessions" | jq '.sessions | length')" ]
    [ "$(jq .sessions.active <<<"$json")" -ge 1 ]
    [ "$(jq .machines.total <<<"$json")" = "$(ctl machines --json | jq length)" ]
    [ "$(jq .machines.idle <<<"$json")" = "$(jq .pool.warm <<<"$json")" ]
    [ "$(jq .machines.session <<<"$json")" -ge 1 ]
    jq -e --arg r "$error_rid" '.recent_errors | map(select(.REQUEST_ID == $r and .STATUS == "503")) | length == 1' <<<"$json"
    [ "$(jq .recent_error_count <<<"$json")" -ge 1 ]

    run ctl status
    [ "$status" -eq 0 ]
    grep -q "^pool:      $(pool_field warm) warm of a target of $(pool_field target)," <<<"$output"
    grep -q "POST /v1/call $error_rid: 503 could not start a sandbox" <<<"$output"

    # With the API out of reach: says so, still shows what systemd and the journal have, exits 1.
    run ctl --url http://127.0.0.1:1 status
    [ "$status" -eq 1 ]
    grep -q "^pool:      unknown" <<<"$output"
    grep -q "^machines:  [0-9]" <<<"$output"
}
