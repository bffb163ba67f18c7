#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Faults: each one recovers, loses no record and leaves nothing behind.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    wait_pool_full
}

teardown() {
    if [ -n "${db_mode:-}" ]; then
        chmod "$db_mode" "$SANDBOXD_DB"
    fi
    if [ -n "${sql_fd:-}" ]; then
        exec {sql_fd}>&-
    fi
    if [ -n "${lock_pid:-}" ]; then
        kill "$lock_pid" 2>/dev/null || true
    fi
    expect_no_leftovers
}

@test "the whole service restarted under load: every request answered and recorded, nothing left, the pool refills" {
    since=$(date -u +%Y-%m-%dT%H:%M:%S)
    for i in $(seq 12); do
        curl -s -o "$BATS_TEST_TMPDIR/out.$i" -w '%{http_code}' -X POST "$SANDBOXD_URL/v1/execute" \
            -d "{\"code\":\"import time; time.sleep(1); print($i)\"}" >"$BATS_TEST_TMPDIR/code.$i" &
    done
    # Restarted while executions run.
    for _ in $(seq 100); do
        [ "$(pool_field in_flight)" -ge 1 ] && break
        sleep 0.1
    done
    [ "$(pool_field in_flight)" -ge 1 ]
    in_systemd systemctl restart sandbox-api.service
    wait
    for i in $(seq 12); do
        c=$(cat "$BATS_TEST_TMPDIR/code.$i")
        openapi_check_file POST /v1/execute "$c" "$BATS_TEST_TMPDIR/out.$i"
        # Answered either way: the result, or a JSON error.
        if [ "$c" = 200 ]; then
            [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/out.$i")" = "$i" ]
        else
            jq -e .error "$BATS_TEST_TMPDIR/out.$i"
        fi
    done
    wait_pool_full
    expect_no_leftovers
    # No record is left in flight.
    for _ in $(seq 50); do
        [ "$(db "SELECT count(*) FROM requests WHERE status IS NULL AND started_at >= '$since'")" = 0 ] && break
        sleep 0.1
    done
    [ "$(db "SELECT count(*) FROM requests WHERE status IS NULL AND started_at >= '$since'")" = 0 ]
    execute '{"code":"print(\"after\")"}'
    [ "$(field .stdout)" = after ]
}

@test "sqlite locked by another process past the busy timeout: a clear 503, then recovery" {
    # Another process holds the write lock until the test lets go (the workers wait 5 s).
    mkfifo "$BATS_TEST_TMPDIR/sql"
    sqlite3 -cmd '.timeout 5000' "$SANDBOXD_DB" <"$BATS_TEST_TMPDIR/sql" >/dev/null &
    lock_pid=$!
    exec {sql_fd}>"$BATS_TEST_TMPDIR/sql"
    echo "BEGIN IMMEDIATE; INSERT INTO counters VALUES ('lock-test', 0);" >&"$sql_fd"
    # Held once another writer cannot get in at once.
    for _ in $(seq 100); do
        sqlite3 "$SANDBOXD_DB" 'BEGIN IMMEDIATE; ROLLBACK;' >/dev/null 2>&1 || break
        sleep 0.05
    done
    run sqlite3 "$SANDBOXD_DB" 'BEGIN IMMEDIATE; ROLLBACK;'
    [[ $output == *"database is locked"* ]]
    execute '{"code":"print(1)"}'
    expect_error 503 "the request database is unavailable: database is locked - try again shortly"
    # No row could be written, but the journal has the request.
    [ "$(jq -r .STATUS <<<"$(journal_entry "$rid")")" = 503 ]
    echo 'ROLLBACK;' >&"$sql_fd"
    exec {sql_fd}>&-
    sql_fd=
    wait "$lock_pid"
    lock_pid=
    execute '{"code":"print(\"recovered\")"}'
    [ "$(field .stdout)" = recovered ]
}

@test "a database no worker can open: the worker's own 503, not the key check's 500, then recovery" {
    # Control: answered.
    execute '{"code":"print(\"before\")"}'
    [ "$(field .stdout)" = before ]
    # Workers keep their connections: restarted, they hold none, and must open one at their first
    # request. The file then refuses them (they run as its owner, without capabilities); the other
    # services keep the connections they have.
    in_systemd systemctl restart sandbox-api.service
    db_mode=$(stat -c %a "$SANDBOXD_DB")
    chmod 000 "$SANDBOXD_DB"
    # nginx's key check meets it first, and lets the request go on (auth_request would answer a
    # 500); its worker, meeting it again, answers in its own words, with no key let in.
    execute '{"code":"print(1)"}'
    expect_error 503 "the request database is unavailable: unable to open database file - try again shortly"
    [ "$(jq -r .STATUS <<<"$(journal_entry "$rid")")" = 503 ]
    chmod "$db_mode" "$SANDBOXD_DB"
    db_mode=
    execute '{"code":"print(\"recovered\")"}'
    [ "$(field .stdout)" = recovered ]
}

@test "malformed input of every kind: a clear 400, and the service stays up" {
    python3 - "$BATS_TEST_TMPDIR" <<'PY'
import json, sys
d = sys.argv[1]
cases = {
    "nested": "[" * 100000 + "]" * 100000,
    "nested-obj": '{"code":' + '{"a":' * 5000 + '1' + '}' * 5000 + '}',
    "huge-number": '{"code":"print(1)","timeout_s":' + "9" * 5000 + '}',
    "nul": '{"code":"print(1)\x00"}',
    "invalid-utf8": b'{"code":"\xff\xfe"}',
    "duplicate-keys": '{"code":"print(1)","code":5}',
    "many-files": json.dumps({"code": "print(1)", "files": [{"path": "f%d" % i, "content_b64": ""} for i in range(1001)]}),
    "too-many-values": json.dumps({"code": "print(1)", "files": [{"path": "f%d" % i, "content_b64": ""} for i in range(100000)]}),
    "deep-files": json.dumps({"code": "print(1)", "files": [{"path": "a/" * 3000 + "x", "content_b64": ""}]}),
    "not-object-files": json.dumps({"code": "print(1)", "files": "x"}),
}
for name, body in cases.items():
    with open("%s/%s" % (d, name), "wb") as f:
        f.write(body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass"))
PY
    for name in nested nested-obj nul invalid-utf8; do
        api_file POST /v1/execute "$BATS_TEST_TMPDIR/$name"
        expect_error 400 "invalid JSON body"
    done
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/huge-number"
    expect_error 400 "timeout_s must be between 1 and 60"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/duplicate-keys"
    expect_error 400 "code is required and must be a string"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/many-files"
    expect_error 400 "files has more than 1000 entries"
    # Past what json-c may be asked to build (lib/json-limits.h): refused before it is parsed.
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/too-many-values"
    expect_error 400 "invalid JSON body: it holds more than 65536 values, or more than 16384 arrays and objects"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/deep-files"
    expect_error 400 "files[0].path must name a file"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/not-object-files"
    expect_error 400 'files must be an array of {"path", "content_b64"} objects'
    execute '{"code":"print(\"still up\")"}'
    [ "$(field .stdout)" = "still up" ]
}

@test "a tool sandbox that cannot start: the real reason, and the failed unit collected" {
    [ -d /var/lib/machines/demo-agent ] || skip "no demo-agent image (make images)"
    # An image whose interpreter is not a program: the sandbox starts and dies at once.
    rm -rf /var/lib/machines/sbx-test-broken
    cp -a /var/lib/machines/demo-agent /var/lib/machines/sbx-test-broken
    rm -f /var/lib/machines/sbx-test-broken/usr/bin/python3
    printf 'not a program\n' >/var/lib/machines/sbx-test-broken/usr/bin/python3
    chmod 0755 /var/lib/machines/sbx-test-broken/usr/bin/python3
    # A tool image as sandboxd-image build makes one: its manifest, and the workers' copy.
    sed 's/"image": "demo-agent"/"image": "sbx-test-broken"/' /var/lib/machines/demo-agent/.sandboxd-tool.json \
        >/var/lib/machines/sbx-test-broken/.sandboxd-tool.json
    mkdir -p /var/lib/sandboxd/tools
    cp /var/lib/machines/sbx-test-broken/.sandboxd-tool.json /var/lib/sandboxd/tools/sbx-test-broken.json
    api POST /v1/call '{"image":"sbx-test-broken","function":"get_weather"}'
    rm -rf /var/lib/machines/sbx-test-broken /var/lib/sandboxd/tools/sbx-test-broken.json
    expect_status 503
    [[ $(field .error) == "the tool sandbox did not start: "* ]]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend 'tool-*')" ]
}

@test "systemd refusing to start sandboxes: a waiting request gets the real reason, not a long wait" {
    # Not a slice: systemd refuses every StartTransientUnit with it.
    settings_write zz-fault-test SANDBOXD_SLICE=sandboxd.target
    # No warm sandbox left over: the workers (and the pool manager with them) first, so nothing
    # refills the pool meanwhile; then the broker, which starts the sandboxes, takes the setting.
    in_systemd systemctl stop sandbox-api.service
    in_systemd systemctl stop sandbox.slice
    in_systemd systemctl restart sandboxd-broker.service
    in_systemd systemctl start sandbox-api.service
    SECONDS=0
    execute '{"code":"print(1)"}'
    clear_settings zz-fault-test
    expect_status 502
    [[ $(field .error) == "sandbox execution failed: "*"slice"* ]]
    [ "$SECONDS" -lt 20 ]
    wait_pool_full
    execute '{"code":"print(\"back\")"}'
    [ "$(field .stdout)" = back ]
}
