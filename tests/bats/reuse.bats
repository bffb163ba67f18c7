#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A machine serves many executions, one at a time, each in a fresh sandbox: nothing one execution
# leaves is seen by the next on the same machine. The pool is forced to one machine, and every test
# first proves that what it then finds gone was really there (or really tried) in the earlier run.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
    with_settings zz-reuse SANDBOXD_POOL_TARGET=1 SANDBOXD_POOL_MAX=1 SANDBOXD_EXECUTIONS_PER_MACHINE=1000
}

teardown_file() {
    clear_settings zz-reuse || true
}

setup() {
    wait_pool_full
}

machine_of() {
    db "SELECT machine_id FROM requests WHERE request_id = '$1'"
}

# run_code CODE: one execution, which must answer 200; $first_machine (each test's own local) is the
# machine of the first call in a test, and every later call must run on it too.
run_code() {
    execute "$(code_json "$1")"
    expect_status 200
    local m
    m=$(machine_of "$rid")
    [[ $m =~ ^machine-[a-z2-7]{12}$ ]] || { echo "no machine recorded for $rid: '$m'" >&2; return 1; }
    if [ -z "${first_machine:-}" ]; then
        first_machine=$m
    elif [ "$m" != "$first_machine" ]; then
        echo "ran on $m, not on $first_machine" >&2
        return 1
    fi
}

@test "each execution has a sandbox of its own, in the same machine, named in the records and the journal" {
    local first_machine=
    run_code 'print(1)'
    s1=$(field .sandbox_id) r1=$rid
    run_code 'print(2)'
    s2=$(field .sandbox_id)
    [[ $s1 =~ ^sandbox-[a-z2-7]{12}$ ]]
    [[ $s2 =~ ^sandbox-[a-z2-7]{12}$ ]]
    [ "$s1" != "$s2" ]
    entry=$(journal_entry "$r1")
    [ "$(jq -r .SANDBOX_ID <<<"$entry")" = "$s1" ]
    [ "$(jq -r .MACHINE_ID <<<"$entry")" = "$first_machine" ]
    [ "$(db "SELECT sandbox_id FROM requests WHERE request_id = '$r1'")" = "$s1" ]
}

@test "files written anywhere writable are gone in the next execution" {
    local first_machine=
    marker=m$RANDOM$RANDOM
    # Every directory the code may write to, found by walking the whole tree, gets a marker.
    run_code "import os
written = []
for top, dirs, files in os.walk('/'):
    # /usr is the image, read-only (attack.bats tries to write it); /proc and /sys are the kernel's.
    if top.startswith(('/proc', '/sys', '/usr')):
        dirs[:] = []
        continue
    if os.access(top, os.W_OK):
        p = os.path.join(top, '$marker')
        try:
            open(p, 'w').write('x')
            written.append(p)
        except OSError:
            pass
print('\n'.join(sorted(written)))"
    written=$(field .stdout)
    # Positive control: at least the known writable places took the marker.
    for d in /workspace /tmp /var/tmp /dev/shm; do
        grep -qx "$d/$marker" <<<"$written"
    done
    run_code "import os
found = []
for top, dirs, files in os.walk('/'):
    if top.startswith(('/proc', '/sys', '/usr')):
        dirs[:] = []
        continue
    found += [os.path.join(top, f) for f in files if f == '$marker']
print(found)"
    [ "$(field .stdout)" = "[]" ]
}

@test "the interpreter's objects an execution changed are as the zygote made them in the next" {
    # The zygote's objects are immortal (no reference count is written after the fork) and shared
    # by every sandbox of the machine: a change to one is the sandbox's own copy, never the next's.
    local first_machine=
    run_code 'import builtins, json, sys
json.sandboxd_mark = 1
builtins.sandboxd_mark = 2
sys.modules["os"].sep = "!"
sys.path.append("/sandboxd-mark")
json.dumps.__defaults__ = None
print(json.sandboxd_mark, sandboxd_mark, __import__("os").sep, sys.path[-1], sys.getrefcount(sys.modules["os"]) > 2**31 or sys.version_info < (3, 12))'
    # Positive control: the changes held in that execution, on immortal objects.
    [ "$(field .stdout)" = "1 2 ! /sandboxd-mark True" ]
    run_code 'import builtins, json, os, sys
print(hasattr(json, "sandboxd_mark"), hasattr(builtins, "sandboxd_mark"), os.sep, "/sandboxd-mark" in sys.path)'
    [ "$(field .stdout)" = "False False / False" ]
}

@test "processes an execution left (a child, a double-forked daemon, a setsid one) are gone in the next" {
    local first_machine=
    marker=p$RANDOM$RANDOM
    run_code "import os, subprocess, time
subprocess.Popen(['$marker-child', '600'], executable='/bin/sleep')
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['$marker-daemon', '600'])
    os._exit(0)
subprocess.Popen(['$marker-setsid', '600'], executable='/bin/sleep', start_new_session=True)
time.sleep(0.3)
seen = sorted(open('/proc/%s/cmdline' % p).read().split('\0')[0] for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/cmdline' % p).read().startswith('$marker'))
print(' '.join(seen))"
    # Positive control: all three were running when the first execution ended.
    [ "$(field .stdout)" = "$marker-child $marker-daemon $marker-setsid" ]
    run_code "import os
print(sum(1 for p in os.listdir('/proc') if p.isdigit() and '$marker' in open('/proc/%s/cmdline' % p).read()))"
    [ "$(field .stdout)" = 0 ]
    # Nor anywhere on the host.
    for i in $(seq 50); do
        pgrep -f "$marker" >/dev/null || break
        sleep 0.1
    done
    if pgrep -af "$marker"; then false; fi
}

@test "SysV and POSIX IPC objects and abstract sockets of an execution are gone in the next" {
    local first_machine=
    marker=i$RANDOM$RANDOM
    key=$((RANDOM * 1000 + 4242))
    run_code "import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
print('shm', libc.shmget($key, 4096, IPC_CREAT | 0o666) >= 0)
print('sem', libc.semget($key, 1, IPC_CREAT | 0o666) >= 0)
print('msg', libc.msgget($key, IPC_CREAT | 0o666) >= 0)
libc.mq_open.restype = ctypes.c_int
print('mq', libc.mq_open(b'/$marker', os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
fd = os.open('/dev/shm/$marker', os.O_CREAT | os.O_RDWR)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind('\0$marker')
s.listen()
if os.fork() == 0:
    os.setsid()
    time.sleep(600)
ipc = ''.join(open('/proc/sysvipc/' + t).read() for t in ('shm', 'sem', 'msg'))
print('sysvipc', ipc.count(' $key '))
print('abstract', '@$marker' in open('/proc/net/unix').read())"
    # Positive control: every object existed, seen by the kernel's own listings.
    [ "$(field .stdout)" = "$(printf 'shm True\nsem True\nmsg True\nmq True\nsysvipc 3\nabstract True')" ]
    run_code "import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
ipc = ''.join(open('/proc/sysvipc/' + t).read() for t in ('shm', 'sem', 'msg'))
print('sysvipc', ipc.count(' $key '))
print('shm', libc.shmget($key, 4096, 0) >= 0)
print('mq', libc.mq_open(b'/$marker', os.O_RDWR) >= 0)
print('abstract', '@$marker' in open('/proc/net/unix').read())
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect('\0$marker')
    print('connect ok')
except OSError as e:
    print('connect', e.errno)"
    [ "$(field .stdout)" = "$(printf 'sysvipc 0\nshm False\nmq False\nabstract False\nconnect 111')" ]
}

@test "environment changes and kernel keyrings of an execution do not reach the next" {
    local first_machine=
    marker=e$RANDOM$RANDOM
    run_code "import ctypes, os
os.environ['SANDBOXD_MARK'] = '$marker'
os.putenv('SANDBOXD_MARK2', '$marker')
print('env', os.environ.get('SANDBOXD_MARK'))
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key = 248
r = libc.syscall(SYS_add_key, b'user', b'$marker', b'v', 1, -3)
print('add_key', r >= 0 or ctypes.get_errno())"
    # Positive control: the environment took the change; adding a key to the user keyring was
    # tried, and the system-call filter refused it (EPERM).
    [ "$(field .stdout)" = "$(printf 'env %s\nadd_key 1' "$marker")" ]
    run_code "import os
print(os.environ.get('SANDBOXD_MARK'), os.environ.get('SANDBOXD_MARK2'))
try:
    keys = open('/proc/keys').read()
except OSError:
    keys = ''
print('$marker' in keys)"
    [ "$(field .stdout)" = "$(printf 'None None\nFalse')" ]
}

@test "an execution sees only its own processes: not the machine's runner, zygote or earlier sandboxes" {
    local first_machine=
    run_code 'print(1)'
    unit="$first_machine.service"
    # Positive control: the machine has its runner and its zygote, seen from the host.
    procs=$(in_systemd systemctl show -p ControlGroup --value "$unit")
    [ -n "$procs" ]
    [ "$(in_systemd systemd-cgls --no-pager -u "$unit" | grep -c -e sandboxd-runner -e "python3 -c")" -ge 2 ]
    run_code "import os
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
print(pids, os.getpid(), os.getppid())
print(any(b'sandboxd-runner' in open('/proc/%d/cmdline' % p, 'rb').read() for p in pids))"
    [ "$(sed -n 1p <<<"$(field .stdout)")" = "[1, 2] 2 1" ]
    [ "$(sed -n 2p <<<"$(field .stdout)")" = False ]
}

@test "the code cannot signal or trace its sandbox's init, nor reach the machine's processes" {
    local first_machine=
    run_code 'print(1)'
    before=$(in_systemd systemd-cgls --no-pager -u "$first_machine.service" | grep -c -e sandboxd-runner -e "python3 -c")
    run_code "import ctypes, os, signal, subprocess
libc = ctypes.CDLL(None, use_errno=True)
os.kill(1, signal.SIGKILL)
os.kill(1, signal.SIGTERM)
print('init alive', os.path.exists('/proc/1'))
PTRACE_ATTACH = 16
print('ptrace', libc.ptrace(PTRACE_ATTACH, 1, None, None), ctypes.get_errno())
child = subprocess.Popen(['/bin/sleep', '600'])
os.kill(-1, signal.SIGKILL)
print('kill(-1)', child.wait(), os.path.exists('/proc/1'))"
    # The init survived its own signals, and ptrace was tried and refused; kill(-1) reached the
    # code's own child and spared the init (and the caller, as it always does).
    [ "$(field .exit_code)" = 0 ]
    out=$(field .stdout)
    [ "$(sed -n 1p <<<"$out")" = "init alive True" ]
    [[ $(sed -n 2p <<<"$out") =~ ^ptrace\ -1\ (1|38)$ ]]
    [ "$(sed -n 3p <<<"$out")" = "kill(-1) -9 True" ]
    # The same machine serves the next execution: nothing outside the sandbox was touched.
    run_code 'print(2)'
    after=$(in_systemd systemd-cgls --no-pager -u "$first_machine.service" | grep -c -e sandboxd-runner -e "python3 -c")
    [ "$after" -ge 2 ]
    [ "$before" -ge 2 ]
}

@test "a crash retires its machine and the next execution runs, unharmed, in a new one" {
    local first_machine=
    run_code 'print(1)'
    machine=$first_machine
    execute '{"code":"import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"}'
    expect_status 200
    [ "$(field .exit_code)" = 139 ]
    [ "$(machine_of "$rid")" = "$machine" ]
    expect_sandbox_gone "$machine"
    first_machine=
    run_code 'print(2)'
    [ "$(field .stdout)" = 2 ]
    [ "$first_machine" != "$machine" ]
}

@test "running out of memory retires the machine and the next execution runs in a new one" {
    local first_machine=
    run_code 'print(1)'
    machine=$first_machine
    execute '{"code":"x = []\nwhile True:\n    x.append(bytearray(64 << 20))"}'
    expect_status 200
    [ "$(field .limit_exceeded)" = memory ]
    [ "$(machine_of "$rid")" = "$machine" ]
    expect_sandbox_gone "$machine"
    first_machine=
    run_code 'print(3)'
    [ "$(field .stdout)" = 3 ]
    [ "$first_machine" != "$machine" ]
}

@test "a timeout kills the whole machine through systemd, and the next execution runs in a new one" {
    local first_machine=
    run_code 'print(1)'
    machine=$first_machine
    execute '{"code":"import time; time.sleep(30)","timeout_s":1}'
    expect_status 200
    [ "$(field .exit_code)" = -1 ]
    expect_sandbox_gone "$machine"
    first_machine=
    run_code 'print(4)'
    [ "$first_machine" != "$machine" ]
}

@test "a machine serves SANDBOXD_EXECUTIONS_PER_MACHINE executions, then a new one takes over" {
    local first_machine=
    with_settings zz-reuse SANDBOXD_POOL_TARGET=1 SANDBOXD_POOL_MAX=1 SANDBOXD_EXECUTIONS_PER_MACHINE=3
    wait_pool_full
    for i in 1 2 3; do
        run_code "print($i)"
    done
    [ "$(db "SELECT count(*) FROM requests WHERE machine_id = '$first_machine'")" = 3 ]
    expect_sandbox_gone "$first_machine"
    machine=$first_machine
    first_machine=
    run_code 'print(4)'
    [ "$first_machine" != "$machine" ]
    with_settings zz-reuse SANDBOXD_POOL_TARGET=1 SANDBOXD_POOL_MAX=1 SANDBOXD_EXECUTIONS_PER_MACHINE=1000
}

@test "a body the worker takes, however deep it nests, runs and leaves its machine serving" {
    local first_machine=
    run_code 'print(1)'
    # A files entry with a field of its own 40 levels deep: deeper than json-c's default depth (32),
    # which the runner once parsed with, and within the worker's.
    nest=$(printf '[%.0s' $(seq 40))$(printf ']%.0s' $(seq 40))
    [ "$(tr -cd '[' <<<"$nest" | wc -c)" -eq 40 ]
    execute "$(code_json 'print(open("a.txt").read())' "{files: [{path: \"a.txt\", content_b64: \"aGk=\", x: $nest}]}")"
    expect_status 200
    [ "$(field .stdout)" = "hi" ]
    [ "$(machine_of "$rid")" = "$first_machine" ]
    # The same machine serves the next execution: it was not retired for the body.
    run_code 'print(2)'
    [ "$(field .stdout)" = "2" ]
}

# The processes of machine unit $1 and how many times each was switched out (voluntarily or not,
# over its threads), one a line: "PID COMM SWITCHES".
machine_switches() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    in_systemd sh -c 'cg=$(systemctl show -p ControlGroup --value "$1"); d=/sys/fs/cgroup/systemd
        [ -d "$d" ] || d=/sys/fs/cgroup
        for p in $(find "$d$cg" -name cgroup.procs -exec cat {} + | sort -n); do
            echo "$p $(cat /proc/"$p"/comm /proc/"$p"/task/*/status 2>/dev/null | awk "NR == 1 { c = \$1 } /voluntary_ctxt_switches/ { s += \$2 } END { print c, s }")"
        done' sh "$1"
}

@test "a warm machine sleeps between executions: its runner, zygote and the next sandbox, node started ahead" {
    local first_machine=
    run_code 'print(1)'
    execute "$(code_json 'console.log(2)' '{language: "node"}')"
    expect_status 200
    [ "$(machine_of "$rid")" = "$first_machine" ]
    [ "$(field .stdout)" = 2 ]
    sleep 2
    # Positive control: an execution on the machine is seen, by the runner's count at least.
    before=$(machine_switches "$first_machine.service")
    grep -q ' sandboxd-runner ' <<<"$before"
    execute "$(code_json 'console.log(3)' '{language: "node"}')"
    expect_status 200
    [ "$(machine_of "$rid")" = "$first_machine" ]
    sleep 2
    after=$(machine_switches "$first_machine.service")
    [ "$(grep ' sandboxd-runner ' <<<"$before")" != "$(grep ' sandboxd-runner ' <<<"$after")" ]
    grep -q ' node ' <<<"$after"
    # Idle: nothing of it runs for 3 s.
    sleep 3
    idle=$(machine_switches "$first_machine.service")
    echo "$after" >&2
    [ "$idle" = "$after" ]
}
