#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Output as the code writes it: Accept: text/event-stream on POST /v1/execute, POST /execute and a
# session's run and exec answers with server-sent events (stdout, stderr, comments while nothing
# comes, and a last "result" whose data is the body the same request answers unstreamed), parsed
# by a client as callers write them (sse-client.py).

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

teardown() {
    if [ -f "$BATS_TEST_TMPDIR/session" ]; then
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$(cat "$BATS_TEST_TMPDIR/session")"
    fi
    expect_no_leftovers
}

# stream PATH BODY [--stop-after N]: the events of the streamed answer, one JSON object a line, in
# $BATS_TEST_TMPDIR/events; its first line (status, content type) in $head.
stream() {
    local path=$1
    printf '%s' "$2" >"$BATS_TEST_TMPDIR/req"
    shift 2
    "$BATS_TEST_DIRNAME/sse-client.py" "$SANDBOXD_URL$path" "$BATS_TEST_TMPDIR/req" "$@" >"$BATS_TEST_TMPDIR/events"
    head=$(head -n 1 "$BATS_TEST_TMPDIR/events")
}

# events JQ_FILTER: the filter over every event line but the head, slurped.
events() {
    tail -n +2 "$BATS_TEST_TMPDIR/events" | jq -s -c "$1"
}

# The result event's data.
result() {
    tail -n +2 "$BATS_TEST_TMPDIR/events" | jq -c 'select(.event == "result") | .data'
}

# What the stdout (or stderr) events carried, decoded, as the code wrote it.
stream_bytes() {
    tail -n +2 "$BATS_TEST_TMPDIR/events" | jq -j --arg e "$1" 'select(.event == $e) | .data | if .base64 then .data else (.data | @base64) end + "\n"' |
        while read -r b; do printf '%s' "$b" | base64 -d; done
}

# bats test_tags=vm
@test "a streamed execution: stdout and stderr as the code writes them, then the body the request answers unstreamed" {
    # The positive control: the same code, unstreamed, answers JSON.
    body_json=$(code_json 'import sys, time
print("first", flush=True)
print("oops", file=sys.stderr, flush=True)
time.sleep(2)
print("second")')
    api POST /v1/execute "$body_json"
    expect_status 200
    [ "$ctype" = application/json ]
    plain_keys=$(jq -c keys <<<"$body")

    stream /v1/execute "$body_json"
    [ "$(jq -r .status <<<"$head")" = 200 ]
    [ "$(jq -r .content_type <<<"$head")" = text/event-stream ]
    # The first line came while the code still slept: 2 s before the result, not with it.
    first=$(events '[.[] | select(.event == "stdout")][0]')
    [ "$(jq -r .data.data <<<"$first")" = first ]
    [ "$(events '[.[] | select(.event == "stderr")][0].data.data')" = '"oops\n"' ]
    gap=$(events '([.[] | select(.event == "result")][0].t) - ([.[] | select(.event == "stdout")][0].t)')
    awk -v g="$gap" 'BEGIN { exit !(g >= 1.5) }'
    # The result is last, and is the unstreamed body: its fields, the output the events carried.
    [ "$(events '.[-1].event')" = '"result"' ]
    [ "$(result | jq -c keys)" = "$plain_keys" ]
    [ "$(result | jq -r .stdout)" = "$(printf 'first\nsecond')" ]
    [ "$(stream_bytes stdout)" = "$(result | jq -r .stdout)" ]
    [ "$(result | jq -r .exit_code)" = 0 ]
}

@test "without Accept: text/event-stream nothing changes; errors before the code starts keep their status" {
    api POST /v1/execute '{"code":"print(1)"}'
    expect_status 200
    [ "$ctype" = application/json ]
    stream /v1/execute '{"language":"python"}'
    [ "$(jq -r .status <<<"$head")" = 400 ]
    [ "$(jq -r .content_type <<<"$head")" = application/json ]
    [ "$(jq -r .body <<<"$head" | jq -r .error)" = "code is required and must be a string" ]
    stream /v1/sessions/session-aaaaaaaaaaaa/run '{"language":"python","code":"print(1)"}'
    [ "$(jq -r .status <<<"$head")" = 404 ]
    [ "$(jq -r .body <<<"$head" | jq -r .error)" = "session not found" ]
}

@test "POST /execute streams too, its result in reference 004's shape" {
    stream /execute '{"language":"python","code":"print(42)"}'
    [ "$(jq -r .content_type <<<"$head")" = text/event-stream ]
    [ "$(events '[.[] | select(.event == "stdout") | .data.data] | join("")')" = '"42\n"' ]
    [ "$(result | jq -r .stdout)" = 42 ]
    [ "$(result | jq -r '.execution_details | has("output_files")')" = true ]
}

@test "bytes that are not UTF-8 come as base64, and a character cut between two writes comes whole" {
    stream /v1/execute "$(code_json 'import sys, time
sys.stdout.buffer.write(b"caf\xc3"); sys.stdout.flush(); time.sleep(0.5)
sys.stdout.buffer.write(b"\xa9!\n"); sys.stdout.flush(); time.sleep(0.5)
sys.stdout.buffer.write(b"bad \xff\n")')"
    # Three writes, three events: the cut "é" waited for its second byte.
    [ "$(events '[.[] | select(.event == "stdout") | .data]')" = \
        '[{"data":"caf","base64":false},{"data":"é!\n","base64":false},{"data":"YmFkIP8K","base64":true}]' ]
    [ "$(stream_bytes stdout | od -An -tx1 | tr -d ' \n')" = "$(printf 'caf\xc3\xa9!\nbad \xff\n' | od -An -tx1 | tr -d ' \n')" ]
    # The result's text is the JSON string the unstreamed body has: the stray byte replaced.
    [ "$(result | jq -r .stdout)" = "$(printf 'café!\nbad \xef\xbf\xbd')" ]
}

@test "output past the cap: streamed up to the cap, and the result says it was cut" {
    stream /v1/execute "$(code_json 'import sys
for _ in range(3):
    sys.stdout.write("x" * (1 << 20)); sys.stdout.flush()')"
    cap=$(result | jq -r '.stdout | length')
    [ "$cap" -ge 65536 ]
    [ "$(result | jq -r .stdout_truncated)" = true ]
    [ "$(stream_bytes stdout | wc -c)" -eq "$cap" ]
}

@test "a run that prints nothing for a while: a comment line keeps the stream alive" {
    stream /v1/execute "$(code_json 'import time
time.sleep(12)
print("late")' '{timeout_s: 30}')"
    # A comment before the output, within 15 s of the start.
    first_comment=$(events '[.[] | select(.comment)][0].t')
    [ "$first_comment" != null ]
    awk -v t="$first_comment" 'BEGIN { exit !(t <= 15) }'
    [ "$(events '([.[] | select(.comment)][0].t) < ([.[] | select(.event == "stdout")][0].t)')" = true ]
    [ "$(result | jq -r .stdout)" = late ]
}

@test "a streamed execution past its timeout: the result is the timeout's body" {
    stream /v1/execute "$(code_json 'import time
print("started", flush=True)
time.sleep(30)' '{timeout_s: 2}')"
    [ "$(events '[.[] | select(.event == "stdout")][0].data.data')" = '"started\n"' ]
    [ "$(result | jq -r .stderr)" = "timed out after 2s" ]
    [ "$(result | jq -r .exit_code)" = -1 ]
}

@test "a client that goes away from a streamed execution ends its run, and the record says so" {
    marker="sbx-sgone-$RANDOM$RANDOM"
    code_json "import subprocess, time
subprocess.Popen($(marker_argv "$marker"))
print('running', flush=True)
time.sleep(50)" '{timeout_s: 60}' >"$BATS_TEST_TMPDIR/body"
    "$BATS_TEST_DIRNAME/sse-client.py" "$SANDBOXD_URL/v1/execute" "$BATS_TEST_TMPDIR/body" --stop-after 1 >"$BATS_TEST_TMPDIR/events"
    # It ran (the positive control of its end), and the client went after its first event.
    [ "$(tail -n 1 "$BATS_TEST_TMPDIR/events" | jq -r .data.data)" = "running" ]
    expect_execution_abandoned "$marker"
}

@test "a streamed session run and exec: their output as it comes, then the session's result" {
    api POST /v1/sessions '{"ttl_s": 600}'
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >"$BATS_TEST_TMPDIR/session"
    stream "/v1/sessions/$sid/run" '{"language":"python","code":"import time\nx = 7\nprint(\"a\", flush=True)\ntime.sleep(1.5)\nprint(\"b\")"}'
    [ "$(jq -r .content_type <<<"$head")" = text/event-stream ]
    gap=$(events '([.[] | select(.event == "result")][0].t) - ([.[] | select(.event == "stdout")][0].t)')
    awk -v g="$gap" 'BEGIN { exit !(g >= 1) }'
    [ "$(result | jq -r .status)" = success ]
    [ "$(result | jq -r .result.stdout)" = "$(printf 'a\nb')" ]
    [ "$(result | jq -r .session.run_count)" = 1 ]
    stream "/v1/sessions/$sid/exec" '{"command":"echo one; sleep 1; echo two >&2"}'
    [ "$(events '[.[] | select(.event != "result") | .event + ":" + .data.data] | join("")')" = '"stdout:one\nstderr:two\n"' ]
    [ "$(result | jq -r .result.stderr)" = two ]
    # The interpreter's state is the session's, streamed or not.
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(x)"}'
    expect_status 200
    [ "$(field .result.stdout)" = 7 ]
}

@test "a streamed session run goes on when its client goes: its answer is the session's \"unread\" event" {
    api POST /v1/sessions '{"ttl_s": 600}'
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >"$BATS_TEST_TMPDIR/session"
    jq -cn '{language: "python", code: "import time\nprint(\"start\", flush=True)\ntime.sleep(3)\nopen(\"done\", \"w\").write(\"yes\")\nprint(\"end\")"}' \
        >"$BATS_TEST_TMPDIR/body"
    "$BATS_TEST_DIRNAME/sse-client.py" "$SANDBOXD_URL/v1/sessions/$sid/run" "$BATS_TEST_TMPDIR/body" --stop-after 1 >"$BATS_TEST_TMPDIR/events"
    [ "$(tail -n 1 "$BATS_TEST_TMPDIR/events" | jq -r .data.data)" = "start" ]
    # The next op takes its turn after the run: the file is there, the run went on to its end.
    api POST "/v1/sessions/$sid/run" '{"language":"python","code":"print(open(\"done\").read())"}'
    expect_status 200
    [ "$(field .result.stdout)" = yes ]
    unread=$(poll db "SELECT detail FROM session_events WHERE session_id = '$sid' AND event = 'unread'")
    [ "$(jq -r .result.stdout <<<"$unread")" = "$(printf 'start\nend')" ]
    [ "$(jq -r .status <<<"$unread")" = success ]
    row=$(db "SELECT status, error FROM requests WHERE session_id = '$sid' AND route LIKE 'POST %/run' ORDER BY rowid ASC LIMIT 1")
    [[ $row == "200|the client closed the stream before the run ended"* ]]
}
