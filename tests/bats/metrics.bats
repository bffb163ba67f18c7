#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# GET /metrics: the Prometheus text format (promtool accepts it), counters that move with the
# requests made, the pool's gauges as GET /v1/pool has them, and nginx refusing whoever loopback's
# 127.0.0.1 and ::1 are not, unless the operator allows them.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

KNOB=/etc/sandboxd/nginx-metrics.d/zz-metrics-test.conf

setup_file() {
    require_stack
}

teardown() {
    if [ -n "${prometheus_pid:-}" ]; then
        kill "$prometheus_pid" 2>/dev/null || true
        wait "$prometheus_pid" 2>/dev/null || true
        prometheus_pid=
    fi
    if file_restore "$KNOB" metrics-knob; then
        in_systemd systemctl reload sandboxd-nginx.service
    fi
    if [ -n "${lock_fd:-}" ]; then
        echo 'ROLLBACK;' >&"$lock_fd"
        exec {lock_fd}>&-
        lock_fd=
    fi
    if [ -n "${broker_stopped:-}" ]; then
        in_systemd systemctl start sandboxd-broker.socket sandboxd-broker.service
        broker_stopped=
    fi
}

# scrape FILE: GET /metrics into FILE; fails unless it answered 200 as the description has it.
scrape() {
    local hdr=$BATS_TEST_TMPDIR/scrape-hdr code
    code=$(curl -s -D "$hdr" -o "$1" -w '%{http_code}' "$SANDBOXD_URL/metrics")
    [ "$code" = 200 ] || { echo "GET /metrics: $code: $(cat "$1")" >&2; return 1; }
    openapi_check_file --headers "$hdr" GET /metrics 200 "$1"
}

# value FILE SERIES: the value of SERIES (its name and labels, as written) in a scrape; 0 when the
# scrape has no such series, as before a route's first request.
value() {
    awk -v s="$2" '$1 == s { v = $2; found = 1 } END { print found ? v : 0 }' "$1"
}

# from ADDRESS PATH: the status of GET PATH from that source address (the body in $BATS_TEST_TMPDIR/body).
from() {
    curl -s --interface "$1" -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' "$SANDBOXD_URL$2"
}

# machines_retired FILE, machines_pooled FILE: the machines retired for any reason, and those in the
# pool now (warm, starting, busy), in a scrape.
machines_retired() {
    awk '$1 ~ /^sandboxd_machines_retired_total\{/ { n += $2 } END { print n + 0 }' "$1"
}

machines_pooled() {
    echo $(($(value "$1" sandboxd_pool_warm_machines) + $(value "$1" sandboxd_pool_starting_machines) +
        $(value "$1" sandboxd_pool_in_flight_executions)))
}

# rose FILE_BEFORE FILE_AFTER SERIES N: SERIES went up by exactly N.
rose() {
    local before after
    before=$(value "$1" "$3")
    after=$(value "$2" "$3")
    if [ $((after - before)) != "$4" ]; then
        echo "$3: $before -> $after, expected +$4" >&2
        return 1
    fi
}

# bats test_tags=vm
@test "GET /metrics: the Prometheus text format, which promtool accepts" {
    scrape "$BATS_TEST_TMPDIR/m"
    promtool check metrics <"$BATS_TEST_TMPDIR/m"
    # Every family the documentation names is there.
    for family in sandboxd_http_requests_total sandboxd_executions_total sandboxd_execution_duration_seconds \
        sandboxd_pool_warm_machines sandboxd_pool_target_machines sandboxd_pool_in_flight_executions \
        sandboxd_machines_created_total sandboxd_machines_retired_total sandboxd_sessions sandboxd_sqlite_errors_total \
        sandboxd_broker_errors_total sandboxd_egress_connections_total sandboxd_egress_refusals_total sandboxd_egress_bytes_total; do
        grep -q "^# TYPE $family " "$BATS_TEST_TMPDIR/m" || { echo "no family $family" >&2; return 1; }
    done
    # Known label values are there before their first event: a rate has a start.
    grep -qx 'sandboxd_executions_total{language="bash",termination="tasks_limit"} [0-9]*' "$BATS_TEST_TMPDIR/m"
    grep -qx 'sandboxd_machines_retired_total{reason="memory_limit"} [0-9]*' "$BATS_TEST_TMPDIR/m"
    grep -qx 'sandboxd_sessions{state="paused"} [0-9]*' "$BATS_TEST_TMPDIR/m"
    # The check can fail: a counter named against the conventions is refused.
    sed 's/sandboxd_sqlite_errors_total/sandboxd_sqlite_errors/g' "$BATS_TEST_TMPDIR/m" >"$BATS_TEST_TMPDIR/bad"
    run promtool check metrics <"$BATS_TEST_TMPDIR/bad"
    [ "$status" -ne 0 ]
    [[ $output == *'should have "_total" suffix'* ]]
}

@test "only GET works on /metrics" {
    api POST /metrics '{}'
    expect_error 405 "method not allowed"
}

@test "counters move with the requests made: by route and status, language and termination, the histogram" {
    wait_pool_full
    m=$BATS_TEST_TMPDIR
    scrape "$m/before"
    execute "$(code_json 'print(1)')"
    [ "$(field .exit_code)" = 0 ]
    execute '{"language":"node","code":"console.log(1)"}'
    [ "$(field .exit_code)" = 0 ]
    execute "$(code_json 'import sys; sys.exit(3)')"
    [ "$(field .exit_code)" = 3 ]
    execute "$(code_json 'import time; time.sleep(10)' '{timeout_s: 1}')"
    [ "$(field .exit_code)" = -1 ]
    execute '{"code":'
    expect_error 400 "invalid JSON body"
    # The timed-out machine retires once its answer is sent: counted then.
    for _ in $(seq 50); do
        scrape "$m/after"
        [ "$(value "$m/after" 'sandboxd_machines_retired_total{reason="timeout"}')" != \
            "$(value "$m/before" 'sandboxd_machines_retired_total{reason="timeout"}')" ] && break
        sleep 0.1
    done

    rose "$m/before" "$m/after" 'sandboxd_http_requests_total{route="/v1/execute",code="200"}' 4
    rose "$m/before" "$m/after" 'sandboxd_http_requests_total{route="/v1/execute",code="400"}' 1
    # The scrape before, answered; not the ones after, which were answered after they were read.
    [ "$(value "$m/after" 'sandboxd_http_requests_total{route="/metrics",code="200"}')" -gt \
        "$(value "$m/before" 'sandboxd_http_requests_total{route="/metrics",code="200"}')" ]
    rose "$m/before" "$m/after" 'sandboxd_executions_total{language="python",termination="ok"}' 1
    rose "$m/before" "$m/after" 'sandboxd_executions_total{language="node",termination="ok"}' 1
    rose "$m/before" "$m/after" 'sandboxd_executions_total{language="python",termination="exit_nonzero"}' 1
    rose "$m/before" "$m/after" 'sandboxd_executions_total{language="python",termination="timeout"}' 1
    rose "$m/before" "$m/after" 'sandboxd_executions_total{language="bash",termination="ok"}' 0
    rose "$m/before" "$m/after" 'sandboxd_execution_duration_seconds_count{language="python"}' 3
    rose "$m/before" "$m/after" 'sandboxd_execution_duration_seconds_bucket{language="python",le="+Inf"}' 3
    rose "$m/before" "$m/after" 'sandboxd_execution_duration_seconds_count{language="node"}' 1
    # The timeout took at least its second; it is not in the bucket of 0.5 s, it is in the one of 60 s.
    python_half=$(($(value "$m/after" 'sandboxd_execution_duration_seconds_bucket{language="python",le="0.5"}') -
        $(value "$m/before" 'sandboxd_execution_duration_seconds_bucket{language="python",le="0.5"}')))
    [ "$python_half" -le 2 ]
    rose "$m/before" "$m/after" 'sandboxd_execution_duration_seconds_bucket{language="python",le="60"}' 3
    /usr/bin/python3 -c 'import sys; sys.exit(not float(sys.argv[2]) - float(sys.argv[1]) >= 1.0)' \
        "$(value "$m/before" 'sandboxd_execution_duration_seconds_sum{language="python"}')" \
        "$(value "$m/after" 'sandboxd_execution_duration_seconds_sum{language="python"}')"
    rose "$m/before" "$m/after" 'sandboxd_sandboxes_created_total' 4
    rose "$m/before" "$m/after" 'sandboxd_machines_retired_total{reason="timeout"}' 1
    # Nothing failed on the way: no kill of a machine gone already counts as a broker error.
    for op in start kill reset_failed list run_tool session_start session_stop session_delete session_create; do
        rose "$m/before" "$m/after" "sandboxd_broker_errors_total{operation=\"$op\"}" 0
    done
    # Machines come and go (the retired one's replacement, a surplus retiring idle), but every one
    # created since is retired or in the pool: one scrape is one snapshot.
    wait_pool_full
    scrape "$m/later"
    created=$(($(value "$m/later" sandboxd_machines_created_total) - $(value "$m/before" sandboxd_machines_created_total)))
    retired=$(($(machines_retired "$m/later") - $(machines_retired "$m/before")))
    pooled=$(($(machines_pooled "$m/later") - $(machines_pooled "$m/before")))
    [ "$created" = $((retired + pooled)) ] || { echo "created +$created, retired +$retired, in the pool +$pooled" >&2; false; }
    [ "$retired" -ge 1 ]
}

@test "the pool's gauges are GET /v1/pool's numbers" {
    wait_pool_full
    # Both read the same rows; read again if the pool changed between the two reads.
    for _ in $(seq 5); do
        api GET /v1/pool
        scrape "$BATS_TEST_TMPDIR/m"
        api GET /v1/pool
        [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_pool_warm_machines)" = "$(field .warm)" ] &&
            [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_pool_in_flight_executions)" = "$(field .in_flight)" ] && break
    done
    [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_pool_warm_machines)" = "$(field .warm)" ]
    [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_pool_in_flight_executions)" = "$(field .in_flight)" ]
    [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_pool_target_machines)" = "$(field .target)" ]
    [ "$(value "$BATS_TEST_TMPDIR/m" sandboxd_sandboxes_created_total)" = "$(field .created_total)" ]
    [ "$(field .warm)" -ge 1 ]
}

@test "sessions by state: what the sessions table holds, 0 while there is none" {
    scrape "$BATS_TEST_TMPDIR/m"
    for state in active paused; do
        if [ -n "$(db "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'sessions'")" ]; then
            want=$(db "SELECT count(*) FROM sessions WHERE state = '$state'")
        else
            want=0
        fi
        [ "$(value "$BATS_TEST_TMPDIR/m" "sandboxd_sessions{state=\"$state\"}")" = "$want" ]
    done
}

@test "sqlite errors are counted: the database locked past the busy timeout" {
    scrape "$BATS_TEST_TMPDIR/before"
    # Another process holds the write lock (as in faults.bats) until the test lets go.
    mkfifo "$BATS_TEST_TMPDIR/sql"
    sqlite3 -cmd '.timeout 5000' "$SANDBOXD_DB" <"$BATS_TEST_TMPDIR/sql" >/dev/null &
    exec {lock_fd}>"$BATS_TEST_TMPDIR/sql"
    echo "BEGIN IMMEDIATE; INSERT INTO counters VALUES ('metrics-lock-test', 0);" >&"$lock_fd"
    for _ in $(seq 100); do
        sqlite3 "$SANDBOXD_DB" 'BEGIN IMMEDIATE; ROLLBACK;' >/dev/null 2>&1 || break
        sleep 0.05
    done
    api GET /v1/pool
    expect_error 503 "the request database is unavailable: database is locked - try again shortly"
    echo 'ROLLBACK;' >&"$lock_fd"
    exec {lock_fd}>&-
    lock_fd=
    wait
    # The worker that met it writes it down after its next request, whichever worker that is.
    for _ in $(seq 100); do
        scrape "$BATS_TEST_TMPDIR/after"
        [ "$(value "$BATS_TEST_TMPDIR/after" sandboxd_sqlite_errors_total)" -gt "$(value "$BATS_TEST_TMPDIR/before" sandboxd_sqlite_errors_total)" ] &&
            break
        sleep 0.1
    done
    [ "$(value "$BATS_TEST_TMPDIR/after" sandboxd_sqlite_errors_total)" -gt "$(value "$BATS_TEST_TMPDIR/before" sandboxd_sqlite_errors_total)" ]
}

@test "broker errors are counted: the pool manager cannot list the units while the broker is down" {
    wait_pool_full
    scrape "$BATS_TEST_TMPDIR/before"
    in_systemd systemctl stop sandboxd-broker.socket sandboxd-broker.service
    broker_stopped=1
    # The pool manager lists the units when it sweeps: every 5 minutes, and at once on SIGHUP.
    in_systemd systemctl kill -s HUP sandboxd-poold.service
    for _ in $(seq 250); do
        scrape "$BATS_TEST_TMPDIR/after"
        [ "$(value "$BATS_TEST_TMPDIR/after" 'sandboxd_broker_errors_total{operation="list"}')" -gt \
            "$(value "$BATS_TEST_TMPDIR/before" 'sandboxd_broker_errors_total{operation="list"}')" ] && break
        sleep 0.1
    done
    in_systemd systemctl start sandboxd-broker.socket sandboxd-broker.service
    broker_stopped=
    [ "$(value "$BATS_TEST_TMPDIR/after" 'sandboxd_broker_errors_total{operation="list"}')" -gt \
        "$(value "$BATS_TEST_TMPDIR/before" 'sandboxd_broker_errors_total{operation="list"}')" ]
    execute "$(code_json 'print("back")')"
    [ "$(field .stdout)" = back ]
}

# nginx_reload: sandboxd's nginx reloaded, and its workers from before gone: until they are, one of
# them may still take a connection and answer by the old configuration.
nginx_reload() {
    local master old p left
    master=$(in_systemd systemctl show -P MainPID sandboxd-nginx.service)
    old=$(in_systemd pgrep -P "$master" | tr '\n' ' ')
    [ -n "$old" ] || { echo "nginx ($master) has no workers" >&2; return 1; }
    in_systemd systemctl reload sandboxd-nginx.service
    for _ in $(seq 100); do
        left=
        for p in $old; do
            if in_systemd test -d "/proc/$p"; then left+="$p "; fi
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    echo "nginx's workers from before the reload are still there: $left" >&2
    return 1
}

@test "nginx refuses /metrics to any address but 127.0.0.1 and ::1, unless the operator allows it" {
    # 127.0.0.2 is loopback too, but not an address the location allows: it stands for any other.
    [ "$(from 127.0.0.1 /metrics)" = 200 ]
    [ "$(from 127.0.0.2 /v1/pool)" = 200 ]
    [ "$(from 127.0.0.2 /metrics)" = 403 ]
    [ "$(jq -r .error "$BATS_TEST_TMPDIR/body")" = forbidden ]
    # The operator's knob: an allow of their own in /etc/sandboxd/nginx-metrics.d.
    file_save "$KNOB" metrics-knob
    echo 'allow 127.0.0.2;' >"$KNOB"
    nginx_reload
    [ "$(from 127.0.0.2 /metrics)" = 200 ]
    grep -q '^sandboxd_pool_warm_machines ' "$BATS_TEST_TMPDIR/body"
    rm -f "$KNOB"
    nginx_reload
    [ "$(from 127.0.0.2 /metrics)" = 403 ]
}

@test "a Prometheus server pointed at /metrics scrapes it: its target is up and the series are stored" {
    # Debian's prometheus, as docs/metrics.md has an operator point it at sandboxd, on a port of
    # its own on loopback, with a second target where nothing listens: its "up" is 0, so the 1 of
    # sandboxd's target means a scrape that worked.
    local dir=$BATS_TEST_TMPDIR/prometheus port=19090
    mkdir -p "$dir"
    cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: sandboxd
    static_configs:
      - targets: ['127.0.0.1:$(listen_port)']
  - job_name: nothing
    static_configs:
      - targets: ['127.0.0.1:9']
YML
    promtool check config "$dir/prometheus.yml"
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$port" >"$dir/log" 2>&1 3>&- &
    prometheus_pid=$!
    query() {
        curl -s "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
    }
    up_sandboxd() { query 'up{job="sandboxd"}'; }
    up_nothing() { query 'up{job="nothing"}'; }
    for _ in $(seq 100); do
        [ -n "$(up_sandboxd)" ] && [ -n "$(up_nothing)" ] && break
        sleep 0.2
    done
    [ "$(up_nothing)" = 0 ]
    [ "$(up_sandboxd)" = 1 ] || { cat "$dir/log" >&2; false; }
    [ -n "$(query 'sandboxd_pool_target_machines')" ]
    [ "$(query 'sandboxd_pool_target_machines')" = "$(curl -s "$SANDBOXD_URL/v1/pool" | jq -r .target)" ]
}
