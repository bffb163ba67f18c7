#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Sessions (reference 002): a machine of the session's own that keeps state between runs, with
# long-lived python, node and bash interpreters, files that outlive pauses and restarts, and a life
# of create, run, exec, pause, resume, expire and delete, each recorded.
# The programs sent are in single quotes: their $ are the session's to expand.
# shellcheck disable=SC2016

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
}

teardown() {
    local id
    # A test that stopped the broker (a failed pause) has it back, whatever failed.
    in_systemd systemctl start sandboxd-broker.socket || true
    while read -r id; do
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
    done <"$created"
    if clear_settings zz-sessions; then
        wait_pool_full
    fi
}

# session_new [BODY]: a new session, its id in $sid (deleted after the test).
session_new() {
    if [ $# -ge 1 ]; then
        api POST /v1/sessions "$1"
    else
        api POST /v1/sessions
    fi
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >>"$created"
}

# run_in ID LANGUAGE CODE [EXTRA_JSON_FIELDS]: POST /v1/sessions/ID/run
run_in() {
    api POST "/v1/sessions/$1/run" "$(jq -cn --arg l "$2" --arg code "$3" "{language: \$l, code: \$code}${4:+ + $4}")"
    expect_status 200
}

# exec_in ID COMMAND [EXTRA_JSON_FIELDS]: POST /v1/sessions/ID/exec
exec_in() {
    api POST "/v1/sessions/$1/exec" "$(jq -cn --arg c "$2" "{command: \$c}${3:+ + $3}")"
    expect_status 200
}

# put_file ID PATH FILE: PUT the file's bytes, raw -> $code, $body
put_file() {
    local hdr
    hdr=$(mktemp)
    body=$(curl -s -D "$hdr" -X PUT "$SANDBOXD_URL/v1/sessions/$1/files/$2" -H 'content-type: application/octet-stream' --data-binary "@$3")
    read_headers "$hdr"
    openapi_check PUT "/v1/sessions/$1/files/$2" "$hdr" || { rm -f "$hdr"; return 1; }
    rm -f "$hdr"
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

# get_raw PATH: GET the path as it is written (curl --path-as-is: no dot segment resolved on the way)
# -> $code, $body, $rid, $ctype
get_raw() {
    local hdr
    hdr=$(mktemp)
    body=$(curl -s --path-as-is -D "$hdr" "$SANDBOXD_URL$1")
    read_headers "$hdr"
    rm -f "$hdr"
}

# disk_unmounted ID: the session's disk is mounted nowhere.
disk_unmounted() {
    local mounts
    mounts=$(in_systemd findmnt -rn -o TARGET)
    if grep -q "/run/sandboxd/disks/${1#session-}" <<<"$mounts"; then
        echo "the disk of $1 is still mounted" >&2
        return 1
    fi
}

# get_file ID PATH OUT: GET the file's bytes into OUT -> $code
get_file() {
    code=$(curl -s -o "$3" -w '%{http_code}' "$SANDBOXD_URL/v1/sessions/$1/files/$2")
}

@test "a session is created, shown, listed and deleted; then it is gone everywhere" {
    session_new '{"ttl_s": 120}'
    [[ $sid =~ ^session-[a-z2-7]{12}$ ]]
    [ "$(jq -c '[.state, .run_count, .ttl_s]' <<<"$body")" = '["active",0,120]' ]
    created_at=$(field .created_at)
    [[ $created_at =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]
    [ $(( $(date -d "$(field .expires_at)" +%s) - $(date -d "$(field .last_used)" +%s) )) -eq 120 ]
    # Its machine runs, on its own disk.
    [ -n "$(in_systemd systemctl list-units --plain --no-legend "$sid.service")" ]
    [ -f "/var/lib/sandboxd/sessions/$sid.img" ]

    api GET "/v1/sessions/$sid"
    expect_status 200
    [ "$(field .session_id)" = "$sid" ]
    api GET /v1/sessions
    expect_status 200
    [ "$(jq --arg s "$sid" '[.sessions[] | select(.session_id == $s)] | length' <<<"$body")" = 1 ]

    api DELETE "/v1/sessions/$sid"
    expect_status 200
    [ "$(jq -c . <<<"$body")" = "$(jq -cn --arg s "$sid" '{session_id: $s, state: "deleted"}')" ]
    api GET "/v1/sessions/$sid"
    expect_error 404 "session not found"
    api DELETE "/v1/sessions/$sid"
    expect_error 404 "session not found"
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(1)"}'
    expect_error 404 "session not found"
    api POST "/session/$sid/exec" '{"command":"true"}'
    expect_error 404 "session not found"
    api GET /v1/sessions
    [ "$(jq --arg s "$sid" '[.sessions[] | select(.session_id == $s)] | length' <<<"$body")" = 0 ]
    # The machine, its mount and its disk are gone.
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend "$sid.service")" ]
    disk_unmounted "$sid"
    [ ! -e "/var/lib/sandboxd/sessions/$sid.img" ]
    api GET /v1/sessions/session-aaaaaaaaaaaa
    expect_error 404 "session not found"
    api GET /v1/sessions/not-a-session
    expect_error 404 "session not found"
}

# bats test_tags=vm
@test "run answers in reference 002's shape, field by field, on both paths" {
    session_new
    for path in "/v1/sessions/$sid/run" "/session/$sid/run"; do
        api POST "$path" '{"language":"python","code":"print(6 * 7)","timeout":10}'
        expect_status 200
        [ "$(jq -c '[.status, .session_id == $s, .request_id == $r, .result.stdout, .result.stderr, .result.exit_code,
                     .result.termination_reason, .usage.timeout_limit_ms, .session.state, .session.state_reset, has("error")]' \
              --arg s "$sid" --arg r "$rid" <<<"$body")" = '["success",true,true,"42\n","",0,"success",10000,"active",false,false]' ] ||
            { echo "$body" >&2; false; }
        [ "$(jq -c '[.result.duration_ms, .result.guest_duration_ms, .usage.execution_time_ms, .usage.queue_wait_ms,
                     .usage.cpu_ms, .usage.memory_peak_bytes] | map(type == "number" and . >= 0) | all' <<<"$body")" = true ]
        # The round trip includes the run inside.
        [ "$(jq '.result.duration_ms >= .result.guest_duration_ms' <<<"$body")" = true ]
    done
    [ "$(field .session.run_count)" = 2 ]
    [[ $(field .session.last_used) =~ ^20[0-9-]+T[0-9:]+Z$ ]]

    # A non-zero exit is still HTTP 200, said in status and error.
    run_in "$sid" python 'import sys; print("out"); sys.exit(3)'
    [ "$(jq -c '[.status, .result.exit_code, .result.termination_reason, .error]' <<<"$body")" = \
        '["error",3,"exit",{"code":"execution_failed","message":"process exited with code 3"}]' ]
    run_in "$sid" python 'raise ValueError("bad")'
    [ "$(field .result.exit_code)" = 1 ]
    [[ $(field .result.stderr) == *"Traceback (most recent call last):"*"ValueError: bad"* ]]
    [ "$(field .error.code)" = execution_failed ]

    # exec: the same shape, with its own error code.
    exec_in "$sid" 'cd /workspace && pwd && exit 4'
    [ "$(jq -c '[.status, .result.stdout, .result.exit_code, .result.termination_reason, .error]' <<<"$body")" = \
        '["error","/workspace\n",4,"exit",{"code":"exec_failed","message":"process exited with code 4"}]' ]
    api POST "/session/$sid/exec" '{"command":"echo seed"}'
    expect_status 200
    [ "$(jq -c '[.status, .result.stdout]' <<<"$body")" = '["success","seed\n"]' ]
    # Only run and exec live at /session/.
    api POST "/session/$sid/pause" '{}'
    expect_status 404
}

@test "bad requests get a 400 naming the field; wrong methods a 405" {
    session_new
    api POST "/v1/sessions/$sid/run" 'nope'
    expect_error 400 "invalid JSON body"
    api POST "/v1/sessions/$sid/run" '{"code":"print(1)"}'
    expect_error 400 'language is required: "python", "node" or "bash"'
    api POST "/v1/sessions/$sid/run" '{"language":"ruby","code":"1"}'
    expect_error 400 'unsupported language "ruby"'
    api POST "/v1/sessions/$sid/run" '{"language":"python"}'
    expect_error 400 "code is required and must be a string"
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"1","timeout":901}'
    expect_error 400 "timeout must be between 1 and 900"
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"1","timeout":"5"}'
    expect_error 400 "timeout must be between 1 and 900"
    api POST "/v1/sessions/$sid/exec" '{"cmd":"ls"}'
    expect_error 400 "command is required and must be a string"
    api POST /v1/sessions '{"ttl_s":0}'
    expect_error 400 "ttl_s must be between 1 and 86400"
    api POST /v1/sessions '{"ttl_s":86401}'
    expect_error 400 "ttl_s must be between 1 and 86400"
    api POST /v1/sessions '{"files":[{"path":"../x","content_b64":""}]}'
    expect_error 400 "files[0].path must name a file"
    api PATCH "/v1/sessions/$sid"
    expect_error 405 "method not allowed"
    api GET "/v1/sessions/$sid/run"
    expect_error 405 "method not allowed"
    api PUT /v1/sessions '{}'
    expect_error 405 "method not allowed"
    # Nothing of it ran: the session has no run.
    api GET "/v1/sessions/$sid"
    [ "$(field .run_count)" = 0 ]
}

# bats test_tags=vm
@test "state carries over from run to run: python, node and bash, each in its own interpreter" {
    session_new
    run_in "$sid" python 'import json
data = {"answer": 42}'
    [ "$(jq -c '[.result.stdout, .result.exit_code]' <<<"$body")" = '["",0]' ]
    run_in "$sid" python 'print(json.dumps(data))'
    [ "$(field .result.stdout)" = '{"answer": 42}' ]
    # The last expression is not echoed, unlike a REPL's.
    run_in "$sid" python 'data["answer"] + 1'
    [ "$(field .result.stdout)" = "" ]

    run_in "$sid" node 'const fs = require("fs"); let n = 41; function twice(x) { return 2 * x; }'
    [ "$(field .result.exit_code)" = 0 ]
    run_in "$sid" node 'n += 1; console.log(n, twice(n), typeof fs.readFileSync)'
    [ "$(field .result.stdout)" = "42 84 function" ]
    run_in "$sid" node 'await new Promise(r => setTimeout(r, 50)); console.log("awaited", n)'
    [ "$(jq -c '[.result.stdout, .result.exit_code]' <<<"$body")" = '["awaited 42\n",0]' ] || { echo "$body" >&2; false; }

    run_in "$sid" bash 'mkdir -p sub && cd sub && export GREETING=hello && counter=7 && f() { echo "f:$1"; }'
    [ "$(field .result.exit_code)" = 0 ]
    run_in "$sid" bash 'pwd; echo "$GREETING $counter"; f x; sh -c "echo child:\$GREETING"'
    [ "$(field .result.stdout)" = "/workspace/sub
hello 7
f:x
child:hello" ]
    run_in "$sid" bash 'false'
    [ "$(jq -c '[.result.exit_code, .result.termination_reason]' <<<"$body")" = '[1,"exit"]' ]

    # Files written by any of them are seen by all, and by exec.
    run_in "$sid" python 'open("from-python.txt", "w").write("py")'
    run_in "$sid" node 'console.log(require("fs").readFileSync("/workspace/from-python.txt", "utf8"))'
    [ "$(field .result.stdout)" = py ]
    exec_in "$sid" 'cat from-python.txt; ls sub'
    [ "$(field .result.stdout)" = py ]
    [ "$(field .session.state_reset)" = false ]
    [ "$(field .session.run_count)" = 11 ]
}

@test "an interpreter that ends, a timeout, the memory limit: the state is lost and said so, the files stay" {
    session_new
    run_in "$sid" python 'x = 1; open("keep.txt", "w").write("kept")'
    # python's exit() does not end a notebook-like session: its state lives on.
    run_in "$sid" python 'import sys; sys.exit(5)'
    [ "$(jq -c '[.result.exit_code, .session.state_reset]' <<<"$body")" = '[5,false]' ]
    run_in "$sid" python 'print(x)'
    [ "$(field .result.stdout)" = 1 ]
    # os._exit ends the interpreter itself.
    run_in "$sid" python 'import os; os._exit(9)'
    [ "$(jq -c '[.result.exit_code, .session.state_reset]' <<<"$body")" = '[9,true]' ] || { echo "$body" >&2; false; }
    run_in "$sid" python 'print("x" in globals())'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["False\n",true]' ]
    run_in "$sid" python 'x = 2'
    [ "$(field .session.state_reset)" = false ]

    # A timeout: every process of the session goes, the files stay.
    exec_in "$sid" 'sleep 777 >/dev/null 2>&1 & echo started'
    # (^: not the shell that runs pgrep, whose command line holds the words too)
    exec_in "$sid" 'pgrep -f "^sleep 777" >/dev/null && echo running'
    [ "$(field .result.stdout)" = running ]
    SECONDS=0
    run_in "$sid" python 'import time; print("before", flush=True); time.sleep(100)' '{timeout: 2}'
    [ "$SECONDS" -lt 15 ]
    [ "$(jq -c '[.status, .result.exit_code, .result.termination_reason, .session.state_reset, .error.message, .usage.timeout_limit_ms]' <<<"$body")" = \
        '["error",-1,"timeout",true,"timed out after 2s",2000]' ] || { echo "$body" >&2; false; }
    exec_in "$sid" 'pgrep -f "^sleep 777" || echo gone; cat keep.txt'
    [ "$(field .result.stdout)" = "gone
kept" ]
    run_in "$sid" python 'print("x" in globals())'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["False\n",true]' ]

    # The memory limit (512 MiB): the kernel kills the code; the session goes on with its files.
    run_in "$sid" python 'y = 3
b = bytearray(2 << 30)
for i in range(0, len(b), 4096):
    b[i] = 1
print("survived")' '{timeout: 60}'
    [ "$(jq -c '[.status, .result.termination_reason, .session.state_reset, .error.message]' <<<"$body")" = \
        '["error","memory_limit",true,"the memory limit of 512 MiB was exceeded"]' ] || { echo "$body" >&2; false; }
    [[ $(field .result.stdout) != *survived* ]]
    run_in "$sid" python 'print(open("keep.txt").read(), "y" in globals())'
    [ "$(jq -c '[.result.stdout, .result.exit_code, .session.state_reset]' <<<"$body")" = '["kept False\n",0,true]' ]
    run_in "$sid" python 'print("again")'
    [ "$(field .session.state_reset)" = false ]
}

# bats test_tags=vm
@test "pause frees the machine and keeps the files; resume and a run on a paused session start afresh" {
    session_new
    run_in "$sid" python 'v = 10; open("data.bin", "wb").write(bytes(range(256)))'
    # nspawn 256 and later (Debian 13's) export a machine's sockets on a tmpfs of the host's, which
    # only nspawn's own exit takes away: a paused machine is killed, and must not leave it (its
    # next start, the resume below, would be refused).
    export_dir=/run/systemd/nspawn/unix-export/$sid
    exported=0
    if in_systemd test -d "$export_dir"; then exported=1; fi
    version=$(in_systemd systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
    [ "$version" -lt 256 ] || [ "$exported" = 1 ]
    api POST "/v1/sessions/$sid/pause"
    expect_status 200
    [ "$(jq -c '[.state, (.paused_at | type)]' <<<"$body")" = '["paused","string"]' ]
    # No machine, no mount; the disk is kept.
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend "$sid.service")" ]
    disk_unmounted "$sid"
    if [ "$exported" = 1 ]; then
        run in_systemd test -e "$export_dir"
        [ "$status" -ne 0 ]
    fi
    [ -f "/var/lib/sandboxd/sessions/$sid.img" ]
    api GET "/v1/sessions/$sid"
    [ "$(field .state)" = paused ]

    api POST "/v1/sessions/$sid/resume"
    expect_status 200
    [ "$(jq -c '[.state, .state_reset]' <<<"$body")" = '["active",true]' ]
    run_in "$sid" python 'print("v" in globals(), len(open("data.bin", "rb").read()))'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["False 256\n",true]' ]
    run_in "$sid" python 'v = 11'
    [ "$(field .session.state_reset)" = false ]

    # A run on a paused session resumes it first.
    api POST "/v1/sessions/$sid/pause"
    exec_in "$sid" 'ls data.bin'
    [ "$(jq -c '[.result.stdout, .session.state, .session.state_reset]' <<<"$body")" = '["data.bin\n","active",true]' ]
    [ -n "$(in_systemd systemctl list-units --plain --no-legend "$sid.service")" ]
}

@test "idle sessions are paused after ttl_s, a long run is not cut, paused ones are deleted after the retention" {
    with_settings zz-sessions SANDBOXD_SESSION_RETAIN_S=4
    session_new '{"ttl_s": 2}'
    # A run longer than ttl_s is use, not idleness.
    run_in "$sid" python 'import time; time.sleep(5); print("done")' '{timeout: 20}'
    [ "$(jq -c '[.result.stdout, .result.termination_reason]' <<<"$body")" = '["done\n","success"]' ]
    api GET "/v1/sessions/$sid"
    [ "$(field .state)" = active ]
    # Then idle: paused within ttl_s and the pool manager's next round.
    for _ in $(seq 300); do
        api GET "/v1/sessions/$sid"
        [ "$(field .state)" = paused ] && break
        sleep 0.1
    done
    [ "$(field .state)" = paused ]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend "$sid.service")" ]
    [ "$(db "SELECT count(*) FROM session_events WHERE session_id = '$sid' AND event = 'expire'")" = 1 ]
    # Paused past SANDBOXD_SESSION_RETAIN_S: deleted, disk and all.
    for _ in $(seq 100); do
        api GET "/v1/sessions/$sid"
        [ "$code" = 404 ] && break
        sleep 0.1
    done
    expect_error 404 "session not found"
    [ ! -e "/var/lib/sandboxd/sessions/$sid.img" ]
    [ "$(db "SELECT state FROM sessions WHERE session_id = '$sid'")" = deleted ]
}

@test "runs on one session queue in arrival order and say how long they waited; other sessions do not wait" {
    session_new
    a=$sid
    session_new
    b=$sid
    dir=$BATS_TEST_TMPDIR
    for i in 1 2 3; do
        curl -s -X POST "$SANDBOXD_URL/v1/sessions/$a/run" -H 'content-type: application/json' \
            -d "{\"language\":\"bash\",\"code\":\"echo $i >>order; sleep 1\"}" >"$dir/run$i" &
        sleep 0.3
    done
    SECONDS=0
    run_in "$b" bash 'echo other'
    [ "$SECONDS" -lt 2 ]
    [ "$(field .usage.queue_wait_ms)" = 0 ] || [ "$(jq '.usage.queue_wait_ms < 100' <<<"$body")" = true ]
    wait
    for i in 1 2 3; do [ "$(jq -r .status "$dir/run$i")" = success ]; done
    exec_in "$a" 'cat order | tr "\n" " "'
    [ "$(field .result.stdout)" = "1 2 3 " ]
    # The third waited for the two before it, the first for none.
    [ "$(jq '.usage.queue_wait_ms < 500' "$dir/run1")" = true ]
    [ "$(jq '.usage.queue_wait_ms > 1000' "$dir/run3")" = true ] || { cat "$dir/run3" >&2; false; }
}

@test "two sessions share nothing: files, processes, IPC" {
    session_new
    a=$sid
    session_new
    b=$sid
    exec_in "$a" 'echo secret >mine.txt; sleep 888 >/dev/null 2>&1 & ipcmk -Q >/dev/null; echo shm >/dev/shm/seg; echo ok'
    [ "$(field .result.stdout)" = ok ]
    # Positive controls: the session that made them sees them.
    exec_in "$a" 'cat mine.txt; pgrep -f "^sleep 888" >/dev/null && echo proc; ipcs -q | grep -c 0x; cat /dev/shm/seg'
    [ "$(field .result.stdout)" = "secret
proc
1
shm" ] || { echo "$body" >&2; false; }
    exec_in "$b" 'ls; pgrep -f "^sleep 888" || echo noproc; ipcs -q | grep -c 0x; cat /dev/shm/seg 2>&1 || true'
    [[ $(field .result.stdout) != *mine.txt* ]]
    [[ $(field .result.stdout) == *noproc*0*"No such file"* ]] || { echo "$body" >&2; false; }
    get_file "$b" mine.txt "$BATS_TEST_TMPDIR/x"
    [ "$code" = 404 ]
}

@test "a session has no network: the host's loopback answers this suite, not the session; its own loopback works" {
    session_new
    # Positive control: the host's port is open (this suite talks to it).
    curl -s -o /dev/null "$SANDBOXD_URL/v1/pool"
    exec_in "$sid" 'python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 8080), timeout=2)" 2>&1 | tail -n 1; ls /sys/class/net'
    [[ $(field .result.stdout) == *"Connection refused"*lo ]] || { echo "$body" >&2; false; }
    run_in "$sid" python 'import socket
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
c = socket.create_connection(srv.getsockname())
a, _ = srv.accept()
c.sendall(b"hi")
print(a.recv(2).decode())'
    [ "$(field .result.stdout)" = hi ]
}

@test "files go up and down exactly: 0 bytes, 1 byte, binary, 50 MiB; listed, removed" {
    session_new
    d=$BATS_TEST_TMPDIR
    : >"$d/empty"
    printf x >"$d/one"
    head -c 4096 /dev/urandom >"$d/binary"
    head -c $((50 << 20)) /dev/urandom >"$d/big"
    # What a request's own syntax could swallow: leading blanks, a comment, a slash.
    printf '\n  x' >"$d/blank"
    printf '// c\nx' >"$d/comment"
    for f in empty one binary big blank comment; do
        put_file "$sid" "in/$f.dat" "$d/$f"
        expect_status 201
        [ "$(jq -c . <<<"$body")" = "$(jq -cn --arg p "in/$f.dat" --argjson s "$(stat -c %s "$d/$f")" '{path: $p, size: $s}')" ]
        get_file "$sid" "in/$f.dat" "$d/$f.back"
        [ "$code" = 200 ]
        cmp "$d/$f" "$d/$f.back"
    done
    # The code sees them, byte for byte.
    run_in "$sid" python 'import hashlib; print(hashlib.sha256(open("in/big.dat", "rb").read()).hexdigest())'
    [ "$(field .result.stdout)" = "$(sha256sum "$d/big" | cut -d' ' -f1)" ]
    api GET "/v1/sessions/$sid/files?dir=in"
    expect_status 200
    [ "$(jq -c '[.files[] | [.path, .size, .type]] | sort' <<<"$body")" = \
        "$(jq -cn '[["in/big.dat",52428800,"file"],["in/binary.dat",4096,"file"],["in/blank.dat",4,"file"],["in/comment.dat",6,"file"],
                   ["in/empty.dat",0,"file"],["in/one.dat",1,"file"]]')" ]
    api GET "/v1/sessions/$sid/files"
    [ "$(jq -c '[.files[] | [.path, .type]]' <<<"$body")" = '[["in","directory"]]' ]
    [[ $(field '.files[0].modified') =~ ^20[0-9-]+T[0-9:]+Z$ ]]
    api DELETE "/v1/sessions/$sid/files/in/one.dat"
    expect_status 200
    get_file "$sid" in/one.dat "$d/x"
    [ "$code" = 404 ]
    api DELETE "/v1/sessions/$sid/files/in/one.dat"
    expect_error 404 "file not found"
    api GET "/v1/sessions/$sid/files?dir=nope"
    expect_error 404 "directory not found"
    api DELETE "/v1/sessions/$sid/files/in"
    expect_status 200
    api GET "/v1/sessions/$sid/files"
    [ "$(field '.files | length')" = 0 ]
    # Files given at creation are there from the start.
    session_new "$(jq -cn --arg c "$(printf 'a,b\n1,2\n' | base64 -w0)" '{files: [{path: "d/in.csv", content_b64: $c}]}')"
    exec_in "$sid" 'cat d/in.csv'
    [ "$(field .result.stdout)" = "a,b
1,2" ]
}

@test "paths that climb out of the working directory are refused, and so are links the code made" {
    session_new
    printf data >"$BATS_TEST_TMPDIR/f"
    put_file "$sid" ok.txt "$BATS_TEST_TMPDIR/f"
    expect_status 201
    for p in '..%2F..%2Fetc%2Fpasswd' '%2E%2E/x' 'a/..%2F..%2Fx'; do
        get_raw "/v1/sessions/$sid/files/$p"
        [ "$code" = 400 ] || { echo "$p: $code $body" >&2; false; }
        [[ $(field .error) == "file path escapes working directory: '"*"'" ]]
    done
    api GET "/v1/sessions/$sid/files?dir=.."
    expect_error 400 "file path escapes working directory: '..'"
    # A link the code made that leads out is not followed, up or down.
    exec_in "$sid" 'ln -s /etc/passwd pw; ln -s .. up; ln -s ok.txt inside; echo made'
    get_file "$sid" inside "$BATS_TEST_TMPDIR/in"
    [ "$code" = 200 ]
    [ "$(cat "$BATS_TEST_TMPDIR/in")" = data ]
    get_file "$sid" pw "$BATS_TEST_TMPDIR/pw"
    [ "$code" != 200 ]
    run grep -q root: "$BATS_TEST_TMPDIR/pw"
    [ "$status" -ne 0 ]
    put_file "$sid" up/escaped.txt "$BATS_TEST_TMPDIR/f"
    [ "$code" = 400 ] || [ "$code" = 404 ]
    exec_in "$sid" 'ls /workspace/../escaped.txt 2>/dev/null || echo absent'
    [ "$(field .result.stdout)" = absent ]
}

@test "the session's disk is its limit: the code gets ENOSPC, an upload 507, the host's disk is untouched" {
    with_settings zz-sessions SANDBOXD_SESSION_DISK_BYTES=33554432
    session_new
    exec_in "$sid" 'head -c 64M /dev/zero >big; echo "status $?"; stat -c %s big' '{timeout: 60}'
    [[ $(field .result.stderr) == *"No space left on device"* ]] || { echo "$body" >&2; false; }
    written=$(field .result.stdout | sed -n 2p)
    [ "$written" -lt $((32 << 20)) ]
    # The image holds what was written, no more: the sparse file is the limit's size at most.
    [ "$(du -B1 "/var/lib/sandboxd/sessions/$sid.img" | cut -f1)" -le $((34 << 20)) ]
    exec_in "$sid" 'rm big; echo freed'
    head -c $((40 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/toobig"
    put_file "$sid" toobig "$BATS_TEST_TMPDIR/toobig"
    expect_error 507 "no space left on the session's disk"
    api GET "/v1/sessions/$sid/files"
    [ "$(field '.files | map(.path) | join(",")')" = "" ] || { echo "$body" >&2; false; }
    head -c $((1 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/fits"
    put_file "$sid" fits "$BATS_TEST_TMPDIR/fits"
    expect_status 201
}

# get_file_full ID PATH OUT: GET the file's bytes into OUT -> $code, $rid, $ctype, $length
get_file_full() {
    local hdr
    hdr=$(mktemp)
    code=$(curl -s -D "$hdr" -o "$3" -w '%{http_code}' "$SANDBOXD_URL/v1/sessions/$1/files/$2")
    read_headers "$hdr"
    length=$(awk 'tolower($1) == "content-length:" { sub("\r", "", $2); print $2 }' "$hdr")
    rm -f "$hdr"
}

@test "downloads stream: over the cap is 413 before a byte is read, the machine and its state live on; under it comes whole" {
    local cap=$((128 << 20)) sum machine
    session_new
    run_in "$sid" python 'kept = 42'
    machine=$(in_systemd systemctl show -P InvocationID "$sid.service")
    [ -n "$machine" ]
    exec_in "$sid" "truncate -s 4G sparse.bin && head -c $((cap - 1)) /dev/urandom >under.bin && sha256sum under.bin" '{timeout: 60}'
    sum=$(field .result.stdout | cut -d' ' -f1)
    [ ${#sum} = 64 ]
    # 4 GiB of a sparse file: refused in the cap's words, the session's machine untouched.
    api GET "/v1/sessions/$sid/files/sparse.bin"
    expect_error 413 "the file is larger than $cap bytes, the most sandboxd moves at once (SANDBOXD_SESSION_UPLOAD_BYTES)"
    entry=$(journal_entry "$rid")
    [ "$(jq -c '[.STATUS, .SESSION_ID]' <<<"$entry")" = "$(jq -cn --arg s "$sid" '["413", $s]')" ]
    run_in "$sid" python 'print(kept)'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["42\n",false]' ] || { echo "$body" >&2; false; }
    [ "$(in_systemd systemctl show -P InvocationID "$sid.service")" = "$machine" ]
    # One byte under the cap: whole, its length announced.
    get_file_full "$sid" under.bin "$BATS_TEST_TMPDIR/under"
    [ "$code" = 200 ]
    [ "$ctype" = application/octet-stream ]
    [ "$length" = $((cap - 1)) ]
    expect_request_id
    [ "$(sha256sum "$BATS_TEST_TMPDIR/under" | cut -d' ' -f1)" = "$sum" ]
    entry=$(journal_entry "$rid")
    [ "$(jq -r .STATUS <<<"$entry")" = 200 ]
    rm -f "$BATS_TEST_TMPDIR/under"
    # One byte over: refused as well; at the cap exactly, not.
    exec_in "$sid" 'truncate -s +2 under.bin && stat -c %s under.bin'
    [ "$(field .result.stdout)" = $((cap + 1)) ]
    api GET "/v1/sessions/$sid/files/under.bin"
    expect_error 413 "the file is larger than $cap bytes, the most sandboxd moves at once (SANDBOXD_SESSION_UPLOAD_BYTES)"
    exec_in "$sid" 'truncate -s -1 under.bin'
    get_file_full "$sid" under.bin /dev/null
    [ "$code" = 200 ]
    [ "$length" = "$cap" ]
    run_in "$sid" python 'print(kept)'
    [ "$(field .result.stdout)" = 42 ]
    [ "$(db "SELECT count(*) FROM session_events WHERE session_id = '$sid' AND event = 'reset'")" = 0 ]
}

@test "a client that goes away mid-download leaves nothing behind: the session serves its next operation at once" {
    session_new
    run_in "$sid" python 'kept = 5'
    exec_in "$sid" 'head -c 100M /dev/urandom >big.bin && echo made' '{timeout: 60}'
    # 100 MiB at 1 MiB/s: the client is gone after a second.
    run curl -s -o /dev/null --limit-rate 1M --max-time 1 -D "$BATS_TEST_TMPDIR/hdr" "$SANDBOXD_URL/v1/sessions/$sid/files/big.bin"
    [ "$status" = 28 ]
    read_headers "$BATS_TEST_TMPDIR/hdr"
    [ "$code" = 200 ]
    expect_request_id
    # Its request is recorded (the worker finished with it), and the session's turn is free.
    journal_entry "$rid" >/dev/null
    SECONDS=0
    run_in "$sid" python 'print(kept)'
    [ "$(field .result.stdout)" = 5 ]
    [ "$SECONDS" -lt 10 ]
    [ "$(field '.usage.queue_wait_ms < 1000')" = true ]
    [ "$(db "SELECT count(*) FROM session_queue WHERE session_id = '$sid'")" = 0 ]
}

# A pause stops the machine through the broker: with the broker down, the pause fails before
# anything was stopped. The session must go on with its machine, not lose it to a start that
# systemd refuses for the unit that is still there.
@test "a pause that fails (the broker down) leaves the session usable, on its machine, with its state; no unit is left" {
    session_new
    run_in "$sid" python 'kept = 7'
    machine=$(in_systemd systemctl show -P InvocationID "$sid.service")
    in_systemd systemctl stop sandboxd-broker.socket sandboxd-broker.service
    api POST "/v1/sessions/$sid/pause"
    in_systemd systemctl start sandboxd-broker.socket
    expect_status 502
    expect_request_id
    [[ $(field .error) == "the session's machine failed: it could not be stopped: "* ]] || { echo "$body" >&2; false; }
    [ "$(jq -r .STATUS <<<"$(journal_entry "$rid")")" = 502 ]
    api GET "/v1/sessions/$sid"
    [ "$(field .state)" = active ]
    run_in "$sid" python 'print(kept)'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["7\n",false]' ] || { echo "$body" >&2; false; }
    [ "$(in_systemd systemctl show -P InvocationID "$sid.service")" = "$machine" ]
    # The pause works now, and leaves no machine.
    api POST "/v1/sessions/$sid/pause"
    expect_status 200
    [ "$(field .state)" = paused ]
    [ -z "$(in_systemd systemctl list-units --all --plain --no-legend "$sid.service")" ]
    disk_unmounted "$sid"
}

@test "past SANDBOXD_SESSIONS_MAX active sessions, creating one is 503; a paused one does not count" {
    with_settings zz-sessions SANDBOXD_SESSIONS_MAX=1
    session_new
    first=$sid
    api POST /v1/sessions '{}'
    expect_error 503 "too many active sessions (the limit is 1) - delete or pause one and try again"
    api POST "/v1/sessions/$first/pause"
    session_new
    api POST "/v1/sessions/$first/resume"
    expect_error 503 "too many active sessions (the limit is 1) - delete or pause one and try again"
    api POST "/v1/sessions/$first/run" '{"language":"python","code":"print(1)"}'
    expect_error 503 "too many active sessions (the limit is 1) - delete or pause one and try again"
}

# bats test_tags=vm
@test "a session survives a restart of the service, state and all; every event is recorded" {
    session_new
    run_in "$sid" python 'kept = 41'
    put_file "$sid" f.txt <(printf restart)
    in_systemd systemctl restart sandbox-api.service
    tests_wait=0
    until curl -s -o /dev/null "$SANDBOXD_URL/v1/pool"; do sleep 0.1; tests_wait=$((tests_wait + 1)); [ $tests_wait -lt 100 ]; done
    run_in "$sid" python 'print(kept + 1, open("f.txt").read())'
    [ "$(jq -c '[.result.stdout, .session.state_reset]' <<<"$body")" = '["42 restart\n",false]' ] || { echo "$body" >&2; false; }
    api POST "/v1/sessions/$sid/pause"
    api POST "/v1/sessions/$sid/resume"
    exec_in "$sid" true
    api DELETE "/v1/sessions/$sid"
    [ "$(db "SELECT group_concat(event, ' ') FROM (SELECT event FROM session_events WHERE session_id = '$sid' AND event IN
            ('create', 'run', 'exec', 'upload', 'pause', 'resume', 'delete') ORDER BY id)")" = "create run upload run pause resume exec delete" ]
    # Each with its request, in sqlite and in the journal.
    [ "$(db "SELECT count(*) FROM session_events WHERE session_id = '$sid' AND request_id IS NULL")" = 0 ]
    req=$(db "SELECT request_id FROM session_events WHERE session_id = '$sid' AND event = 'create'")
    entry=$(poll in_systemd journalctl -q -o json "SESSION_ID=$sid" SESSION_EVENT=create)
    [ "$(jq -r .REQUEST_ID <<<"$entry")" = "$req" ]
    [ "$(db "SELECT count(*) FROM requests WHERE session_id = '$sid'")" -ge 7 ]
}

@test "a session survives a reboot of the host: paused, its files kept, resumed by its next run" {
    session_new
    run_in "$sid" python 'lost = 1; open("survivor.txt", "w").write("still here")'
    # What a reboot does: every process, mount and runtime file gone; /var/lib kept. The new
    # systemd must not hold bats's descriptors open (bats would wait for them to close).
    "$SANDBOXD_HOST" down
    without_fds "$SANDBOXD_HOST" up
    for _ in $(seq 300); do curl -s -o /dev/null "$SANDBOXD_URL/v1/pool" && break; sleep 0.1; done
    api GET "/v1/sessions/$sid"
    expect_status 200
    [ "$(field .state)" = paused ] || { echo "$body" >&2; false; }
    run_in "$sid" python 'print(open("survivor.txt").read(), "lost" in globals())'
    [ "$(jq -c '[.result.stdout, .session.state, .session.state_reset]' <<<"$body")" = '["still here False\n","active",true]' ]
    wait_pool_full
}
