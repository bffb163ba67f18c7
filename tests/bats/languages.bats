#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# POST /v1/execute in each language ("python", the default, "node" and "bash") on the runtime image
# (Debian 13 by default, with Python 3.13 and its scientific packages, Node.js 20, bash and the usual
# command-line tools; or Debian 12's), GET /v1/runtimes, and the opt-in import policy for Python.
# The programs sent are in single quotes: their $ are the sandbox's to expand.
# shellcheck disable=SC2016

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

PNG="$BATS_TEST_DIRNAME/fixtures/png.py"
LANGUAGES="python node bash"

setup_file() {
    require_stack
}

teardown() {
    execute_abandon
    if clear_settings zz-imports; then
        wait_pool_full
    fi
    expect_no_leftovers
}

# lang_json LANGUAGE CODE [EXTRA_JSON_FIELDS]: a request body running CODE in LANGUAGE.
lang_json() {
    jq -cn --arg l "$1" --arg code "$2" "{language: \$l, code: \$code}${3:+ + $3}"
}

# run_lang LANGUAGE CODE [EXTRA_JSON_FIELDS]: runs it; the answer must be a 200.
run_lang() {
    execute "$(lang_json "$@")"
    expect_status 200
}

# expect_code_size LANGUAGE BYTES STATUS: the code in $BATS_TEST_TMPDIR/code, of BYTES bytes, runs
# (200, printing ok) or is refused as too large (400). The body is read from a file: the code is
# longer than one command-line argument may be.
expect_code_size() {
    [ "$(wc -c <"$BATS_TEST_TMPDIR/code")" = "$2" ] || { echo "the code has $(wc -c <"$BATS_TEST_TMPDIR/code") bytes, not $2" >&2; return 1; }
    jq -cn --arg l "$1" --rawfile code "$BATS_TEST_TMPDIR/code" '{language: $l, code: $code}' >"$BATS_TEST_TMPDIR/req"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/req"
    if [ "$3" = 200 ]; then
        expect_status 200
        [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["ok\n",0]' ] || { echo "$1, $2 bytes: $body" >&2; return 1; }
    else
        expect_error 400 "code is larger than 131071 bytes"
    fi
}

# The same program in each language: CODE_<purpose>[language].
declare -gA CODE_EXIT3=(
    [python]='import sys; print("bye"); sys.exit(3)'
    [node]='console.log("bye"); process.exit(3)'
    [bash]='echo bye; exit 3'
)
declare -gA CODE_SIGKILL=(
    [python]='import os, signal; os.kill(os.getpid(), signal.SIGKILL)'
    [node]="process.kill(process.pid, 'SIGKILL')"
    [bash]='kill -9 $$'
)
declare -gA CODE_SIGTERM=(
    [python]='import os, signal; os.kill(os.getpid(), signal.SIGTERM)'
    [node]="process.kill(process.pid, 'SIGTERM')"
    [bash]='kill -TERM $$'
)
declare -gA CODE_STDIN=(
    [python]='import sys; sys.stdout.write(sys.stdin.read().upper())'
    [node]="process.stdout.write(require('fs').readFileSync(0, 'utf8').toUpperCase())"
    [bash]='tr a-z A-Z'
)
declare -gA CODE_FILES=(
    [python]='import os, shutil
os.makedirs("out")
shutil.copy("data/blob.bin", "out/copy.bin")
open("out/up.txt", "w").write(open("notes.txt").read().upper())'
    [node]="const fs = require('fs');
fs.mkdirSync('out');
fs.copyFileSync('data/blob.bin', 'out/copy.bin');
fs.writeFileSync('out/up.txt', fs.readFileSync('notes.txt', 'utf8').toUpperCase());"
    [bash]='mkdir out && cp data/blob.bin out/copy.bin && tr a-z A-Z <notes.txt >out/up.txt'
)
declare -gA CODE_NOT_UTF8=(
    [python]='import sys; sys.stdout.buffer.write(b"ok \xff\xfe \xc3\x28 end\n"); sys.stderr.buffer.write(b"\x80")'
    [node]="process.stdout.write(Buffer.from('ok \\xff\\xfe \\xc3\\x28 end\\n', 'latin1')); process.stderr.write(Buffer.from([0x80]))"
    [bash]="printf 'ok \\xff\\xfe \\xc3\\x28 end\\n'; printf '\\x80' >&2"
)
declare -gA CODE_FLOOD=(
    [python]='import sys; sys.stdout.write("x" * 3000000); sys.stderr.write("e" * 2000000)'
    [node]="process.stdout.write('x'.repeat(3000000)); process.stderr.write('e'.repeat(2000000))"
    [bash]="head -c 3000000 /dev/zero | tr '\\0' x; head -c 2000000 /dev/zero | tr '\\0' e >&2"
)
declare -gA CODE_MEMORY=(
    [node]="const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1));"
    [bash]="x=\$(head -c 2000000000 /dev/zero | tr '\\0' a); echo survived"
)

@test "each language runs its code: python by default and by name, node, bash" {
    # What the image's own interpreters say, run bare: the versions the sandbox must show.
    bare="$BATS_TEST_TMPDIR/bare"
    mkdir -p "$bare"
    runtime_bare "$bare" /usr/bin/python3 -c 'import sys; print("py", sys.version_info[:2])'
    py=$(cat "$bare/out")
    [[ $py == "py (3, "* ]]
    runtime_bare "$bare" /usr/bin/node -e 'console.log("js", process.versions.node.split(".")[0])'
    js=$(cat "$bare/out")
    [[ $js == "js "[0-9]* ]]
    execute "$(code_json 'import sys; print("py", sys.version_info[:2])')"
    expect_status 200
    [ "$(field .stdout)" = "$py" ]
    run_lang python 'import sys; print("py", sys.version_info[:2])'
    [ "$(jq -c '{stdout, stderr, exit_code}' <<<"$body")" = "$(jq -cn --arg o "$py" '{stdout: ($o + "\n"), stderr: "", exit_code: 0}')" ]
    run_lang node 'console.log("js", process.versions.node.split(".")[0])'
    [ "$(jq -c '{stdout, stderr, exit_code}' <<<"$body")" = "$(jq -cn --arg o "$js" '{stdout: ($o + "\n"), stderr: "", exit_code: 0}')" ]
    [[ $(field .sandbox_id) =~ ^sandbox-[a-z2-7]{12}$ ]]
    run_lang bash 'echo sh "${BASH_VERSINFO[0]}"'
    [ "$(jq -c '{stdout, stderr, exit_code}' <<<"$body")" = '{"stdout":"sh 5\n","stderr":"","exit_code":0}' ]
}

@test "any language but python, node and bash is refused with its name" {
    for l in ruby javascript js sh nodejs python3 Python BASH ""; do
        execute "$(lang_json "$l" 'print(1)')"
        expect_error 400 "unsupported language \"$l\""
    done
}

@test "exit codes in each language: 0, 3, and death by a signal as 128 + the signal" {
    for l in $LANGUAGES; do
        run_lang "$l" "${CODE_EXIT3[$l]}"
        [ "$(field .exit_code)" = 3 ] || { echo "$l: $body" >&2; false; }
        [ "$(field .stdout)" = bye ]
        run_lang "$l" "${CODE_SIGKILL[$l]}"
        [ "$(field .exit_code)" = 137 ] || { echo "$l SIGKILL: $body" >&2; false; }
        run_lang "$l" "${CODE_SIGTERM[$l]}"
        [ "$(field .exit_code)" = 143 ] || { echo "$l SIGTERM: $body" >&2; false; }
    done
    run_lang node 'process.exitCode = 0'
    [ "$(field .exit_code)" = 0 ]
    run_lang bash 'exit 300'
    [ "$(field .exit_code)" = 44 ]
    run_lang node 'throw new Error("thrown-here")'
    [ "$(field .exit_code)" = 1 ]
    [[ $(field .stderr) == *"Error: thrown-here"* ]]
}

@test "stdin is fed to the program in each language; without stdin it reads an immediate end of file" {
    for l in $LANGUAGES; do
        run_lang "$l" "${CODE_STDIN[$l]}" '{stdin: "hello\nworld\n"}'
        [ "$(field .stdout)" = "HELLO
WORLD" ] || { echo "$l: $body" >&2; false; }
        run_lang "$l" "${CODE_STDIN[$l]}" '{timeout_s: 10}'
        [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["",0]' ] || { echo "$l: $body" >&2; false; }
    done
}

@test "files in, returned files out, in each language: subfolders, binary content byte for byte" {
    head -c 3000 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
    b64=$(base64 -w0 "$BATS_TEST_TMPDIR/blob")
    for l in $LANGUAGES; do
        run_lang "$l" "${CODE_FILES[$l]}" "$(jq -cn --arg b "$b64" '{files: [{path: "data/blob.bin", content_b64: $b},
            {path: "notes.txt", content_b64: ("abc\n" | @base64)}], return_files: ["out/copy.bin", "out/up.txt", "nothing-here"]}')"
        [ "$(field .exit_code)" = 0 ] || { echo "$l: $body" >&2; false; }
        [ "$(jq -c '[.files[].path]' <<<"$body")" = '["out/copy.bin","out/up.txt"]' ] || { echo "$l: $body" >&2; false; }
        [ "$(field '.files[0].content_b64')" = "$b64" ]
        [ "$(field '.files[1].content_b64' | base64 -d)" = ABC ]
    done
}

@test "a timeout in node and in bash: 'timed out after Ns', exit code -1, their children killed" {
    declare -A prog=(
        [node]="const { spawn } = require('child_process');
spawn('/usr/bin/python3', ['-c', 'import time; time.sleep(1000)', 'MARKER'], { detached: true, stdio: 'ignore' });
for (;;) {}"
        [bash]="/usr/bin/python3 -c 'import time; time.sleep(1000)' MARKER &
while :; do :; done"
    )
    for l in node bash; do
        marker="sbx-$l-timeout-$RANDOM$RANDOM"
        lang_json "$l" "${prog[$l]//MARKER/$marker}" '{timeout_s: 2}' >"$BATS_TEST_TMPDIR/req"
        execute_async "$BATS_TEST_TMPDIR/req"
        marker_pid "$marker"
        execute_wait
        expect_status 200
        [ "$(jq -c '[.stdout, .stderr, .exit_code]' <<<"$body")" = '["","timed out after 2s",-1]' ] || { echo "$l: $body" >&2; false; }
        [ "$(field .duration_ms)" -ge 2000 ]
        [ "$(field .duration_ms)" -lt 10000 ]
        expect_no_leftovers
        expect_marker_gone "$marker"
    done
}

@test "a background child left running when a bash or node program exits is killed with it" {
    declare -A prog=(
        [node]="const { spawn } = require('child_process');
const fs = require('fs');
spawn('/usr/bin/python3', ['-c', 'import time; time.sleep(1000)', 'MARKER'], { detached: true, stdio: 'ignore' }).unref();
let n = 0;
const t = setInterval(() => {
    if (fs.existsSync('/workspace/seen')) { console.log('finished'); clearInterval(t); }
    else if (++n > 500) clearInterval(t);
}, 20);"
        [bash]="/usr/bin/python3 -c 'import time; time.sleep(1000)' MARKER >/dev/null 2>&1 &
for _ in \$(seq 500); do
    if [ -e /workspace/seen ]; then echo finished; break; fi
    sleep 0.02
done"
    )
    for l in node bash; do
        marker="sbx-$l-bg-$RANDOM$RANDOM"
        lang_json "$l" "${prog[$l]//MARKER/$marker}" >"$BATS_TEST_TMPDIR/req"
        execute_async "$BATS_TEST_TMPDIR/req"
        pid=$(marker_pid "$marker")
        release "$pid" seen
        execute_wait
        expect_status 200
        [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["finished\n",0]' ] || { echo "$l: $body" >&2; false; }
        expect_no_leftovers
        expect_marker_gone "$marker"
    done
}

@test "output that is not UTF-8 still yields valid JSON in each language" {
    for l in $LANGUAGES; do
        run_lang "$l" "${CODE_NOT_UTF8[$l]}"
        [ "$(field .stdout)" = "ok �� �( end" ] || { echo "$l: $body" >&2; false; }
        [ "$(field .stderr)" = "�" ]
    done
}

@test "output past the cap is cut and flagged in each language; a small output carries no flag" {
    setting_default SANDBOXD_OUTPUT_CAP_BYTES
    for l in $LANGUAGES; do
        run_lang "$l" "${CODE_FLOOD[$l]}"
        [ "$(jq -c '[(.stdout | length), .stdout_truncated, (.stderr | length), .stderr_truncated, .exit_code]' <<<"$body")" = '[1048576,true,1048576,true,0]' ] ||
            { echo "$l: $(jq -c '.stdout |= length | .stderr |= length' <<<"$body")" >&2; false; }
        [ -z "$(field .stdout | tr -d x)" ]
    [ -z "$(field .stderr | tr -d e)" ]
    done
    run_lang bash 'echo small; echo e >&2'
    [ "$(jq -c '[has("stdout_truncated"), has("stderr_truncated"), .stdout, .stderr]' <<<"$body")" = '[false,false,"small\n","e\n"]' ]
}

@test "the memory limit holds in node and bash, is named, and the next request succeeds" {
    # Python's memory bomb is attack.bats's.
    for l in node bash; do
        SECONDS=0
        run_lang "$l" "${CODE_MEMORY[$l]}" '{timeout_s: 30}'
        [ "$SECONDS" -lt 30 ]
        [ "$(jq -c '[.exit_code, .limit_exceeded]' <<<"$body")" = '[137,"memory"]' ] || { echo "$l: $(jq -c '.stdout |= .[:200]' <<<"$body")" >&2; false; }
        [[ $(field .stderr) == *"sandboxd: killed: the memory limit of "* ]]
        [[ $(field .stdout) != *survived* ]]
    done
    run_lang bash 'echo next'
    [ "$(field .stdout)" = next ]
}

@test "timeout_s is checked the same way for node and bash" {
    for l in node bash; do
        for t in 61 -1 '"5"' 5.5; do
            execute "$(lang_json "$l" 'true' "{timeout_s: $t}")"
            expect_error 400 "timeout_s must be between 1 and 60"
        done
    done
}

@test "node: an unhandled rejection exits 1 with the reason on stderr" {
    run_lang node "Promise.reject(new Error('rejected-here')); setTimeout(() => console.log('still running'), 200);"
    [ "$(field .exit_code)" = 1 ]
    [[ $(field .stderr) == *rejected-here* ]]
    [[ $(field .stdout) != *"still running"* ]]
    # The control: a rejection that is handled exits 0 and lets the timer run.
    run_lang node "Promise.reject(new Error('rejected-here')).catch(() => {}); setTimeout(() => console.log('still running'), 200);"
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["still running\n",0]' ]
}

@test "node runs as node -e CODE: CommonJS, require('fs'), cwd /workspace" {
    src="const fs = require('fs'), path = require('path');
console.log(process.cwd(), path.resolve('x'));
console.log(typeof require, typeof module, typeof exports, __filename);
console.log(JSON.stringify(process.argv.slice(1)), JSON.stringify(process.execArgv));
console.log(fs.readFileSync('in.txt', 'utf8'));
fs.writeFileSync('made.txt', 'by node');"
    run_lang node "$src" '{files: [{path: "in.txt", content_b64: ("from the request" | @base64)}], return_files: ["made.txt"]}'
    [ "$(field .stdout)" = "/workspace /workspace/x
function object object [eval]
[] $(jq -cn --arg c "$src" '["-e", $c]')
from the request" ] || { echo "$body" >&2; false; }
    [ "$(field '.files[0].content_b64' | base64 -d)" = "by node" ]
    [ "$(field .exit_code)" = 0 ]
}

@test "node: dynamic import() works as under node -e, a top-level var is a global, a throw exits 1" {
    run_lang node "var answer = 42;
import('path').then((m) => console.log(m.basename('/a/b.txt'), globalThis.answer));"
    [ "$(field .stdout)" = "b.txt 42" ] || { echo "$body" >&2; false; }
    [ "$(field .stderr)" = "" ] || { echo "$body" >&2; false; }
    run_lang node "import('no-such-module').catch((e) => { console.log(e.code); process.exit(5); });"
    [ "$(field .stdout)" = ERR_MODULE_NOT_FOUND ] && [ "$(field .exit_code)" = 5 ] || { echo "$body" >&2; false; }
}

@test "bash runs as bash -c CODE: \$0 is bash, cd works, the working directory is /workspace" {
    run_lang bash 'echo "$0" "$#"
pwd
mkdir d && cd d && pwd && touch f
cd .. && ls d
cd /tmp && pwd'
    [ "$(field .stdout)" = "bash 0
/workspace
/workspace/d
f
/tmp" ] || { echo "$body" >&2; false; }
}

@test "bash -c semantics: each snippet answers as the image's bash -c does bare" {
    # Differential, as for Python in execute.bats: the same bash, through the API and bare.
    snippets=(
        'echo "$0 $# $-"'
        'exit 300'
        $'if true; then\n echo x'
        'no-such-command-here'
        'set -e; false; echo not reached'
        "trap 'echo trapped' EXIT; exit 4"
        'echo -n no newline at the end'
        'read -r line; echo "[$line] $?"'
        'shopt -q login_shell; echo "login $?"; [[ $- == *i* ]]; echo "interactive $?"'
        'f() { return 7; }; f'
        'printf "%s\n" "${BASH_VERSINFO[@]:0:2}"'
        'echo "$(( 2 ** 62 )) ${#BASH_ARGV[@]}"'
        'echo a | { read -r x; echo "$x"; } | tr a b'
    )
    tmp=$(mktemp -d)
    for code in "${snippets[@]}"; do
        rc=0
        runtime_bare "$tmp" bash -c "$code" || rc=$?
        run_lang bash "$code"
        expect_like_host "$tmp" "$code" "$rc"
    done
    rm -rf "$tmp"
}

@test "node and bash code is one argument: 131071 bytes run, one more byte is refused, bytes not characters" {
    # A program, then a comment: of ASCII, then of two-byte characters.
    declare -A head=([node]="console.log('ok')//" [bash]='echo ok #')
    for l in node bash; do
        prefix=${head[$l]}
        pad=$((131071 - ${#prefix}))
        { printf '%s' "$prefix"; head -c "$pad" /dev/zero | tr '\0' x; } >"$BATS_TEST_TMPDIR/code"
        expect_code_size "$l" 131071 200
        printf x >>"$BATS_TEST_TMPDIR/code"
        expect_code_size "$l" 131072 400
        # 131071 bytes of which most are 'é': half as many characters. One more 'é' is too many.
        { printf '%s' "$prefix"; head -c $((pad / 2)) /dev/zero | tr '\0' x | sed 's/x/é/g'; head -c $((pad % 2)) /dev/zero | tr '\0' x; } >"$BATS_TEST_TMPDIR/code"
        expect_code_size "$l" 131071 200
        { printf '%s' "$prefix"; head -c $((pad / 2 + 1)) /dev/zero | tr '\0' x | sed 's/x/é/g'; } >"$BATS_TEST_TMPDIR/code"
        expect_code_size "$l" $((131071 - pad % 2 + 2)) 400
    done
    # Python takes its code otherwise: the same size runs.
    { printf 'print("ok")#'; head -c 200000 /dev/zero | tr '\0' x; } >"$BATS_TEST_TMPDIR/code"
    jq -cn --rawfile code "$BATS_TEST_TMPDIR/code" '{code: $code}' >"$BATS_TEST_TMPDIR/req"
    api_file POST /v1/execute "$BATS_TEST_TMPDIR/req"
    expect_status 200
    [ "$(field .stdout)" = ok ]
}

@test "pandas reads an uploaded CSV and sums a column" {
    {
        echo 'name,qty,price'
        for i in $(seq 1 250); do echo "item$i,$((i * 3 % 17)),$i.25"; done
    } >"$BATS_TEST_TMPDIR/data.csv"
    want_qty=$(awk -F, 'NR > 1 { s += $2 } END { print s }' "$BATS_TEST_TMPDIR/data.csv")
    run_lang python 'import pandas as pd
df = pd.read_csv("data.csv")
print(len(df), int(df["qty"].sum()), df["price"].sum())' \
        "$(jq -cn --arg b "$(base64 -w0 "$BATS_TEST_TMPDIR/data.csv")" '{files: [{path: "data.csv", content_b64: $b}]}')"
    # 1.25 + 2.25 + ... + 250.25 = 250 * 251 / 2 + 250 / 4
    [ "$(field .stdout)" = "250 $want_qty 31437.5" ] || { echo "$body" >&2; false; }
}

@test "matplotlib draws with Agg and saves a PNG of the size asked for" {
    run_lang python 'import matplotlib
import matplotlib.pyplot as plt
print(matplotlib.get_backend().lower())
fig = plt.figure(figsize=(4, 3), dpi=100)
plt.plot([0, 1, 2], [2, 0, 1])
fig.savefig("plot.png")' '{return_files: ["plot.png"]}'
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["agg\n",0]' ] || { echo "$body" >&2; false; }
    field '.files[0].content_b64' | base64 -d >"$BATS_TEST_TMPDIR/plot.png"
    [ "$(/usr/bin/python3 "$PNG" size "$BATS_TEST_TMPDIR/plot.png" | cut -d' ' -f1,2)" = "400 300" ]
}

@test "numpy multiplies matrices exactly: a 3x3 of integers and a 200x200 through BLAS" {
    run_lang python 'import numpy as np
a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 10]])
b = np.array([[2, 0, 1], [1, 3, 0], [0, 1, 4]])
print((a @ b).tolist())'
    [ "$(field .stdout)" = "[[4, 9, 13], [13, 21, 28], [22, 34, 47]]" ]
    # Known matrices of small integers, multiplied as float64 (BLAS), exact below 2**53.
    n=200
    gen="A = [[(i * 7 + j * 3) % 11 - 5 for j in range($n)] for i in range($n)]
B = [[(i * 5 + j * 2) % 13 - 6 for j in range($n)] for i in range($n)]"
    run_lang python "import hashlib
import numpy as np
$gen
C = (np.array(A, dtype=np.float64) @ np.array(B, dtype=np.float64)).astype(np.int64).tolist()
print(hashlib.sha256(repr(C).encode()).hexdigest(), C[0][0], C[$n - 1][$n - 1])"
    want=$(/usr/bin/python3 -c "import hashlib
$gen
BT = list(zip(*B))
C = [[sum(x * y for x, y in zip(row, col)) for col in BT] for row in A]
print(hashlib.sha256(repr(C).encode()).hexdigest(), C[0][0], C[$n - 1][$n - 1])")
    [ "$(field .stdout)" = "$want" ] || { echo "want $want: $body" >&2; false; }
}

@test "the sandbox's /usr is the runtime image, not the host's" {
    # The control: the host has these, and has no numpy.
    [ -x /usr/bin/shellcheck ]
    [ -x /usr/bin/bats ]
    [ "$(/usr/bin/python3 -c 'import numpy' 2>&1 | tail -n 1)" = "ModuleNotFoundError: No module named 'numpy'" ]
    run_lang python 'import os, numpy
print([os.path.exists(p) for p in ("/usr/bin/shellcheck", "/usr/bin/bats", "/usr/bin/python3", "/usr/bin/node")], numpy.__name__)'
    [ "$(field .stdout)" = "[False, False, True, True] numpy" ] || { echo "$body" >&2; false; }
    run_lang bash 'for c in shellcheck bats python3 node jq sqlite3 file gawk sed grep find; do command -v "$c" >/dev/null || echo "no $c"; done'
    [ "$(field .stdout)" = "no shellcheck
no bats" ] || { echo "$body" >&2; false; }
}

@test "the runtime image's tools work from bash" {
    run_lang bash 'echo "{\"a\": [1, 2, 3]}" | jq -c "[.a[] * 2]"
sqlite3 t.db "CREATE TABLE t(x); INSERT INTO t VALUES (6 * 7); SELECT x FROM t"
printf "a b\nc d\n" | gawk "{ print \$2 }" | sed "s/d/D/" | grep -c .
file -b --mime-type t.db
find . -name "*.db"
python3 -c "import dateutil, openpyxl, scipy, sympy, PIL; print(sympy.factorint(360))"
curl --version | head -n 1 | cut -d " " -f 1'
    [ "$(field .stdout)" = '[2,4,6]
42
2
application/vnd.sqlite3
./t.db
{2: 3, 3: 2, 5: 1}
curl' ] || { echo "$body" >&2; false; }
}

@test "GET /v1/runtimes names each language's version and packages, as the sandbox reports them" {
    api GET /v1/runtimes
    expect_status 200
    [ "$ctype" = application/json ]
    expect_request_id
    [ "$(jq -c '[.runtimes[].language] | sort' <<<"$body")" = '["bash","node","python"]' ] || { echo "$body" >&2; false; }
    [ "$(jq -c '[.runtimes[] | (.version | type), (.packages | type)] | unique' <<<"$body")" = '["object","string"]' ]
    runtimes=$body
    rt() { jq -r --arg l "$1" ".runtimes[] | select(.language == \$l) | $2" <<<"$runtimes"; }

    run_lang python 'import platform, numpy, pandas; print(platform.python_version(), numpy.__version__, pandas.__version__)'
    read -r py np pd <<<"$(field .stdout)"
    [ -n "$pd" ]
    pyv=$(rt python .version)
    [[ $py == "$pyv" || $py == "$pyv".* ]] || { echo "python $py, runtimes say $pyv" >&2; false; }
    [ "$(rt python .packages.numpy)" = "$np" ]
    [ "$(rt python .packages.pandas)" = "$pd" ]

    run_lang node 'console.log(process.version)'
    nodev=$(rt node .version)
    [ -n "$nodev" ]
    [[ $(field .stdout) == *"${nodev#v}" ]] || { echo "node $(field .stdout), runtimes say $nodev" >&2; false; }

    run_lang bash 'echo "$BASH_VERSION"'
    bashv=$(rt bash .version)
    [ -n "$bashv" ]
    [[ $(field .stdout) == "$bashv"* ]] || { echo "bash $(field .stdout), runtimes say $bashv" >&2; false; }
}

@test "no import policy by default: os and subprocess import in a Python snippet" {
    setting_default SANDBOXD_IMPORT_POLICY
    run_lang python 'import os, subprocess, socket, shutil; print(os.getcwd(), subprocess.run(["true"]).returncode)'
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["/workspace 0\n",0]' ]
}

@test "SANDBOXD_IMPORT_POLICY=curated refuses os to Python snippets, and lets numpy and json in" {
    # The control: the same snippet imports os before the setting.
    setting_default SANDBOXD_IMPORT_POLICY
    run_lang python 'print("tried"); import os; print("imported", os.sep)'
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["tried\nimported /\n",0]' ]
    with_settings zz-imports SANDBOXD_IMPORT_POLICY=curated
    wait_pool_full
    run_lang python 'print("tried"); import os; print("imported", os.sep)'
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["tried\n",1]' ] || { echo "$body" >&2; false; }
    grep -Eq "ForbiddenImportError.*\bos\b" <<<"$(field .stderr)" || { echo "$body" >&2; false; }
    run_lang python 'import json, numpy; print(json.dumps(int(numpy.arange(5).sum())))'
    [ "$(jq -c '[.stdout, .exit_code]' <<<"$body")" = '["10\n",0]' ] || { echo "$body" >&2; false; }
}
