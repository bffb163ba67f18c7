# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Shared helpers for the end-to-end suites: real HTTP through nginx, the real journal and database.

SANDBOXD_URL=${SANDBOXD_URL:-http://127.0.0.1:8080}
SANDBOXD_DB=${SANDBOXD_DB:-/var/lib/sandboxd/db/sandboxd.db}
SANDBOXD_HOST=${SANDBOXD_HOST:-/usr/local/sbin/sandboxd-host}

# The stack must be up (make run, or make test which brings it up); a missing stack is a failure.
require_stack() {
    if ! curl -s -o /dev/null "$SANDBOXD_URL/"; then
        echo "sandboxd is not answering on $SANDBOXD_URL (run: make run)" >&2
        return 1
    fi
}

# read_headers FILE: $code (the last status line: not a 100 Continue), $rid (X-Request-Id), $ctype
read_headers() {
    code=$(awk '/^HTTP\// { c = $2 } END { print c }' "$1")
    rid=$(awk 'tolower($1) == "x-request-id:" { sub("\r", "", $2); print $2 }' "$1")
    ctype=$(awk 'tolower($1) == "content-type:" { sub("\r", "", $2); print $2 }' "$1")
}

# The API's description, which every response the suites receive must match (docs/openapi.json).
OPENAPI_CHECK=${OPENAPI_CHECK:-$(dirname "${BASH_SOURCE[0]}")/openapi-check.py}

# openapi_check_file [--headers HEADER_FILE] METHOD PATH STATUS FILE: the response (STATUS, its
# body in FILE, its headers as curl -D wrote them) is one the description lists for METHOD PATH: a
# status it lists, a JSON body of its schema, its content type and required headers; fails, saying
# why, when it is not. A request that got no response at all (curl's code 000 or none) has nothing
# to check.
openapi_check_file() {
    local status=$3
    [ "$1" != --headers ] || status=$5
    [ -n "$status" ] && [ "$status" != 000 ] || return 0
    "$OPENAPI_CHECK" "$@"
}

# openapi_check METHOD PATH HEADER_FILE: openapi_check_file for the response in $code and $body.
openapi_check() {
    local f rc=0
    f=$(mktemp)
    printf '%s' "$body" >"$f"
    openapi_check_file --headers "$3" "$1" "$2" "$code" "$f" || rc=$?
    rm -f "$f"
    return $rc
}

# api METHOD PATH [BODY] -> $code, $body, $rid, $ctype; fails when the response is not as the API's
# description has it.
api() {
    local method=$1 path=$2 data=${3-} hdr
    hdr=$(mktemp)
    if [ $# -ge 3 ]; then
        body=$(curl -s -D "$hdr" -X "$method" "$SANDBOXD_URL$path" -H 'content-type: application/json' --data-binary "$data")
    else
        body=$(curl -s -D "$hdr" -X "$method" "$SANDBOXD_URL$path")
    fi
    read_headers "$hdr"
    openapi_check "$method" "$path" "$hdr" || { rm -f "$hdr"; return 1; }
    rm -f "$hdr"
}

# api_file METHOD PATH FILE: like api, with the body read from FILE (large bodies).
api_file() {
    local hdr
    hdr=$(mktemp)
    body=$(curl -s -D "$hdr" -X "$1" "$SANDBOXD_URL$2" -H 'content-type: application/json' --data-binary "@$3")
    read_headers "$hdr"
    openapi_check "$1" "$2" "$hdr" || { rm -f "$hdr"; return 1; }
    rm -f "$hdr"
}

# execute_async FILE: POST /v1/execute with the body read from FILE, in the background, so that no
# command line holds the body (a marker in it would match pgrep). execute_wait then sets $code,
# $body, $rid and $ctype as api does.
execute_async() {
    async_dir=$(mktemp -d)
    curl -s -D "$async_dir/hdr" -o "$async_dir/body" -X POST "$SANDBOXD_URL/v1/execute" \
        -H 'content-type: application/json' --data-binary "@$1" &
    async_pid=$!
}

execute_wait() {
    local pid=$async_pid
    async_pid=
    wait "$pid" || { echo "curl failed: $?" >&2; return 1; }
    body=$(cat "$async_dir/body")
    read_headers "$async_dir/hdr"
    openapi_check POST /v1/execute "$async_dir/hdr" || { rm -rf "$async_dir"; return 1; }
    rm -rf "$async_dir"
}

# For teardown: a request still in the background is waited for (its sandbox ends with it).
execute_abandon() {
    if [ -n "${async_pid:-}" ]; then
        wait "$async_pid" || true
        async_pid=
        rm -rf "$async_dir"
    fi
}

# execute JSON: POST /v1/execute
execute() {
    api POST /v1/execute "$1"
}

# A JSON string literal for arbitrary text.
json_str() {
    jq -Rs . <<<"$1" | sed 's/\\n"$/"/'
}

# code_json PYTHON [EXTRA_JSON_FIELDS]: a request body with that code.
code_json() {
    jq -cn --arg code "$1" "{code: \$code}${2:+ + $2}"
}

expect_status() {
    if [ "$code" != "$1" ]; then
        echo "expected HTTP $1, got $code: $body" >&2
        return 1
    fi
}

# expect_error STATUS MESSAGE: the exact {"error": ...} of the contract, as JSON.
expect_error() {
    expect_status "$1"
    [ "$ctype" = application/json ] || { echo "content-type: $ctype" >&2; return 1; }
    local got
    got=$(jq -er .error <<<"$body") || { echo "no error field: $body" >&2; return 1; }
    if [ "$got" != "$2" ]; then
        echo "expected error '$2', got '$got'" >&2
        return 1
    fi
    expect_request_id
}

expect_request_id() {
    if ! [[ $rid =~ ^[0-9a-f]{32}$ ]]; then
        echo "no X-Request-Id header (got '$rid')" >&2
        return 1
    fi
}

field() {
    jq -r "$1" <<<"$body"
}

in_systemd() {
    "$SANDBOXD_HOST" exec "$@"
}

# poll CMD...: runs CMD until it prints something (50 tries, 0.1 s apart: the journal is written
# asynchronously) and prints that; fails if it never does.
poll() {
    local out
    for _ in $(seq 50); do
        out=$("$@") || true
        if [ -n "$out" ]; then
            echo "$out"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# The audit entry of request $1 as JSON, if it is written yet.
audit_entry_now() {
    in_systemd journalctl -q -o json "REQUEST_ID=$1" MESSAGE_ID=8c2f1d5e6a3b4c7d9e0f1a2b3c4d5e6f 2>/dev/null | tail -n 1
}

# The audit entry of request $1 as JSON.
journal_entry() {
    poll audit_entry_now "$1"
}

db() {
    sqlite3 -cmd '.timeout 5000' "$SANDBOXD_DB" "$@"
}

# Machines the pool keeps (idle, booting, or serving an execution): these are meant to be there.
pool_units() {
    db "SELECT machine_id || '.service' FROM pool WHERE state IN ('ready', 'starting', 'claimed')"
}

# Machine and tool units loaded that the pool does not keep: what an execution left behind.
leftover_units() {
    local keep units
    keep=$(pool_units) || return
    units=$(in_systemd systemctl list-units --all --plain --no-legend 'machine-*' 'tool-*') || return
    awk '{ print $1 }' <<<"$units" | grep -vxF -e "${keep:-none}" -f <(echo "$keep") || true
}

# Machine and tool cgroups, in any hierarchy, that the pool does not keep.
leftover_cgroups() {
    local keep
    keep=$(pool_units) || return
    # find may meet a cgroup being removed: its status says nothing.
    # shellcheck disable=SC2001 # a prefix on every line
    in_systemd find /sys/fs/cgroup -type d \( -name 'machine-*.service' -o -name 'tool-*.service' \) 2>/dev/null |
        grep -vF -e "/${keep:-none}" -f <(sed 's#^#/#' <<<"$keep") || true
}

# Waits until no sandbox is left but the pool's (used ones are destroyed right after the reply).
expect_no_leftovers() {
    local units cgroups
    for _ in $(seq 50); do
        units=$(leftover_units)
        cgroups=$(leftover_cgroups)
        [ -z "$units$cgroups" ] && return 0
        sleep 0.1
    done
    echo "left behind: units: $units; cgroups: $cgroups" >&2
    return 1
}

# Waits until a unit (a machine, or a tool call's sandbox) is gone: unit, cgroups, pool row.
expect_sandbox_gone() {
    for _ in $(seq 50); do
        if [ -z "$(in_systemd systemctl list-units --all --plain --no-legend "$1.service")" ] &&
            [ -z "$(in_systemd find /sys/fs/cgroup -type d -name "$1.service" 2>/dev/null)" ] &&
            [ -z "$(db "SELECT 1 FROM pool WHERE machine_id = '$1'")" ]; then
            return 0
        fi
        sleep 0.1
    done
    echo "unit $1 is still there" >&2
    return 1
}

# The executions a machine serves, as the running services were configured.
executions_per_machine() {
    local n
    n=$(in_systemd systemctl show -P Environment sandbox-api.service | tr ' ' '\n' |
        sed -n 's/^SANDBOXD_EXECUTIONS_PER_MACHINE=//p' | tail -n 1)
    echo "${n:-64}"
}

pool_field() {
    curl -s "$SANDBOXD_URL/v1/pool" | jq -r ".$1"
}

# Waits until the pool has its target of warm sandboxes again.
wait_pool_full() {
    local target
    target=$(pool_field target)
    for _ in $(seq 300); do
        [ "$(pool_field warm)" -ge "$target" ] && return 0
        sleep 0.1
    done
    echo "the pool did not refill: $(curl -s "$SANDBOXD_URL/v1/pool")" >&2
    return 1
}

# The services that read sandboxd's settings, and a test's own settings for them: one drop-in each,
# as "systemctl edit" writes them.
SETTINGS_UNITS="sandbox-api.service sandboxd-broker.service sandboxd-poold.service"

# The first line of every drop-in a test writes: a run cut short (a bats killed, a machine reset)
# leaves its drop-ins behind, and the next run's setup_suite finds them by it and removes them.
TEST_DROPIN_MARK="# sandboxd's end-to-end suites wrote this; they remove it"

# settings_write NAME KEY=VALUE...: the drop-ins NAME.conf, loaded but not yet in effect.
settings_write() {
    local name=$1 u kv
    shift
    for u in $SETTINGS_UNITS; do
        mkdir -p "/etc/systemd/system/$u.d"
        {
            printf '%s\n[Service]\n' "$TEST_DROPIN_MARK"
            for kv in "$@"; do printf 'Environment=%s\n' "$kv"; done
        } >"/etc/systemd/system/$u.d/$name.conf"
    done
    in_systemd systemctl daemon-reload
}

# The broker and the workers (the pool manager restarts with them) with the settings they have now.
restart_services() {
    in_systemd systemctl restart sandboxd-broker.service sandbox-api.service
}

# with_settings NAME KEY=VALUE...: the services restarted with those settings.
with_settings() {
    settings_write "$@"
    restart_services
}

# clear_settings NAME: the services restarted without the drop-ins NAME.conf; fails (restarting
# nothing) when there were none.
clear_settings() {
    local name=$1 u found=1
    for u in $SETTINGS_UNITS; do
        if [ -f "/etc/systemd/system/$u.d/$name.conf" ]; then
            rm -f "/etc/systemd/system/$u.d/$name.conf"
            found=0
        fi
    done
    [ $found = 0 ] || return 1
    in_systemd systemctl daemon-reload
    restart_services
}

# The settings file itself (README, "Configuration"), as an administrator edits it.
SETTINGS_FILE=/etc/sandboxd/sandboxd.conf

# Waits until the workers answer again after a restart (without a key: /metrics needs none).
wait_up() {
    for _ in $(seq 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/metrics")" = 200 ] && return 0
        sleep 0.1
    done
    echo "the service did not come back" >&2
    return 1
}

# What a test changes in the host's own files, kept until the test puts it back: outside the test's
# temporary directory, as a run cut short leaves the change, and the next run's setup_suite puts
# those files back before anything else (tests/bats/setup_suite.bash). Root's own directory: what
# is in it is written over the host's files.
TEST_SAVES=/var/lib/sandboxd-tests

# file_save PATH TAG: the file as it is (or that there is none), for file_restore (in teardown)
# to put back. The first save stands until restored: a run cut short, then another that saves the
# same file before any setup_suite, keeps what the first found, not the first run's changes.
file_save() {
    [ -d "$TEST_SAVES" ] || mkdir -m 0700 "$TEST_SAVES"
    [ ! -f "$TEST_SAVES/$2.path" ] || return 0
    rm -f "$TEST_SAVES/$2.saved" "$TEST_SAVES/$2.absent"
    if [ -e "$1" ]; then
        cp "$1" "$TEST_SAVES/$2.saved"
    else
        : >"$TEST_SAVES/$2.absent"
    fi
    printf '%s\n' "$1" >"$TEST_SAVES/$2.path"
}

# file_restore PATH TAG: the file back as file_save found it; fails when nothing was saved.
file_restore() {
    if [ -f "$TEST_SAVES/$2.saved" ]; then
        cat "$TEST_SAVES/$2.saved" >"$1"
    elif [ -f "$TEST_SAVES/$2.absent" ]; then
        rm -f "$1"
    else
        return 1
    fi
    rm -f "$TEST_SAVES/$2.saved" "$TEST_SAVES/$2.absent" "$TEST_SAVES/$2.path"
}

# leftovers_restore: what an earlier run cut short left changed, put back: the files it saved, the
# drop-ins it wrote. Prints each; fails when there was nothing.
leftovers_restore() {
    local f path tag found=1
    # The newest first: a file saved twice (the egress stack's list, then a test's over it) ends as
    # the first save found it. The names are the suites' own tags, without spaces.
    # shellcheck disable=SC2045
    for f in $(ls -t "$TEST_SAVES"/*.path 2>/dev/null); do
        tag=$(basename "$f" .path)
        path=$(cat "$f")
        if file_restore "$path" "$tag"; then
            echo "put back $path, left changed by an earlier run"
            found=0
        fi
    done
    for f in /etc/systemd/system/*.d/*.conf; do
        if [ -f "$f" ] && [ "$(head -n 1 "$f")" = "$TEST_DROPIN_MARK" ]; then
            rm -f "$f"
            echo "removed $f, left by an earlier run"
            found=0
        fi
    done
    return $found
}

# settings_save: the settings file as it is, for settings_restore (in teardown) to put back.
settings_save() {
    file_save "$SETTINGS_FILE" settings
}

# settings_restore: the file back as settings_save found it, and sandboxd restarted with it;
# nothing when nothing was saved.
settings_restore() {
    file_restore "$SETTINGS_FILE" settings || return 0
    in_systemd systemctl restart sandboxd.target
    wait_up
}

# The operator's egress list (README, "Network"), read at each request that asks for network: no
# restart needed to change it.
EGRESS_ALLOW=/etc/sandboxd/egress.allow

# egress_allow_save: the list as it is, for egress_allow_restore (in teardown) to put back.
egress_allow_save() {
    file_save "$EGRESS_ALLOW" egress
}

# egress_allow_restore: the list back as egress_allow_save found it; nothing when nothing was saved.
egress_allow_restore() {
    file_restore "$EGRESS_ALLOW" egress || true
}

# The port the service listens on, from SANDBOXD_URL (http://HOST:PORT).
listen_port() {
    local hostport=${SANDBOXD_URL#*://}
    hostport=${hostport%%/*}
    if ! [[ $hostport =~ :([0-9]+)$ ]]; then
        echo "no port in SANDBOXD_URL=$SANDBOXD_URL" >&2
        return 1
    fi
    echo "${BASH_REMATCH[1]}"
}

# A marker: a process whose command line ends in MARKER, which a sandbox's code starts with
# subprocess.Popen($(marker_argv MARKER)). Python, not a shell's exec with -a: Debian's sh (dash) has no such option.
# The host sees every sandbox's processes, so pgrep finds it there while it runs.
MARKER_ARGV="['/usr/bin/python3', '-c', 'import time; time.sleep(1000)', '%s']"

# marker_argv MARKER: the Python list for subprocess.Popen that starts the marker process.
marker_argv() {
    # shellcheck disable=SC2059 # the format is MARKER_ARGV, fixed above
    printf "$MARKER_ARGV" "$1"
}

# marker_pid MARKER: waits (bounded) until the marker process runs and prints its pid: the positive
# control of every check that it is gone later.
marker_pid() {
    local pid
    for _ in $(seq 100); do
        pid=$(pgrep -f -- "-c import time; time.sleep\(1000\) $1\$") && { echo "$pid"; return 0; }
        sleep 0.1
    done
    echo "the marker process '$1' never ran" >&2
    return 1
}

# expect_marker_gone MARKER: no process of that marker runs (pgrep: 1 is "none", above is an error).
expect_marker_gone() {
    local rc=0 procs
    procs=$(pgrep -a -f -- "-c import time; time.sleep\(1000\) $1\$") || rc=$?
    [ "$rc" = 1 ] && return 0
    if [ "$rc" = 0 ]; then
        echo "the marker process '$1' is still there: $procs" >&2
    else
        echo "pgrep failed (exit $rc)" >&2
    fi
    return 1
}

# expect_execution_abandoned MARKER: an execution whose client went is stopped: its marker process
# gone within seconds, not after its sleep, and the last POST /v1/execute recorded as 499.
expect_execution_abandoned() {
    local row=
    for _ in $(seq 100); do
        expect_marker_gone "$1" 2>/dev/null && break
        sleep 0.1
    done
    expect_marker_gone "$1" || return 1
    for _ in $(seq 50); do
        row=$(db "SELECT status, error FROM requests WHERE route = 'POST /v1/execute' AND status IS NOT NULL ORDER BY rowid DESC LIMIT 1")
        [[ $row == 499* ]] && break
        sleep 0.1
    done
    if [ "$row" != "499|the client closed the request before it was answered" ]; then
        echo "the execution's record: '$row', not 499 for a client gone" >&2
        return 1
    fi
}

# until_released NAME WORD TRIES: Python lines for a snippet that waits (TRIES × 20 ms at most)
# until the test releases it with release PID NAME, then prints WORD.
until_released() {
    printf '%s\n' "for _ in range($3):" "    if os.path.exists('/workspace/$1'):" "        print('$2')" "        break" \
        "    time.sleep(0.02)"
}

# release PID NAME: creates /workspace/NAME in the sandbox of process PID, which its code waits for:
# a sandbox kept running exactly as long as a test needs, without a sleep. From inside the sandbox's
# user and mount namespaces: its tmpfs takes no file from a user its namespace does not map.
release() {
    nsenter --target "$1" --user --mount /usr/bin/touch "/workspace/$2"
}

# setting_default NAME: the running services take NAME's default: no drop-in and no line of
# /etc/sandboxd/sandboxd.conf sets it.
setting_default() {
    local env
    env=$(in_systemd systemctl show -P Environment sandbox-api.service) || return
    [[ $env != *"$1="* ]] || { echo "$1 is set for the service: $env" >&2; return 1; }
    if [ -e /etc/sandboxd/sandboxd.conf ] && grep -q "^[[:space:]]*$1=" /etc/sandboxd/sandboxd.conf; then
        echo "$1 is set in /etc/sandboxd/sandboxd.conf" >&2
        return 1
    fi
}

# runtime_bare DIR PROGRAM [ARG...]: PROGRAM of the runtime image run bare, as a snippet's environment
# has it but for the sandbox: chrooted into the image's tree, DIR bound on its /workspace (the working
# directory and HOME), standard input /dev/null; its stdout to DIR/out, its stderr to DIR/err, and
# its exit status. The bind is made in a mount namespace of its own: the tree stays as it was.
runtime_bare() {
    local dir=$1 tree
    shift
    tree=$(readlink -f /var/lib/machines/sandboxd-runtime)
    [ -x "$tree/usr/bin/python3" ] || { echo "runtime_bare: no runtime image at $tree" >&2; return 2; }
    "$BATS_TEST_DIRNAME/../runtime-bare" "$tree" "$dir" "$@" </dev/null >"$dir/out" 2>"$dir/err"
}

# expect_like_host DIR CODE RC: the response in $body printed what the runtime image's own program
# printed running CODE bare (runtime_bare: its stdout in DIR/out, its stderr in DIR/err) and exited
# as it did (RC).
expect_like_host() {
    [ "$(field .stdout)" = "$(cat "$1/out")" ] || { echo "stdout differs for: $2" >&2; echo "$body" >&2; return 1; }
    [ "$(field .stderr)" = "$(cat "$1/err")" ] || { echo "stderr differs for: $2" >&2; echo "$body" >&2; cat "$1/err" >&2; return 1; }
    [ "$(field .exit_code)" = "$3" ] || { echo "exit code differs for: $2 (host: $3)" >&2; echo "$body" >&2; return 1; }
}

# Where sandboxd-image publishes the tool images' manifests for the workers (the default).
TOOL_STATE=/var/lib/sandboxd/tools

# tool_manifest NAME [MODULE FUNCTION...]: a tool manifest as sandboxd-image writes it, for NAME,
# declaring agent.get_weather or the given module and functions.
tool_manifest() {
    local name=$1 module=${2:-agent}
    shift $(($# > 1 ? 2 : 1))
    [ $# -gt 0 ] || set -- get_weather
    printf '{"sandboxd-tool-image": 1,\n "image": "%s",\n "modules": %s}\n' "$name" \
        "$(jq -cn --arg m "$module" --arg p "${module//.//}.py" '{($m): {path: $p, functions: $ARGS.positional}}' --args "$@")"
}

# as_tool_image NAME [MODULE FUNCTION...]: registers the tree /var/lib/machines/NAME as
# sandboxd-image build would: its manifest at its root and the workers' copy.
as_tool_image() {
    tool_manifest "$@" >"/var/lib/machines/$1/.sandboxd-tool.json"
    mkdir -p "$TOOL_STATE"
    cp "/var/lib/machines/$1/.sandboxd-tool.json" "$TOOL_STATE/$1.json"
}
