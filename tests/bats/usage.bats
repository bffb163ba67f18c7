#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# What each run used, from its cgroup: "usage": {"cpu_ms", "memory_peak_bytes"} in the responses of
# executions, tool calls and session runs, the same figures in the sqlite row and the journal
# entry. The figures are the cgroup's, not the processes' resource usage: CPU time of a process the
# code never waited for, and memory held by several processes at once or by files in the sandbox's
# tmpfs, count; neither getrusage() of the reaped processes nor the largest resident set would.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

MIB=1048576

# usage_of: the response's usage as "CPU_MS MEMORY_PEAK_BYTES".
usage_of() {
    jq -r '"\(.usage.cpu_ms) \(.usage.memory_peak_bytes)"' <<<"$body"
}

# bats test_tags=vm
@test "an execution's usage: a trivial one uses little, a busy one its CPU time, a big one its memory" {
    execute "$(code_json 'print(1)')"
    expect_status 200
    read -r cpu mem <<<"$(usage_of)"
    echo "trivial: $cpu ms, $mem bytes"
    [ "$cpu" -ge 0 ]
    # Under software emulation (tests/vm), everything costs some ten times the CPU.
    [ "$cpu" -lt $((250 * ${SANDBOXD_TEST_CPU_SCALE:-1})) ]
    [ "$mem" -gt 0 ]
    [ "$mem" -lt $((64 * MIB)) ]

    execute "$(code_json $'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass')"
    expect_status 200
    read -r cpu mem <<<"$(usage_of)"
    echo "busy: $cpu ms"
    [ "$cpu" -ge 450 ]

    execute "$(code_json $'x = bytearray(160 << 20)\nx[::4096] = b"\\1" * len(x[::4096])\nprint(len(x))')"
    expect_status 200
    read -r cpu mem <<<"$(usage_of)"
    echo "big: $mem bytes"
    [ "$mem" -ge $((160 * MIB)) ]
}

@test "the CPU time of a process the code never waited for is counted" {
    # A child that spins for 0.6 s, says so and sleeps; the code leaves without waiting for it, so
    # its time is in no getrusage() of the sandbox's init, which never reaps it (the code itself
    # uses a few milliseconds).
    spin=$'import subprocess\np = subprocess.Popen(["/usr/bin/python3", "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.6: pass\\nprint(1, flush=True)\\ntime.sleep(30)"], stdout=subprocess.PIPE)\np.stdout.readline()'
    execute "$(code_json "$spin")"
    expect_status 200
    read -r cpu _ <<<"$(usage_of)"
    echo "not waited for: $cpu ms"
    [ "$cpu" -ge 550 ]
}

@test "memory held by two processes at once, and by files in /tmp, is counted together" {
    # Two processes of 96 MiB each at the same time, and 64 MiB in the sandbox's /tmp: the largest
    # process alone is 96 MiB.
    two=$'import os, subprocess\nopen("/tmp/f", "wb").write(b"x" * (64 << 20))\nx = bytearray(96 << 20)\nx[::4096] = b"\\1" * len(x[::4096])\nsubprocess.run(["/usr/bin/python3", "-c", "x = bytearray(96 << 20); x[::4096] = b\\"\\\\1\\" * len(x[::4096])"], check=True)\nprint("ok")'
    execute "$(code_json "$two")"
    expect_status 200
    [ "$(field .stdout)" = ok ]
    read -r _ mem <<<"$(usage_of)"
    echo "together: $mem bytes"
    [ "$mem" -ge $((250 * MIB)) ]
}

# bats test_tags=vm
@test "the usage is in the sqlite row and the journal entry, as answered" {
    execute "$(code_json $'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass')"
    expect_status 200
    read -r cpu mem <<<"$(usage_of)"
    [ "$(db "SELECT cpu_ms, memory_peak_bytes FROM requests WHERE request_id = '$rid'")" = "$cpu|$mem" ]
    entry=$(journal_entry "$rid")
    [ "$(jq -r .CPU_MS <<<"$entry")" = "$cpu" ]
    [ "$(jq -r .MEMORY_PEAK_BYTES <<<"$entry")" = "$mem" ]
}

@test "a run cut by its timeout still has its CPU time, from its machine's cgroup" {
    execute "$(code_json 'while True: pass' '{timeout_s: 1}')"
    expect_status 200
    [ "$(field .exit_code)" = -1 ]
    read -r cpu mem <<<"$(usage_of)"
    echo "timeout: $cpu ms, $mem bytes"
    [ "$cpu" -ge 500 ]
    [ "$mem" -gt 0 ]
    [ "$(db "SELECT cpu_ms, termination FROM requests WHERE request_id = '$rid'")" = "$cpu|timeout" ]
}

@test "a request that ran nothing has no usage recorded" {
    execute '{"code": 5}'
    expect_status 400
    [ "$(db "SELECT coalesce(cpu_ms, 'null'), coalesce(memory_peak_bytes, 'null') FROM requests WHERE request_id = '$rid'")" = "null|null" ]
    [ "$(jq -r .CPU_MS <<<"$(journal_entry "$rid")")" = "" ]
}

@test "reference 004's /execute and node and bash carry the usage too" {
    api POST /execute "$(code_json 'print(1)')"
    expect_status 200
    [ "$(jq -r '.usage.cpu_ms | type' <<<"$body")" = number ]
    for lang in node bash; do
        case $lang in node) c='console.log(1)' ;; bash) c='echo 1' ;; esac
        execute "$(jq -cn --arg c "$c" --arg l "$lang" '{code: $c, language: $l}')"
        expect_status 200
        read -r cpu mem <<<"$(usage_of)"
        echo "$lang: $cpu ms, $mem bytes"
        [ "$cpu" -ge 0 ]
        [ "$mem" -gt 0 ]
    done
}

# bats test_tags=vm
@test "a session run's usage is the sandbox's since the previous run (that run and what ran between), and recorded" {
    api POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    api POST "/v1/sessions/$sid/run" "$(jq -cn '{language: "python", code: "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass"}')"
    expect_status 200
    cpu=$(field .usage.cpu_ms)
    echo "session busy: $cpu ms"
    [ "$cpu" -ge 350 ]
    [ "$(db "SELECT cpu_ms FROM requests WHERE request_id = '$rid'")" = "$cpu" ]
    api POST "/v1/sessions/$sid/run" '{"language": "python", "code": "print(1)"}'
    expect_status 200
    cpu=$(field .usage.cpu_ms)
    echo "session trivial: $cpu ms"
    [ "$cpu" -lt 200 ]
    api DELETE "/v1/sessions/$sid"
}

@test "a tool call's usage is its unit's cgroup's, in its response and its row" {
    api POST /v1/call '{"image":"demo-agent","function":"add","args":{"a":2,"b":3}}'
    expect_status 200
    read -r cpu mem <<<"$(usage_of)"
    echo "tool call: $cpu ms, $mem bytes"
    [ "$cpu" -gt 0 ]
    [ "$mem" -gt $MIB ]
    [ "$(db "SELECT cpu_ms, memory_peak_bytes FROM requests WHERE request_id = '$rid'")" = "$cpu|$mem" ]
}
