#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Attacks through the HTTP API: each test fails if the attack works.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    wait_pool_full
}

teardown() {
    execute_abandon
    expect_no_leftovers
}

run_code() {
    execute "$(code_json "$1" "${2:-}")"
    expect_status 200
}

@test "host files outside /usr are invisible: planted tokens are found nowhere" {
    token="sbx-token-$RANDOM$RANDOM$RANDOM"
    planted=()
    for d in /root /etc /tmp /var/tmp /srv /home /run; do
        # Both the caller's view and systemd's (a private systemd has its own /tmp and /run).
        if echo "$token" >"$d/$token.txt"; then planted+=("$d/$token.txt"); fi
        if in_systemd sh -c "echo $token > $d/$token-ns.txt"; then planted+=("ns:$d/$token-ns.txt"); fi
    done
    # The tokens are there to be found: most of the places took one.
    [ "${#planted[@]}" -ge 10 ]
    run_code "import os
token = '$token'
found = []
for root, dirs, files in os.walk('/', onerror=None):
    if root.startswith(('/proc', '/sys', '/dev')):
        dirs[:] = []
        continue
    for name in dirs + files:
        if token in name:
            found.append(os.path.join(root, name))
    if root.startswith('/usr'):
        continue  # the host's read-only /usr, where nothing was planted; names are checked
    for name in files:
        p = os.path.join(root, name)
        try:
            with open(p, 'rb') as f:
                if token.encode() in f.read(1 << 20):
                    found.append(p)
        except OSError:
            pass
print(found)" '{timeout_s: 60}'
    for p in "${planted[@]}"; do
        case $p in ns:*) in_systemd rm -f "${p#ns:}" ;; *) rm -f "$p" ;; esac
    done
    [ "$(field .stdout)" = "[]" ]
}

@test "only the sandbox's own processes are visible" {
    run_code "import os
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
names = sorted(open('/proc/%d/comm' % p).read().strip() for p in pids if os.path.exists('/proc/%d/comm' % p))
print(len(pids) <= 5, [n for n in names if n in ('nginx', 'sandboxd-fcgi', 'sandboxd-worker', 'sandboxd-broker', 'sandboxd-poold', 'systemd-journal', 'dbus-daemon')])"
    [ "$(field .stdout)" = "True []" ]
}

@test "kill(-1, SIGKILL) stays inside: it kills the code's own processes, not the runner, never the service" {
    # The runner is the sandbox's PID 1, which no process inside may signal: kill(-1) reaches the
    # code's own children only, and the execution is answered as usual.
    run_code "import os, signal, subprocess
p = subprocess.Popen(['sleep', '30'])
os.kill(-1, signal.SIGKILL)
print(p.wait(), flush=True)
os.kill(1, signal.SIGKILL)
os.killpg(0, signal.SIGKILL)"
    [ "$(field .stdout)" = "-9" ]
    [ "$(field .exit_code)" = 137 ]
    execute '{"code":"print(\"alive\")"}'
    [ "$(field .stdout)" = alive ]
    for u in sandbox-api.service sandboxd-broker.service sandboxd-poold.service sandboxd-nginx.service systemd-journald.service dbus.service; do
        [ "$(in_systemd systemctl is-active "$u")" = active ]
    done
}

@test "concurrent sandboxes cannot see each other's files or processes" {
    marker="sbx-peer-$RANDOM$RANDOM"
    # The peer plants its files and a process, then runs until the test releases it.
    code_json "import os, subprocess, time
open('/workspace/$marker', 'w').write('x')
open('/tmp/$marker', 'w').write('x')
subprocess.Popen($(marker_argv "$marker"))
$(until_released released released 1000)" '{timeout_s: 60}' >"$BATS_TEST_TMPDIR/peer"
    execute_async "$BATS_TEST_TMPDIR/peer"
    # Positive control: the peer's process runs, and its files are there, in its own sandbox.
    pid=$(marker_pid "$marker")
    [ -f "/proc/$pid/root/workspace/$marker" ]
    [ -f "/proc/$pid/root/tmp/$marker" ]
    run_code "import os
seen = []
for root in ('/workspace', '/tmp', '/var/tmp', '/run'):
    for r, d, f in os.walk(root):
        seen += [x for x in f + d if '$marker' in x]
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            if '$marker' in open('/proc/%s/cmdline' % p).read():
                seen.append(p)
        except OSError:
            pass
print(seen)"
    [ "$(field .stdout)" = "[]" ]
    # The peer was there all along.
    [ "$(marker_pid "$marker")" = "$pid" ]
    release "$pid" released
    execute_wait
    expect_status 200
    [ "$(field .stdout)" = released ]
    expect_marker_gone "$marker"
}

@test "no network: a loopback of its own, and the service's port unreachable on 127.0.0.1 and ::1" {
    port=$(listen_port)
    # Positive control: the port answers from here.
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/")" = 404 ]
    run_code "import socket
print(sorted(i[1] for i in socket.if_nameindex()))
for fam, addr in ((socket.AF_INET, ('127.0.0.1', $port)), (socket.AF_INET6, ('::1', $port))):
    s = socket.socket(fam)
    s.settimeout(2)
    try:
        s.connect(addr)
        print('connected')
    except OSError as e:
        print(type(e).__name__)"
    [ "$(field .stdout)" = "['lo']
ConnectionRefusedError
ConnectionRefusedError" ]
}

@test "no privilege: unprivileged user, no capabilities, no new privileges, a system-call filter" {
    run_code "import os
s = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines() if ':' in l)
print(os.getuid(), os.geteuid(), os.getgid())
print(s['CapEff'].strip(), s['CapPrm'].strip(), s['CapBnd'].strip() == '0000000000000000')
print(s['CapInh'].strip(), s['CapAmb'].strip(), os.getgroups())
print(s['NoNewPrivs'].strip(), s['Seccomp'].strip())
print(open('/proc/self/uid_map').read().split()[1] != '0')"
    [ "$(field .stdout)" = "1000 1000 1000
0000000000000000 0000000000000000 True
0000000000000000 0000000000000000 []
1 2
True" ]
}

@test "no privilege: writing /usr or /proc/sys, mount, modules, kcore, ptrace, keyctl, mknod all fail" {
    run_code "import ctypes, ctypes.util, os, errno
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    # An exception or a negative return (libc's -1) is a failure; anything else worked: a read's
    # bytes, a call's None, a non-negative number.
    try:
        r = f()
        ok = not isinstance(r, int) or r >= 0
    except OSError:
        ok = False
    print(name, 'WORKED' if ok else 'failed')
def w(p):
    with open(p, 'w') as f:
        f.write('x')
def r(p):
    with open(p, 'rb') as f:
        return f.read(1)
# Controls: what the probe must count as working, and a call that fails by returning -1.
attempt('control-read', lambda: r('/proc/self/status'))
attempt('control-write', lambda: w('/tmp/sbx-control'))
attempt('control-syscall', lambda: libc.syscall(39))
attempt('control-fail', lambda: libc.close(-1))
attempt('write-usr', lambda: w('/usr/sbx-test'))
attempt('write-proc-sys', lambda: w('/proc/sys/kernel/hostname'))
attempt('mount', lambda: libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))
attempt('init_module', lambda: libc.syscall(175, None, 0, b''))
attempt('read-kcore', lambda: r('/proc/kcore'))
attempt('ptrace-pid1', lambda: libc.ptrace(16, 1, None, None))
attempt('keyctl', lambda: libc.syscall(250, 0, -1, 0, 0, 0))
attempt('mknod', lambda: os.mknod('/tmp/sbx-dev', 0o600 | 0o020000, os.makedev(1, 3)))
attempt('setuid0', lambda: os.setuid(0))
attempt('chroot', lambda: os.chroot('/tmp'))
attempt('bpf', lambda: libc.syscall(321, 0, None, 0))
attempt('perf_event_open', lambda: libc.syscall(298, None, 0, -1, -1, 0))
attempt('process_vm_readv', lambda: libc.syscall(310, 1, None, 0, None, 0, 0))
import socket
attempt('audit-socket', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9).close())"
    [ "$(field .stdout)" = "control-read WORKED
control-write WORKED
control-syscall WORKED
control-fail failed
write-usr failed
write-proc-sys failed
mount failed
init_module failed
read-kcore failed
ptrace-pid1 failed
keyctl failed
mknod failed
setuid0 failed
chroot failed
bpf failed
perf_event_open failed
process_vm_readv failed
audit-socket failed" ] || { field .stdout >&2; false; }
}

@test "import restrictions are not the boundary: os and subprocess work, inside the walls" {
    run_code "import os, subprocess
print(subprocess.run(['id', '-u'], capture_output=True, text=True).stdout.strip(), os.system('true'))"
    [ "$(field .stdout)" = "1000 0" ]
}

@test "a memory bomb (touch 8 GiB) is killed at the memory limit, says so, and the next request succeeds" {
    slice_before=$(in_systemd systemctl show -P MemoryCurrent sandbox.slice)
    [[ $slice_before =~ ^[0-9]+$ ]]
    SECONDS=0
    run_code "b = bytearray(8 << 30)
for i in range(0, len(b), 4096):
    b[i] = 1
print('survived')" '{timeout_s: 60}'
    [ "$SECONDS" -lt 60 ]
    [ "$(field .exit_code)" = 137 ]
    [ "$(field .limit_exceeded)" = memory ]
    [[ $(field .stderr) == *"sandboxd: killed: the memory limit of 512 MiB was exceeded"* ]]
    [[ $(field .stdout) != *survived* ]]
    execute '{"code":"print(\"next\")"}'
    [ "$(field .stdout)" = next ]
    # The memory came back: the sandboxes' slice holds, within 256 MiB, what it held before.
    for _ in $(seq 100); do
        slice_after=$(in_systemd systemctl show -P MemoryCurrent sandbox.slice)
        [ "$slice_after" -lt $((slice_before + (256 << 20))) ] && break
        sleep 0.1
    done
    [ "$slice_after" -lt $((slice_before + (256 << 20))) ] || { echo "sandbox.slice: $slice_before bytes before, $slice_after after" >&2; false; }
}

@test "a fork bomb ends in bounded time at the task limit, says so, and the next request succeeds" {
    SECONDS=0
    run_code "import os, time
n = 0
for _ in range(100000):
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError:
        break
print('forked', n)" '{timeout_s: 20}'
    [ "$SECONDS" -lt 30 ]
    [ "$(field .limit_exceeded)" = tasks ]
    [[ $(field .stdout) =~ ^forked\ [0-9]+$ ]]
    [ "$(field .stdout | awk '{print $2}')" -lt 128 ]
    execute '{"code":"print(\"next\")"}'
    [ "$(field .stdout)" = next ]
}

@test "a disk fill stops at the size cap of the writable area, the host's disk untouched" {
    # The writable area is a tmpfs of the sandbox's own (128 MiB): nothing written there reaches a disk.
    # The last mount at /workspace is the one the code sees (the machine's own lies under it).
    run_code "import errno
fstype = [l.split(' - ')[1].split()[0] for l in open('/proc/self/mountinfo') if l.split()[4] == '/workspace'][-1:]
n = 0
try:
    with open('/workspace/fill', 'wb') as f:
        while True:
            f.write(b'x' * (1 << 20))
            f.flush()
            n += 1
except OSError as e:
    print(' '.join(fstype), errno.errorcode[e.errno], n)" '{timeout_s: 60}'
    [[ $(field .stdout) =~ ^tmpfs\ ENOSPC\ 12[0-9]$ ]]
    execute '{"code":"print(\"next\")"}'
    [ "$(field .stdout)" = next ]
}

@test "open files are capped" {
    run_code "import resource, os
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
fds = []
try:
    while True:
        fds.append(os.open('/dev/null', os.O_RDONLY))
except OSError as e:
    print(soft, hard, len(fds) < 1024, e.errno)"
    [ "$(field .stdout)" = "1024 1024 True 24" ]
}

@test "CPU is capped at the quota: two busy processes get one CPU between them" {
    run_code "import os, time, resource
def spin():
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.5:
        pass
pids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        spin()
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime + resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime)"
    # 3 CPU-seconds wanted in 1.5 s; SANDBOXD_CPU_QUOTA_PERCENT=100 grants about 1.5.
    awk -v t="$(field .stdout)" 'BEGIN { exit !(t < 2.0) }'
}

@test "a URL with %00 is nginx's 400 in JSON with its request id, never its HTML 500; the same URL without it is served" {
    local hdr="$BATS_TEST_TMPDIR/hdr" path
    body=$(curl -s -D "$hdr" "$SANDBOXD_URL/v1/pool")
    read_headers "$hdr"
    expect_status 200
    for path in /v1/pool%00 /v1/po%00ol /mcp%00 /v1/sessions/x/files/a%00b /v1/execute%00.bin /%00; do
        body=$(curl -s -D "$hdr" "$SANDBOXD_URL$path")
        read_headers "$hdr"
        expect_error 400 "bad request"
        # Refused before any worker saw it: no row, no audit entry to find.
        [ "$(db "SELECT count(*) FROM requests WHERE request_id = '$rid'")" = 0 ]
    done
    body=$(curl -s -D "$hdr" -X POST -H 'content-type: application/json' --data-binary '{}' "$SANDBOXD_URL/mcp%00")
    read_headers "$hdr"
    expect_error 400 "bad request"
}
