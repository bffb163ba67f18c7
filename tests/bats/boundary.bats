#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The kernel surface a sandbox's code reaches, over HTTP, in an execution (in both machine modes), a
# session and a tool call: the system calls container escapes start from are refused, /proc has
# nspawn's masks, and what real code needs keeps working. Every refusal is first shown to work on
# the host, with the sandbox user's UID and no filter.
# The programs sent are in single quotes: their $ are the sandbox's to expand.
# shellcheck disable=SC2016

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

KERNEL_PROBES="$BATS_TEST_DIRNAME/fixtures/kernel-probes.py"
PROC_PROBES="$BATS_TEST_DIRNAME/fixtures/proc-probes.py"
PROBE_IMAGE=/var/lib/machines/sbx-test-probes
LIB_DIR=$(dirname "${SANDBOXD_RUNNER:-/usr/local/lib/sandboxd/sandboxd-runner}")

# What every probe of kernel-probes.py answers under the code's filter.
REFUSED='userns_mount EPERM
clone_newuser EPERM
setns_user EPERM
io_uring_setup ENOSYS
userfaultfd EPERM
personality_exec EPERM
personality_query ok
bpf EPERM
perf_event_open EPERM
keyctl EPERM
kcmp EPERM
name_to_handle_at EPERM
clone3 ENOSYS
audit_socket_high_bits EAFNOSUPPORT
vsock EAFNOSUPPORT'

# What the same probes answer under the machine's filter alone (the runner's and the zygote's):
# setns reaches the kernel (the runner enters sandboxes' mount namespaces), nothing else does.
MACHINE_REFUSED='userns_mount EPERM
clone_newuser EPERM
setns_user EINVAL
io_uring_setup ENOSYS
userfaultfd EPERM
personality_exec EPERM
personality_query ok
bpf EPERM
perf_event_open EPERM
keyctl EPERM
kcmp EPERM
name_to_handle_at EPERM
clone3 ENOSYS
audit_socket_high_bits EAFNOSUPPORT
vsock EAFNOSUPPORT'

# What real code does: numpy, pandas, matplotlib, threads, subprocess with a bash pipeline,
# multiprocessing (a fork pool and a process pool).
WORKLOAD_PY='import io, threading, subprocess, multiprocessing, concurrent.futures
import numpy as np, pandas as pd, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
a = np.arange(12).reshape(3, 4)
print("numpy", int((a @ a.T).sum()))
print("pandas", int(pd.DataFrame({"x": range(5)}).x.sum()))
buf = io.BytesIO()
plt.plot([1, 2, 3])
plt.savefig(buf, format="png")
print("matplotlib", buf.getvalue()[:4] == b"\x89PNG")
got = []
threads = [threading.Thread(target=got.append, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", sorted(got))
print("subprocess", subprocess.run(["bash", "-c", "seq 1 100 | sort -rn | head -1"], capture_output=True, text=True).stdout.strip())
with multiprocessing.Pool(2) as pool:
    print("multiprocessing", pool.map(abs, [-1, -2, -3]))
with concurrent.futures.ProcessPoolExecutor(2) as ex:
    print("processpool", list(ex.map(abs, [-4])))'
WORKLOAD_PY_OUT='numpy 1134
pandas 10
matplotlib True
threads [0, 1, 2, 3]
subprocess 100
multiprocessing [1, 2, 3]
processpool [4]'

# node: asynchronous file reads (libuv's thread pool, or io_uring where libuv would use it), a child
# process, a worker thread.
WORKLOAD_NODE='const fs = require("fs"), cp = require("child_process"), { Worker } = require("worker_threads");
fs.writeFileSync("n.txt", "hi");
fs.promises.readFile("n.txt", "utf8").then((d) => {
  console.log("fs", d);
  console.log("child", cp.execSync("echo $((6 * 7))", { shell: "/bin/bash" }).toString().trim());
  const w = new Worker("require(\"worker_threads\").parentPort.postMessage(42)", { eval: true });
  w.on("message", (m) => { console.log("worker", m); w.terminate(); });
});'
WORKLOAD_NODE_OUT='fs hi
child 42
worker 42'

# The same in a session, where a run ends with its synchronous code: the worker is waited for.
WORKLOAD_NODE_SYNC='const fs = require("fs"), cp = require("child_process"), { Worker } = require("worker_threads");
fs.writeFileSync("n.txt", "hi");
console.log("fs", fs.readFileSync("n.txt", "utf8"));
console.log("child", cp.execSync("echo $((6 * 7))", { shell: "/bin/bash" }).toString().trim());
const cell = new Int32Array(new SharedArrayBuffer(4));
const w = new Worker("const { workerData } = require(\"worker_threads\"); Atomics.store(workerData, 0, 42); Atomics.notify(workerData, 0);",
  { eval: true, workerData: cell });
Atomics.wait(cell, 0, 0, 30000);
console.log("worker", cell[0]);
w.terminate();'

WORKLOAD_BASH='seq 1 1000 | grep 7 | sort -rn | head -3 | tr "\n" " "; echo; echo $(( $(seq 1 10 | paste -sd+) ))'
WORKLOAD_BASH_OUT='997 987 979 
55'

setup_file() {
    require_stack
}

setup() {
    created="$BATS_TEST_TMPDIR/sessions"
    : >"$created"
    wait_pool_full
}

teardown() {
    local id
    execute_abandon
    while read -r id; do
        curl -s -o /dev/null -X DELETE "$SANDBOXD_URL/v1/sessions/$id" || true
    done <"$created"
    rm -rf "$PROBE_IMAGE" "$TOOL_STATE/sbx-test-probes.json"
    if clear_settings zz-boundary; then
        wait_pool_full
    fi
    expect_no_leftovers
}

# on_host FILE: the Python program FILE on the host, as the sandbox user's UID, unfiltered.
on_host() {
    setpriv --reuid 1000 --regid 1000 --clear-groups /usr/bin/python3 - <"$1"
}

# The positive control of kernel-probes.py: on the host every probe reaches the kernel (it succeeds
# or fails for its arguments), and the shell's own unshare makes the namespaces.
host_reaches_kernel() {
    local out
    out=$(on_host "$KERNEL_PROBES")
    echo "host: $out" >&2
    [ "$(wc -l <<<"$out")" = "$(wc -l <<<"$REFUSED")" ]
    [ -z "$(grep -E ' (EPERM|ENOSYS|died)$' <<<"$out" || true)" ]
    grep -qx 'userns_mount ok' <<<"$out"
    setpriv --reuid 1000 --regid 1000 --clear-groups unshare -U -m -n true
}

# What proc-probes.py must print in a sandbox, from what it prints on the host: the masked files
# that exist cannot be opened, the masked directories are empty, /proc/sys is read-only, the rest is
# as readable as on the host.
proc_expected() {
    awk '$1 == "/proc/sys" { print $1, "ro"; next }
         $2 == "entries" { print $1, "entries 0"; next }
         $1 ~ /^\/proc\/(kallsyms|kcore|keys|sysrq-trigger|timer_list|sched_debug|latency_stats|timer_stats)$/ && $2 != "ENOENT" { print $1, "EACCES"; next }
         { print }'
}

execute_lang() {
    execute "$(jq -cn --arg l "$1" --arg code "$2" '{language: $l, code: $code, timeout_s: 60}')"
    expect_status 200
}

session_new() {
    api POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    echo "$sid" >>"$created"
}

run_in() {
    api POST "/v1/sessions/$1/run" "$(jq -cn --arg l "$2" --arg code "$3" '{language: $l, code: $code, timeout: 60}')"
    expect_status 200
}

# expect_stdout TEXT [JQ_PATH]: the answer's stdout, its trailing newline aside, is TEXT.
expect_stdout() {
    local got
    got=$(jq -r "${2:-.stdout}" <<<"$body")
    if [ "$got" != "$1" ]; then
        printf 'expected:\n%s\ngot:\n%s\nbody: %s\n' "$1" "$got" "$body" >&2
        return 1
    fi
}

# The checks of one execution machine mode: probes, /proc, workloads in each language.
executions_hold() {
    local host_proc
    host_reaches_kernel
    execute_lang python "$(cat "$KERNEL_PROBES")"
    expect_stdout "$REFUSED"
    host_proc=$(on_host "$PROC_PROBES")
    grep -qx '/proc/sys rw' <<<"$host_proc"
    grep -qx '/proc/kallsyms readable' <<<"$host_proc"
    execute_lang python "$(cat "$PROC_PROBES")"
    expect_stdout "$(proc_expected <<<"$host_proc")"
    execute_lang python "$WORKLOAD_PY"
    expect_stdout "$WORKLOAD_PY_OUT"
    execute_lang node "$WORKLOAD_NODE"
    expect_stdout "$WORKLOAD_NODE_OUT"
    execute_lang bash "$WORKLOAD_BASH"
    expect_stdout "$WORKLOAD_BASH_OUT"
}

@test "executions: namespaces, io_uring, userfaultfd, personality, bpf, perf, keyrings, kcmp, handles refused; /proc masked; real code runs" {
    executions_hold
}

@test "the same with one execution per machine" {
    with_settings zz-boundary SANDBOXD_EXECUTIONS_PER_MACHINE=1
    wait_pool_full
    [ "$(executions_per_machine)" = 1 ]
    executions_hold
}

@test "an execution's code cannot get out of its filter: no_new_privs, filter mode, two filters stacked" {
    execute_lang python 'import re
status = open("/proc/self/status").read()
print(re.search(r"NoNewPrivs:\s*(\d+)", status).group(1), re.search(r"Seccomp:\s*(\d+)", status).group(1), re.search(r"Seccomp_filters:\s*(\d+)", status).group(1))'
    # The machine's filter (the runner's, inherited) and the code's own.
    expect_stdout "1 2 2"
}

# depth PID: how many parents up the machine's runner is (the zygote 1, a warm sandbox's init 2, its
# waiting code process 3); 0 for the runner itself.
depth() {
    local pid=$1 d=0
    while [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sandboxd-runner ] && [ $d -lt 5 ]; do
        pid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 1)
        d=$((d + 1))
    done
    echo $d
}

@test "the runner and the zygote run under the machine's filter, which refuses what they do not use" {
    local pid d n=0 status want
    # Every runner of a warm machine, its zygotes and their sandboxes' inits: no new privileges,
    # the machine's filter only; a warm sandbox's code process, waiting for its code: the code's
    # filter on top. (A runner without --listen is its one-shot cgroup hand-over on the host, not a
    # machine's PID 1; a process that ended meanwhile is skipped.)
    for pid in $(pgrep -x sandboxd-runner) $(pgrep -x sandboxd-zygote); do
        if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sandboxd-runner ] &&
            ! tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qx -- --listen; then
            continue
        fi
        d=$(depth "$pid")
        status=$(grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters):' "/proc/$pid/status" 2>/dev/null | awk '{print $2}' | tr '\n' ' ' || true)
        [ -n "$status" ] || continue
        want="1 2 1 "
        [ "$d" != 3 ] || want="1 2 2 "
        [ "$status" = "$want" ] || { echo "pid $pid at depth $d: $status" >&2; false; }
        [ "$d" -gt 1 ] || n=$((n + 1))
    done
    # At least one runner and one zygote were seen.
    [ "$n" -ge 2 ]
    # The filter they run under, on the host: the probes reach the kernel without it, not with it.
    host_reaches_kernel
    [ "$(setpriv --reuid 1000 --regid 1000 --clear-groups "$LIB_DIR/sandboxd-confine" "$LIB_DIR/seccomp-machine.bpf" \
        /usr/bin/python3 - <"$KERNEL_PROBES")" = "$MACHINE_REFUSED" ]
}

@test "a system call through the x32 ABI kills the process that makes it" {
    # getpid through the x32 ABI, in a child: on the host it returns (ENOSYS where the kernel has no
    # x32), under the filter the child dies of SIGSYS. (The i386 ABI is killed the same way, by the
    # same rule; this kernel has no IA32 emulation to show it working on the host.)
    local probe='import ctypes, subprocess, sys
child = "import ctypes; ctypes.CDLL(None).syscall(ctypes.c_long(0x40000000 | 39)); print(\"returned\")"
r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())'
    [ "$(setpriv --reuid 1000 --regid 1000 --clear-groups /usr/bin/python3 -c "$probe")" = "0 returned" ]
    execute_lang python "$probe"
    expect_stdout "-31 "
}

@test "sessions: the same refusals, the same /proc, the same real code, in run and exec" {
    local host_proc
    host_reaches_kernel
    session_new
    run_in "$sid" python "$(cat "$KERNEL_PROBES")"
    expect_stdout "$REFUSED" .result.stdout
    host_proc=$(on_host "$PROC_PROBES")
    run_in "$sid" python "$(cat "$PROC_PROBES")"
    expect_stdout "$(proc_expected <<<"$host_proc")" .result.stdout
    run_in "$sid" python "$WORKLOAD_PY"
    expect_stdout "$WORKLOAD_PY_OUT" .result.stdout
    run_in "$sid" node "$WORKLOAD_NODE_SYNC"
    expect_stdout "$WORKLOAD_NODE_OUT" .result.stdout
    run_in "$sid" bash "$WORKLOAD_BASH"
    expect_stdout "$WORKLOAD_BASH_OUT" .result.stdout
    # A process the session's exec starts, not its interpreter.
    curl -sf -o /dev/null -X PUT "$SANDBOXD_URL/v1/sessions/$sid/files/kernel-probes.py" \
        -H 'content-type: application/octet-stream' --data-binary "@$KERNEL_PROBES"
    api POST "/v1/sessions/$sid/exec" '{"command":"python3 kernel-probes.py"}'
    expect_status 200
    expect_stdout "$REFUSED" .result.stdout
}

@test "tool calls: the image's interpreter runs under the code's filter from its start" {
    if [ ! -d /var/lib/machines/demo-agent ]; then
        echo "the demo-agent image is missing (run: make images)" >&2
        return 1
    fi
    host_reaches_kernel
    cp -a /var/lib/machines/demo-agent/. "$PROBE_IMAGE/"
    cp "$KERNEL_PROBES" "$PROBE_IMAGE/app/kernel_probes.py"
    printf '%s\n' 'import subprocess, sys' \
        'def kernel():' \
        '    return subprocess.run([sys.executable, "/app/kernel_probes.py"], capture_output=True, text=True).stdout' \
        >"$PROBE_IMAGE/app/probes.py"
    as_tool_image sbx-test-probes probes kernel
    api POST /v1/call '{"image":"sbx-test-probes","module":"probes","function":"kernel","timeout_s":60}'
    expect_status 200
    expect_stdout "$REFUSED" .result
}
