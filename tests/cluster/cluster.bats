#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Several hosts (README, "Several hosts"), on this one machine: three members, each a whole sandboxd
# stack in a network namespace of its own with its own private systemd, state and settings
# (tests/cluster/member); three etcd (tests/cluster/etcd); HAProxy with cluster/haproxy.cfg and
# sandboxd-front-watch in front (tests/cluster/front). Every address is 10.77.0.0/24, held by those
# namespaces (tests/cluster/net). make test-cluster runs it.

C=$BATS_TEST_DIRNAME
# Where the scripts keep their state (theirs by default).
export CLUSTER_DIR=${CLUSTER_DIR:-/var/lib/sandboxd-cluster-test}
FRONT=http://127.0.0.1:8080

setup_file() {
    "$C/down-all" >&3 2>&1 || true
    "$C/net" up
    "$C/etcd" up 3
    for n in 1 2 3; do "$C/member" "$n" up; done
    "$C/front" up
    wait_members 3 30
}

teardown_file() {
    "$C/down-all"
}

# A test that turned keys on and failed before turning them off leaves them off for the next.
teardown() {
    if [ -e "$BATS_FILE_TMPDIR/keys-on" ]; then
        keys_set off
    fi
}

# curl from the front's namespace, as a client of the cluster.
fcurl() {
    "$C/front" curl -s --max-time 120 "$@"
}

etcdctl_front() {
    ip netns exec sbxcl-front env ETCDCTL_API=3 etcdctl --endpoints "$("$C/etcd" endpoints)" "$@"
}

registered() {
    etcdctl_front get --prefix /sandboxd/members/ --keys-only | grep -c '^/sandboxd/members/' || true
}

# The servers of HAProxy's backend "work" that are up, one name a line: "NAME OPSTATE ADMINSTATE".
servers() {
    "$C/front" cli "show servers state work" | awk 'NF > 20 && $1 ~ /^[0-9]+$/ { print $4, $6, $7 }'
}

servers_up() {
    servers | awk '$2 == 2' | wc -l
}

# Until n members are registered and HAProxy has them all up, at most s seconds.
wait_members() {
    local n=$1 s=$2
    for _ in $(seq $((s * 10))); do
        if [ "$(registered)" -eq "$n" ] && [ "$(servers_up)" -eq "$n" ]; then return 0; fi
        sleep 0.1
    done
    echo "registered: $(registered), HAProxy: $(servers)" >&2
    return 1
}

execute() {
    fcurl -D - -X POST "$FRONT/v1/execute" -H 'content-type: application/json' -d "{\"code\":\"print($1)\"}"
}

# The member that answered a response with headers (curl -D -).
member_of() {
    tr -d '\r' <<<"$1" | awk -F': ' 'tolower($1) == "x-sandboxd-member" { print $2 }'
}

@test "members register in etcd with their address, state and pool, and HAProxy has each" {
    run etcdctl_front get --prefix /sandboxd/members/ --print-value-only
    [ "$status" -eq 0 ]
    for n in 1 2 3; do
        [[ $output == *"\"name\":\"m$n\""*"\"address\":\"10.77.0.$n:8080\""* ]]
    done
    [[ $output == *'"state":"ready"'* ]]
    run "$C/member" 1 run sandboxctl cluster --json
    [ "$status" -eq 0 ]
    [ "$(jq length <<<"$output")" -eq 3 ]
    [ "$(jq -r '[.[].name] | join(" ")' <<<"$output")" = "m1 m2 m3" ]
    [ "$(jq -r '[.[].pool.max] | min' <<<"$output")" -gt 0 ]
    run servers
    [ "$(wc -l <<<"$output")" -eq 3 ]
    # Prometheus's file-based discovery: each member's /metrics, with its name.
    run jq -r '[.[] | .labels.member + "=" + .targets[0]] | join(" ")' "${CLUSTER_DIR:-/var/lib/sandboxd-cluster-test}/front/prometheus.json"
    [ "$output" = "m1=10.77.0.1:8080 m2=10.77.0.2:8080 m3=10.77.0.3:8080" ]
}

@test "GET /v1/pool through the front answers the cluster's totals, in the reference's shape" {
    local want
    run fcurl "$FRONT/v1/pool"
    [ "$status" -eq 0 ]
    [ "$(jq -r 'keys | join(",")' <<<"$output")" = "created_total,in_flight,target,warm" ]
    # Each member's target is 1 (tests/cluster/member): the front's is theirs together.
    [ "$(jq -r .target <<<"$output")" -eq 3 ]
    want=$(etcdctl_front get --prefix /sandboxd/members/ --print-value-only | jq -s '[.[].pool.created_total] | add')
    [ "$(jq -r .created_total <<<"$output")" -ge $((want - 3)) ]
    # A member that leaves counts no more, at once: its clean stop ends its lease.
    "$C/member" 3 down
    run fcurl "$FRONT/v1/pool"
    [ "$(jq -r .target <<<"$output")" -eq 2 ]
    "$C/member" 3 up
    wait_members 3 30
    run fcurl "$FRONT/v1/pool"
    [ "$(jq -r .target <<<"$output")" -eq 3 ]
}

# SANDBOXD_API_KEYS on or off on every member: a reload applies it (README, "Configuration").
keys_set() {
    local n
    if [ "$1" = on ]; then
        touch "$BATS_FILE_TMPDIR/keys-on"
    else
        rm -f "$BATS_FILE_TMPDIR/keys-on"
    fi
    for n in 1 2 3; do
        "$C/member" "$n" run sed -i -e '/^SANDBOXD_API_KEYS=/d' -e "\$a SANDBOXD_API_KEYS=$1" /etc/sandboxd/sandboxd.conf
        "$C/member" "$n" exec systemctl reload sandboxd.target
    done
}

# The status of one execution straight to member n, with token (may be empty).
status_on() {
    "$C/front" curl -s -o /dev/null -w '%{http_code}' --max-time 60 -X POST "http://10.77.0.$1:8080/v1/execute" \
        -H "Authorization: Bearer $2" -H 'content-type: application/json' -d '{"code":"print(1)"}'
}

# Until status_on n token says want, at most 1 s; prints the milliseconds it took.
within_1s() {
    local t0 got
    t0=$(date +%s%N)
    while :; do
        got=$(status_on "$1" "$2")
        if [ "$got" = "$3" ]; then
            echo $((($(date +%s%N) - t0) / 1000000))
            return 0
        fi
        [ $(($(date +%s%N) - t0)) -lt 1000000000 ] || { echo "member $1 still answers $got" >&2; return 1; }
        sleep 0.02
    done
}

@test "a key added or revoked on one member holds on every member within 1 s" {
    local token ms n
    keys_set on
    # Control: with keys on, no key is no entry, on each member.
    for n in 1 2 3; do
        [ "$(status_on "$n" "")" = 401 ]
    done
    run "$C/member" 1 run sandboxctl --json key add cluster-test --max-concurrent 4
    [ "$status" -eq 0 ]
    token=$(jq -r .token <<<"$output")
    for n in 2 3 1; do
        ms=$(within_1s "$n" "$token" 200)
        echo "# the key added on m1 let in on m$n after $ms ms" >&3
    done
    run "$C/member" 2 run sandboxctl key revoke cluster-test
    [ "$status" -eq 0 ]
    for n in 1 3 2; do
        ms=$(within_1s "$n" "$token" 401)
        echo "# the key revoked on m2 refused on m$n after $ms ms" >&3
    done
    # Its name stays taken, on any member.
    run "$C/member" 3 run sandboxctl key add cluster-test
    [ "$status" -ne 0 ]
    [[ $output == *"exists already in the cluster"* ]]
    keys_set off
    [ "$(status_on 1 "")" = 200 ]
}

# POST body to member n with token: its status and body's error (or stdout), one line.
post_on() {
    "$C/front" curl -s --max-time 60 -w '\n%{http_code}' -X POST "http://10.77.0.$1:8080$2" -H "Authorization: Bearer $3" \
        -H 'content-type: application/json' -d "$4"
}

@test "a key's quotas count its work on every member" {
    local conc rate sess sid pids=() n
    keys_set on
    conc=$("$C/member" 1 run sandboxctl --json key add q-concurrent --max-concurrent 2 | jq -r .token)
    rate=$("$C/member" 2 run sandboxctl --json key add q-rate --executions-per-minute 4 | jq -r .token)
    sess=$("$C/member" 3 run sandboxctl --json key add q-sessions --max-sessions 1 | jq -r .token)
    for n in 1 2 3; do within_1s "$n" "$conc" 200 >/dev/null; done
    # Those ended; each member says so within its 200 ms write gap (until then another counts them).
    sleep 1

    # max-concurrent 2: one long run on m1 and one on m2 fill it; m3 then refuses a third.
    post_on 1 /v1/execute "$conc" '{"code":"import time; time.sleep(6)"}' >/dev/null &
    pids+=($!)
    post_on 2 /v1/execute "$conc" '{"code":"import time; time.sleep(6)"}' >/dev/null &
    pids+=($!)
    sleep 2
    run post_on 3 /v1/execute "$conc" '{"code":"print(3)"}'
    [ "${lines[-1]}" = 429 ]
    [[ ${lines[0]} == *"max-concurrent=2"* ]]
    wait "${pids[@]}"
    # Control: once they ended, m3 takes it (within the time the others publish their counts).
    sleep 1
    run post_on 3 /v1/execute "$conc" '{"code":"print(3)"}'
    [ "${lines[-1]}" = 200 ]

    # executions-per-minute 4: one on m3 (the control: m3 takes the key), two on m1, one on m2 use
    # it up; m3, with one of its own, refuses a fifth.
    for n in 3 1 1 2; do
        run post_on "$n" /v1/execute "$rate" '{"code":"print(1)"}'
        [ "${lines[-1]}" = 200 ]
    done
    sleep 1
    run post_on 3 /v1/execute "$rate" '{"code":"print(5)"}'
    [ "${lines[-1]}" = 429 ]
    [[ ${lines[0]} == *"executions-per-minute=4"* ]]

    # max-sessions 1: m2 takes one (the control), which goes; then one on m1, and m2 refuses.
    run post_on 2 /v1/sessions "$sess" '{}'
    [ "${lines[-1]}" = 201 ]
    run "$C/front" curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $sess" \
        "http://10.77.0.2:8080/v1/sessions/$(jq -r .session_id <<<"${lines[0]}")"
    [ "$output" = 200 ]
    # m2's list says it went within some 200 ms; until then the others still count it.
    sleep 1
    run post_on 1 /v1/sessions "$sess" '{}'
    [ "${lines[-1]}" = 201 ]
    sid=$(jq -r .session_id <<<"${lines[0]}")
    sleep 1
    run post_on 2 /v1/sessions "$sess" '{}'
    [ "${lines[-1]}" = 429 ]
    [[ ${lines[0]} == *"max-sessions=1"* ]]
    run "$C/front" curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $sess" "http://10.77.0.1:8080/v1/sessions/$sid"
    [ "$output" = 200 ]
    keys_set off
}

@test "executions through the front run on every member" {
    local seen="" out i
    for i in $(seq 12); do
        out=$(execute "$i * 7")
        [[ $out == *"HTTP/1.1 200"* ]]
        [[ $out == *"\"stdout\":\"$((i * 7))\\n\""* ]]
        seen="$seen $(member_of "$out")"
    done
    for n in 1 2 3; do
        [[ $seen == *" m$n"* ]]
    done
}

@test "a session's routes go to the member its id names, on both of its paths" {
    local sid holder out i
    run fcurl -X POST "$FRONT/v1/sessions" -H 'content-type: application/json' -d '{}'
    [ "$status" -eq 0 ]
    sid=$(jq -r .session_id <<<"$output")
    [[ $sid =~ ^session-m[123]-[a-z2-7]{12}$ ]]
    holder=$(cut -d- -f2 <<<"$sid")
    # A variable kept from run to run: the same interpreter, so the same host, each time.
    for i in 1 2 3 4; do
        out=$(fcurl -D - -X POST "$FRONT/v1/sessions/$sid/run" -H 'content-type: application/json' \
            -d '{"language":"python","code":"n = globals().get(\"n\", 0) + 1\nprint(n)"}')
        [ "$(member_of "$out")" = "$holder" ]
        [[ $out == *"\"stdout\":\"$i\\n\""* ]]
    done
    out=$(fcurl -D - -X POST "$FRONT/session/$sid/run" -H 'content-type: application/json' -d '{"language":"python","code":"print(n)"}')
    [ "$(member_of "$out")" = "$holder" ]
    [[ $out == *'"stdout":"4\n"'* ]]
    run fcurl -X DELETE "$FRONT/v1/sessions/$sid"
    [ "$status" -eq 0 ]
}

@test "GET /v1/sessions through the front lists the sessions of every member" {
    local sids=() sid holders="" n
    for _ in $(seq 6); do
        sid=$(fcurl -X POST "$FRONT/v1/sessions" -H 'content-type: application/json' -d '{}' | jq -r .session_id)
        sids+=("$sid")
        holders="$holders $(cut -d- -f2 <<<"$sid")"
    done
    # Control: they are on more than one member.
    [ "$(tr ' ' '\n' <<<"$holders" | sort -u | grep -c m)" -ge 2 ]
    # The members publish their lists within some 200 ms: every member's answer has all six.
    sleep 1
    for n in 1 2 3; do
        run "$C/front" curl -s "http://10.77.0.$n:8080/v1/sessions"
        for sid in "${sids[@]}"; do
            [ "$(jq --arg s "$sid" '[.sessions[] | select(.session_id == $s)] | length' <<<"$output")" -eq 1 ]
        done
    done
    run fcurl "$FRONT/v1/sessions"
    [ "$(jq '.sessions | length' <<<"$output")" -ge 6 ]
    for sid in "${sids[@]}"; do
        fcurl -X DELETE "$FRONT/v1/sessions/$sid" >/dev/null
    done
    sleep 1
    run fcurl "$FRONT/v1/sessions"
    for sid in "${sids[@]}"; do
        [ "$(jq --arg s "$sid" '[.sessions[] | select(.session_id == $s)] | length' <<<"$output")" -eq 0 ]
    done
}

@test "sandboxctl logs ID on any member finds the request on the member that ran it" {
    local out id member other
    out=$(execute 41+1)
    id=$(tr -d '\r' <<<"$out" | awk -F': ' 'tolower($1) == "x-request-id" { print $2 }')
    member=$(member_of "$out")
    [[ $id =~ ^[0-9a-f]{32}$ ]]
    other=$(( ${member#m} % 3 + 1 ))
    # Control: the member that ran it has it in its own journal.
    run "$C/member" "${member#m}" run sandboxctl logs "$id"
    [ "$status" -eq 0 ]
    [[ $output == *"POST /v1/execute"* ]]
    [[ $output != *"from member"* ]]
    run "$C/member" "$other" run sandboxctl logs "$id"
    [ "$status" -eq 0 ]
    [[ $output == *"(from member $member's journal)"* ]]
    [[ $output == *"POST /v1/execute"* ]]
    # A request no member ran: a clear no, in seconds.
    run "$C/member" "$other" run sandboxctl logs 00000000000000000000000000000000
    [ "$status" -ne 0 ]
    [[ $output == *"no journal entry for request"* ]]
}

# One MCP message through the front (session id, body): headers and body.
mcp_post() {
    fcurl -D - -X POST "$FRONT/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        ${1:+-H "mcp-session-id: $1"} --data-binary "$2"
}

@test "an MCP session's messages go to the member its Mcp-Session-Id names" {
    local out msid holder i
    out=$(mcp_post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}')
    msid=$(tr -d '\r' <<<"$out" | awk -F': ' 'tolower($1) == "mcp-session-id" { print $2 }')
    [[ $msid =~ ^m[123]-[0-9a-f]{32}$ ]]
    holder=${msid%%-*}
    [ "$(member_of "$out")" = "$holder" ]
    run mcp_post "$msid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    [[ $output == *"HTTP/1.1 202"* ]]
    # Each later message reaches its holder; another member would not know the session (404).
    for i in 1 2 3 4; do
        out=$(mcp_post "$msid" "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/list\"}")
        [[ $out == *"HTTP/1.1 200"* ]]
        [ "$(member_of "$out")" = "$holder" ]
    done
    # Control: straight to another member, the session is unknown there.
    run "$C/front" curl -s -o /dev/null -w '%{http_code}' -X POST "http://10.77.0.$(( ${holder#m} % 3 + 1 )):8080/mcp" \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -H "mcp-session-id: $msid" \
        --data-binary '{"jsonrpc":"2.0","id":9,"method":"tools/list"}'
    [ "$output" = 404 ]
}

@test "a sessionless MCP tool call on a sandbox session goes to the member that holds it" {
    local sid holder out i body
    sid=$(fcurl -X POST "$FRONT/v1/sessions" -H 'content-type: application/json' -d '{}' | jq -r .session_id)
    holder=$(cut -d- -f2 <<<"$sid")
    body=$(jq -cn --arg s "$sid" '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "session_run",
        arguments: {session_id: $s, language: "python", code: "print(7 * 6)"}, _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}')
    for i in 1 2 3; do
        out=$(fcurl -D - -X POST "$FRONT/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
            -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: session_run' --data-binary "$body")
        [[ $out == *"HTTP/1.1 200"* ]]
        [ "$(member_of "$out")" = "$holder" ]
        [[ $out == *'42\n'* ]]
    done
    # Control: a call naming no session is balanced as any work.
    out=$(fcurl -D - -X POST "$FRONT/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
        --data-binary '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}')
    [[ $out == *"HTTP/1.1 200"* ]]
    fcurl -X DELETE "$FRONT/v1/sessions/$sid" >/dev/null
}

@test "a session id naming no registered member answers 503 with JSON, not another host's 404" {
    # Control: an id of a registered member's form reaches that member, which says 404.
    run fcurl -w '\n%{http_code}' "$FRONT/v1/sessions/session-m1-aaaaaaaaaaaa"
    [ "${lines[-1]}" = 404 ]
    run fcurl -w '\n%{http_code}' "$FRONT/v1/sessions/session-m9-aaaaaaaaaaaa"
    [ "${lines[-1]}" = 503 ]
    [ "$(jq -r .error <<<"${lines[0]}")" = "the host that holds this session (m9) is not available - try again when it is back" ]
}

@test "a drained member takes no new work, keeps its sessions, and takes work again when undrained" {
    local sid="" out i seen=""
    # A session on m2, made before the drain.
    for _ in $(seq 12); do
        sid=$(fcurl -X POST "$FRONT/v1/sessions" -H 'content-type: application/json' -d '{}' | jq -r .session_id)
        if [[ $sid == session-m2-* ]]; then break; fi
        fcurl -X DELETE "$FRONT/v1/sessions/$sid" >/dev/null
        sid=""
    done
    [ -n "$sid" ]
    run "$C/member" 2 run sandboxctl drain
    [ "$status" -eq 0 ]
    for _ in $(seq 50); do
        if servers | grep -q '^m2 .* 8$'; then break; fi
        sleep 0.1
    done
    run servers
    [[ $output == *"m2 2 8"* ]]
    run "$C/member" 1 run sandboxctl cluster
    [[ $output == *m2*draining* ]]
    for i in $(seq 12); do
        out=$(execute "$i")
        [[ $out == *"HTTP/1.1 200"* ]]
        seen="$seen $(member_of "$out")"
    done
    [[ $seen != *m2* ]]
    out=$(fcurl -D - -X POST "$FRONT/v1/sessions/$sid/run" -H 'content-type: application/json' -d '{"language":"python","code":"print(5)"}')
    [ "$(member_of "$out")" = m2 ]
    [[ $out == *'"stdout":"5\n"'* ]]
    run "$C/member" 2 run sandboxctl undrain
    [ "$status" -eq 0 ]
    wait_members 3 10
    seen=""
    for i in $(seq 12); do
        out=$(execute "$i")
        seen="$seen $(member_of "$out")"
    done
    [[ $seen == *m2* ]]
    fcurl -X DELETE "$FRONT/v1/sessions/$sid" >/dev/null
}

@test "a member killed: its sessions answer 503, executions go on elsewhere at once, and its sessions resume with their files" {
    local sid holder n out started i inflight fails=0
    sid=$(fcurl -X POST "$FRONT/v1/sessions" -H 'content-type: application/json' -d '{}' | jq -r .session_id)
    holder=$(cut -d- -f2 <<<"$sid")
    n=${holder#m}
    run fcurl -w '\n%{http_code}' -X PUT "$FRONT/v1/sessions/$sid/files/kept.txt" -H 'content-type: application/octet-stream' --data-binary 'written before the crash'
    [ "${lines[-1]}" = 201 ] || { echo "$output" >&2; false; }
    # Control: the file is there before.
    run fcurl "$FRONT/v1/sessions/$sid/files/kept.txt"
    [ "$output" = "written before the crash" ]

    # A run in flight on it when it dies: its client gets a clear error, not a hang or an empty reply.
    fcurl -w '\n%{http_code}' -X POST "$FRONT/v1/sessions/$sid/run" -H 'content-type: application/json' \
        -d '{"language":"python","code":"import time\nprint(\"started\", flush=True)\ntime.sleep(30)"}' >"$BATS_TEST_TMPDIR/inflight" &
    inflight=$!
    sleep 2
    "$C/member" "$n" kill
    started=$(date +%s%N)
    wait "$inflight"
    run cat "$BATS_TEST_TMPDIR/inflight"
    [ "${lines[-1]}" = 502 ]
    [ "$(jq -r .error <<<"${lines[0]}")" = "the host running this request went away before it answered - try again" ]
    for i in $(seq 10); do
        out=$(execute "$i")
        [[ $out == *"HTTP/1.1 200"* ]] || fails=$((fails + 1))
        [ "$(member_of "$out")" != "$holder" ]
    done
    echo "# executions failed after the kill: $fails of 10, in $((($(date +%s%N) - started) / 1000000)) ms" >&3
    [ "$fails" -eq 0 ]
    run fcurl -w '\n%{http_code}' "$FRONT/v1/sessions/$sid/files/kept.txt"
    [ "${lines[-1]}" = 503 ]
    [[ $(jq -r .error <<<"${lines[0]}") == "the host that holds this session"*"is not available - try again when it is back" ]]

    "$C/member" "$n" up
    wait_members 3 30
    run fcurl "$FRONT/v1/sessions/$sid/files/kept.txt"
    [ "$output" = "written before the crash" ]
    out=$(fcurl -D - -X POST "$FRONT/v1/sessions/$sid/run" -H 'content-type: application/json' -d '{"language":"python","code":"print(open(\"/workspace/kept.txt\").read())"}')
    [[ $out == *"written before the crash"* ]]
    fcurl -X DELETE "$FRONT/v1/sessions/$sid" >/dev/null
}

@test "a member that joins takes work within 5 s of its registration" {
    local t0 out seen=""
    "$C/member" 3 down
    wait_members 2 15
    # Control: without it, nothing runs on m3.
    for i in $(seq 6); do
        seen="$seen $(member_of "$(execute "$i")")"
    done
    [[ $seen != *m3* ]]
    run jq length "${CLUSTER_DIR:-/var/lib/sandboxd-cluster-test}/front/prometheus.json"
    [ "$output" -eq 2 ]
    "$C/member" 3 up &
    for _ in $(seq 300); do
        if etcdctl_front get /sandboxd/members/m3 --keys-only | grep -q m3; then break; fi
        sleep 0.1
    done
    t0=$(date +%s%N)
    while [ $(($(date +%s%N) - t0)) -lt 5000000000 ]; do
        out=$(execute 1)
        if [ "$(member_of "$out")" = m3 ]; then break; fi
    done
    wait
    echo "# m3 took its first execution $((($(date +%s%N) - t0) / 1000000)) ms after it registered" >&3
    [ "$(member_of "$out")" = m3 ]
    wait_members 3 10
}

@test "etcd losing one of three changes nothing: registration, drain and the front go on" {
    "$C/etcd" kill 1
    for i in $(seq 6); do
        run execute "$i"
        [[ $output == *"HTTP/1.1 200"* ]]
    done
    # A write through etcd still reaches the front: a drain, then its end.
    run "$C/member" 3 run sandboxctl drain
    [ "$status" -eq 0 ]
    for _ in $(seq 50); do
        if servers | grep -q '^m3 2 8$'; then break; fi
        sleep 0.1
    done
    run servers
    [[ $output == *"m3 2 8"* ]]
    run "$C/member" 3 run sandboxctl undrain
    wait_members 3 10
    run "$C/member" 2 run sandboxctl cluster --json
    [ "$(jq length <<<"$output")" -eq 3 ]
    "$C/etcd" start 1
}

# The record of a member that is not there (m9, at an address nobody holds) under a lease of its own.
ghost_record() {
    printf '{"name":"m9","address":"10.77.0.99:8080","agent":"10.77.0.99:8081","state":"ready",%s,%s}' \
        '"pool":{"warm":0,"in_flight":0,"starting":0,"waiting":0,"max":1,"target":1,"created_total":0}' \
        '"sessions":{"active":0,"paused":0}'
}

@test "a member whose lease ended while the watcher was away leaves HAProxy when the watcher starts" {
    local lease
    lease=$(etcdctl_front lease grant 60 | awk '{ print $2 }')
    etcdctl_front put --lease="$lease" /sandboxd/members/m9 "$(ghost_record)" >/dev/null
    for _ in $(seq 50); do
        if servers | grep -q '^m9 '; then break; fi
        sleep 0.1
    done
    # Control: the watcher made it a server while its lease lasted.
    run servers
    [[ $output == *"m9 "* ]]
    "$C/front" stop-watcher
    etcdctl_front lease revoke "$lease" >/dev/null
    # Control: etcd no longer has it, HAProxy still does (nobody told it).
    [ -z "$(etcdctl_front get /sandboxd/members/m9 --keys-only)" ]
    run servers
    [[ $output == *"m9 "* ]]
    "$C/front" restart-watcher
    for _ in $(seq 50); do
        if ! servers | grep -q '^m9 '; then break; fi
        sleep 0.1
    done
    run servers
    [[ $output != *"m9 "* ]]
    [ "$(wc -l <<<"$output")" -eq 3 ]
    run grep -c '^m9 ' "$CLUSTER_DIR/front/members.map"
    [ "$output" = 0 ]
    wait_members 3 10
}

@test "the watcher restarting, HAProxy reloading and HAProxy restarting lose no request" {
    local pid log=$BATS_TEST_TMPDIR/requests master rc=0
    master=$(cat "$CLUSTER_DIR/front/haproxy.pid")
    /usr/bin/python3 "$C/load.py" --url "$FRONT" --sessions 0 --requests 1000 --concurrency 4 --netns sbxcl-front >"$log" 2>&1 &
    pid=$!
    sleep 1
    # Stopped softly while requests run, started again on the socket that stayed open.
    "$C/front" restart-haproxy
    # Control: the requests were still coming when HAProxy was back.
    kill -0 "$pid"
    sleep 1
    "$C/front" restart-watcher
    sleep 1
    "$C/front" reload-haproxy
    sleep 1
    "$C/front" restart-watcher
    kill -0 "$pid"
    wait "$pid" || rc=$?
    cat "$log" >&3
    [ "$rc" = 0 ]
    grep -q '^lost 0$' "$log"
    # Control: HAProxy was restarted (another master) and has every member again.
    [ "$(cat "$CLUSTER_DIR/front/haproxy.pid")" != "$master" ]
    wait_members 3 10
}

@test "HAProxy restarted while the watcher is away routes at once from the members it last had" {
    "$C/front" stop-watcher
    "$C/front" restart-haproxy --without-watcher
    run execute 6
    [[ $output == *"HTTP/1.1 200"* ]]
    run servers
    [ "$(wc -l <<<"$output")" -eq 3 ]
    "$C/front" restart-watcher
}

@test "1,000 mixed requests with sessions through the front: none lost, every member serving a fifth" {
    run /usr/bin/python3 "$C/load.py" --url "$FRONT" --sessions 6 --requests 1000 --concurrency 12 --netns sbxcl-front --members m1,m2,m3
    echo "$output" >&3
    [ "$status" -eq 0 ]
    [[ $output == *"lost 0"* ]]
}
