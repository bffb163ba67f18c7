#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The egress chain on its own (nspawn/egress/): Debian's Squid with sandboxd's squid.conf and
# helper, Debian's HAProxy in front of it for plain HTTP (haproxy.cfg.in), and the relay
# (sandboxd-egress), in a network namespace whose only routes lead to the test "internet" that
# tests/egress/net makes. The first tests speak to Squid and HAProxy as the relay would: from an
# execution's address, 127.64.0.1, whose list is the file lists/127.64.0.1. The last ones go through the relay from a
# namespace that stands for a sandbox's, with no route anywhere (relay-client.py stands for the
# runner and the worker). Every check that something is refused comes after its positive control.

BUILD=${BUILD:-build}

setup_file() {
    # Squid's user (proxy) must reach its files: not below the suite's private temporary directory.
    EG=$(mktemp -d /var/tmp/sandboxd-egress-test.XXXXXX)
    export EG
    chmod 0755 "$EG"
    mkdir -p "$EG/net" "$EG/run" "$EG/lists"
    "$BATS_TEST_DIRNAME/net" up "$EG/net"
    # Squid's configuration as the unit makes it (sandboxd-egress-setup, in Squid's namespace), from
    # this tree: the template and the helper, the test's resolver and an access log to read.
    mkdir -p "$EG/lib"
    install -m 0755 "$BUILD/sandboxd-egress-acl" "$EG/lib/sandboxd-egress-acl"
    install -m 0644 "$BATS_TEST_DIRNAME/../../nspawn/egress/squid.conf.in" "$BATS_TEST_DIRNAME/../../nspawn/egress/haproxy.cfg.in" \
        "$BATS_TEST_DIRNAME/../../nspawn/egress/egress-list.lua" "$EG/lib/"
    printf '%s\n' "access_log stdio:$EG/run/access.log" >"$EG/extra.conf"
    chmod -R a+rX "$EG"
    chown nobody "$EG/lists"
    ip netns exec sbxeg-proxy env SANDBOXD_EGRESS_LIBDIR="$EG/lib" SANDBOXD_EGRESS_SQUID_EXTRA="$EG/extra.conf" \
        SANDBOXD_EGRESS_PROXY=127.0.0.1:3128 SANDBOXD_EGRESS_LISTS="$EG/lists" SANDBOXD_EGRESS_RESOLVERS=192.0.2.53 \
        "$BATS_TEST_DIRNAME/../../nspawn/egress/sandboxd-egress-setup" "$EG/run"
    ip netns exec sbxeg-proxy env SANDBOXD_EGRESS_LIBDIR="$EG/lib" SANDBOXD_EGRESS_LISTS="$EG/lists" SANDBOXD_EGRESS_RESOLVERS=192.0.2.53 \
        "$BATS_TEST_DIRNAME/../../nspawn/egress/sandboxd-egress-setup" --front "$EG/front"
    : >"$EG/run/access.log"
    chown proxy "$EG/run/access.log"
    ip netns exec sbxeg-proxy setsid setpriv --reuid=proxy --regid=proxy --clear-groups \
        /usr/sbin/squid -N -f "$EG/run/squid.conf" >"$EG/squid.out" 2>&1 </dev/null &
    # HAProxy as its unit runs it, in the foreground.
    ip netns exec sbxeg-proxy setsid setpriv --reuid=haproxy --regid=haproxy --clear-groups \
        /usr/sbin/haproxy -db -f "$EG/front/haproxy.cfg" >"$EG/front.out" 2>&1 </dev/null &
    echo $! >"$EG/front.pid"
    # The relay, as an unprivileged user, beside Squid; it writes the executions' lists.
    mkdir -p "$EG/relay"
    chown nobody "$EG/relay"
    ip netns exec sbxeg-proxy setsid setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env SANDBOXD_EGRESS_LISTS="$EG/lists" SANDBOXD_EGRESS_SOCKET="$EG/relay/egress.sock" SANDBOXD_EGRESS_PROXY=127.0.0.1:3128 \
        "$BUILD/sandboxd-egress" >"$EG/relay.out" 2>&1 </dev/null &
    echo $! >"$EG/relay.pid"
    # A sandbox's namespace: its own loopback, no route anywhere.
    for ns in sbxeg-sbx sbxeg-sbx2; do
        ip netns add "$ns"
        ip -n "$ns" link set lo up
    done
    head -c 10485760 /dev/urandom >"$EG/net/www-192.0.2.10/big.bin"
    for _ in $(seq 200); do
        if ip netns exec sbxeg-proxy ss -Hltn 'sport = :3128' | grep -q . && [ -S "$EG/relay/egress.sock" ] &&
            ip netns exec sbxeg-proxy ss -Hltn 'sport = :3131' | grep -q .; then
            return 0
        fi
        sleep 0.05
    done
    cat "$EG/squid.out" "$EG/relay.out" "$EG/front.out" >&2
    return 1
}

teardown_file() {
    [ ! -f "$EG/run/squid.pid" ] || kill "$(cat "$EG/run/squid.pid")" 2>/dev/null || true
    [ ! -f "$EG/relay.pid" ] || kill "$(cat "$EG/relay.pid")" 2>/dev/null || true
    [ ! -f "$EG/front.pid" ] || kill "$(cat "$EG/front.pid")" 2>/dev/null || true
    ip netns del sbxeg-sbx 2>/dev/null || true
    ip netns del sbxeg-sbx2 2>/dev/null || true
    "$BATS_TEST_DIRNAME/net" down "$EG/net"
    rm -rf "$EG"
}

# allow ENTRY...: the client's list, as the relay writes it for an execution.
allow() {
    printf '%s\n' "$@" >"$EG/lists/127.64.0.1"
}

# get URL [CURL OPTIONS]: as the relay sends it, HTTPS (a tunnel) to Squid's tunnel port, anything
# else to the front; the status in $status_code, the body in $out.
get() {
    local url=$1 proxy=http://127.0.0.1:3131
    shift
    [[ $url != https:* ]] || proxy=http://127.0.0.1:3128
    get_via "$proxy" "$url" "$@"
}

# get_via PROXY URL [CURL OPTIONS]: through PROXY, whichever the URL.
get_via() {
    local proxy=$1 url=$2
    shift 2
    out=$(ip netns exec sbxeg-proxy curl -sS -m 10 --interface 127.64.0.1 -x "$proxy" --cacert "$EG/net/ca.pem" \
        -w '\n%{http_code}' "$@" "$url" 2>"$BATS_TEST_TMPDIR/curl.err") || true
    status_code=${out##*$'\n'}
    out=${out%$'\n'*}
    out=${out%$'\n'}
}

# raw_front REQUEST: REQUEST (with printf's escapes) sent to the front as is, from 127.64.0.1; the
# code of the answer's status line in $status_code.
raw_front() {
    # shellcheck disable=SC2059 # the request is the format: its \r\n are printf's
    status_code=$(printf "$1" | ip netns exec sbxeg-proxy python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", 3131), timeout=10, source_address=("127.64.0.1", 0))
s.sendall(sys.stdin.buffer.read())
answer = b""
while b"\r\n" not in answer:
    chunk = s.recv(4096)
    if not chunk:
        break
    answer += chunk
print(answer.split(b" ")[1].decode() if answer else "none")')
}

# requests_to ADDR: how many requests the test host at ADDR has served.
requests_to() {
    grep -c '"GET ' "$EG/net/http-$1.log" || true
}

# tunnel_refused NAME ADDR: NAME, on the list, resolves to ADDR, whose host answers HTTPS straight
# from the proxy's namespace (the control), and never through a tunnel: Squid refuses it by its
# rules (its log says so).
tunnel_refused() {
    run ip netns exec sbxeg-proxy curl -sS -m 5 --cacert "$EG/net/ca.pem" --resolve "$1:443:$2" "https://$1/index.html"
    [ "$output" = "hello from $2" ]
    get "https://$1/index.html"
    [ "$status_code" != 200 ]
    [[ $out != *"hello from"* ]]
    grep -q "TCP_DENIED/[0-9]* [0-9]* CONNECT $1:443" "$EG/run/access.log"
}

@test "an allowed name works over HTTP and HTTPS; a name not on the list is refused" {
    allow www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    [ "$out" = "hello from 192.0.2.10" ]
    get https://www.egress.test/index.html
    [ "$status_code" = 200 ]
    [ "$out" = "hello from 192.0.2.10" ]
    # The same host by its other name, not on the list: refused, both ways.
    get http://other.egress.test/index.html
    [ "$status_code" = 403 ]
    get https://other.egress.test/index.html
    [ "$status_code" != 200 ]
    [ -z "$out" ] || [[ $out != *"hello from"* ]]
    # A port the entry does not name.
    allow www.egress.test:443
    get https://www.egress.test/index.html
    [ "$status_code" = 200 ]
    get http://www.egress.test/index.html
    [ "$status_code" = 403 ]
}

@test "the front and Squid decide by one rule: a wildcard covers the names below it, a port only itself" {
    local scheme
    for scheme in http https; do
        # Controls: each list lets the name through at the scheme's own port.
        allow '*.egress.test'
        get "$scheme://www.egress.test/index.html"
        [ "$status_code" = 200 ]
        allow www.egress.test:80 www.egress.test:443
        get "$scheme://WWW.Egress.TEST/index.html"
        [ "$status_code" = 200 ]
        # Not the suffix itself, not another port, not a name below the one listed.
        allow '*.www.egress.test'
        get "$scheme://www.egress.test/index.html"
        [ "$status_code" != 200 ]
        allow www.egress.test:8080
        get "$scheme://www.egress.test/index.html"
        [ "$status_code" != 200 ]
        allow egress.test
        get "$scheme://www.egress.test/index.html"
        [ "$status_code" != 200 ]
    done
}

@test "a name the resolver does not know fails, and is no refusal" {
    # Control: a name it knows, through the relay.
    through n1 www.egress.test curl -sS -m 10 -o /dev/null -w '%{http_code}' http://www.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" = 0 ]
    jq -e '.usage.refused == 0 and .usage.hosts == ["www.egress.test"]' <<<"$out"
    allow nowhere.egress.test
    get http://nowhere.egress.test/
    [ "$status_code" = 502 ]
    through n2 nowhere.egress.test curl -sS -m 10 -o /dev/null http://nowhere.egress.test/
    jq -e '.usage.refused == 0 and .usage.hosts == [] and .usage.refused_hosts == []' <<<"$out"
}

@test "a client with no list of its own gets nothing" {
    allow www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    rm "$EG/lists/127.64.0.1"
    get http://www.egress.test/index.html
    [ "$status_code" = 403 ]
    get https://www.egress.test/index.html
    [ "$status_code" != 200 ]
}

@test "an allowed name that resolves to a private or the metadata address is refused, and the host never asked" {
    # Control: both hosts are there and answer, straight from the proxy's namespace.
    run ip netns exec sbxeg-proxy curl -sS -m 5 http://10.20.30.40/
    [ "$output" = "hello from 10.20.30.40" ]
    run ip netns exec sbxeg-proxy curl -sS -m 5 http://169.254.169.254/
    [ "$output" = "hello from 169.254.169.254" ]
    run ip netns exec sbxeg-proxy curl -sS -m 5 -g 'http://[2002:a14:1e28::1]/'
    [ "$output" = "hello from 2002:a14:1e28::1" ]
    local private metadata sixtofour
    private=$(requests_to 10.20.30.40)
    metadata=$(requests_to 169.254.169.254)
    sixtofour=$(requests_to 2002:a14:1e28::1)
    allow private.egress.test metadata.egress.test sixtofour.egress.test
    get http://private.egress.test/
    [ "$status_code" = 403 ]
    get http://metadata.egress.test/
    [ "$status_code" = 403 ]
    # An IPv6 address that embeds a private IPv4 one (6to4).
    get http://sixtofour.egress.test/
    [ "$status_code" = 403 ]
    # By address: no name, no list covers it.
    get http://169.254.169.254/
    [ "$status_code" = 403 ]
    [ "$(requests_to 10.20.30.40)" = "$private" ]
    [ "$(requests_to 169.254.169.254)" = "$metadata" ]
    [ "$(requests_to 2002:a14:1e28::1)" = "$sixtofour" ]
    # Over HTTPS, Squid's refusals.
    tunnel_refused private.egress.test 10.20.30.40
    tunnel_refused metadata.egress.test 169.254.169.254
}

@test "the front's odd requests: a URL with no path is taken, one with no host and a port past 65535 are not" {
    local seen
    allow www.egress.test
    seen=$(requests_to 192.0.2.10)
    # Control: "http://host" with no path, as urllib sends it through a proxy, reaches "/".
    raw_front 'GET http://www.egress.test HTTP/1.1\r\nHost: www.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 200 ]
    [ "$(requests_to 192.0.2.10)" = $((seen + 1)) ]
    run tail -n 1 "$EG/net/http-192.0.2.10.log"
    [[ $output == *'"GET / HTTP/1.1" 200'* ]]
    # No authority (HAProxy would take any Host with it); a port written past 65535 (HAProxy reads
    # 4294967376 as 80) or 0: 400, and nothing reaches the host.
    raw_front 'GET http:///index.html HTTP/1.1\r\nHost: www.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    raw_front 'GET http://www.egress.test:4294967376/ HTTP/1.1\r\nHost: www.egress.test:4294967376\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    raw_front 'GET http://www.egress.test:0/ HTTP/1.1\r\nHost: www.egress.test:0\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    [ "$(requests_to 192.0.2.10)" = $((seen + 1)) ]
}

@test "a tunnel whose TLS SNI names another host is cut" {
    allow www.egress.test
    # Control: the SNI that names the CONNECT's host, verified by the test CA. (curl sends the
    # URL's name as SNI and, with --connect-to, asks the proxy for the other host.)
    get https://www.egress.test/index.html
    [ "$status_code" = 200 ]
    [ "$out" = "hello from 192.0.2.10" ]
    # other.egress.test is a name the server's certificate holds too: only the SNI check stops it.
    get https://other.egress.test/index.html --connect-to other.egress.test:443:www.egress.test:443
    [ "$status_code" != 200 ]
    [[ $out != *"hello from"* ]]
    grep -q 'CONNECT www.egress.test:443' "$EG/run/access.log"
}

@test "a plain request whose Host names another host than its URL is refused by the front, and the host never asked" {
    local seen
    allow www.egress.test
    # Control: its own name in Host, with the port or without.
    seen=$(requests_to 192.0.2.10)
    get http://www.egress.test/index.html -H 'Host: www.egress.test'
    [ "$status_code" = 200 ]
    get http://www.egress.test/index.html -H 'Host: www.egress.test:80'
    [ "$status_code" = 200 ]
    [ "$(requests_to 192.0.2.10)" = $((seen + 2)) ]
    # Another name, allowed or not, and a second Host header: 400, and nothing reaches the host.
    get http://www.egress.test/index.html -H 'Host: other.egress.test'
    [ "$status_code" = 400 ]
    allow www.egress.test other.egress.test
    get http://www.egress.test/index.html -H 'Host: other.egress.test'
    [ "$status_code" = 400 ]
    # (curl sends one Host header at most: this one is written by hand.)
    raw_front 'GET http://www.egress.test/index.html HTTP/1.1\r\nHost: www.egress.test\r\nHost: other.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    raw_front 'GET http://www.egress.test/index.html HTTP/1.1\r\nHost: www.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 200 ]
    # A query may hold an "@" (control); an authority may not: HAProxy would read the host after it
    # ("other"), Squid before the "?" or "#" ("www").
    raw_front 'GET http://www.egress.test/index.html?to=@other.egress.test HTTP/1.1\r\nHost: www.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 200 ]
    seen=$((seen + 2))
    raw_front 'GET http://www.egress.test?@other.egress.test/index.html HTTP/1.1\r\nHost: other.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    raw_front 'GET http://www.egress.test#@other.egress.test/index.html HTTP/1.1\r\nHost: other.egress.test\r\nConnection: close\r\n\r\n'
    [ "$status_code" = 400 ]
    [ "$(requests_to 192.0.2.10)" = $((seen + 2)) ]
}

@test "each port takes its own: Squid's tunnel port no plain request, the front no CONNECT and no HTTP/2" {
    allow www.egress.test
    # Controls: a plain request through the front, a tunnel through Squid's port.
    get_via http://127.0.0.1:3131 http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    get_via http://127.0.0.1:3128 https://www.egress.test/index.html
    [ "$status_code" = 200 ]
    # Each the other way round: refused, and nothing reaches the host.
    local seen
    seen=$(requests_to 192.0.2.10)
    get_via http://127.0.0.1:3128 http://www.egress.test/index.html
    [ "$status_code" = 403 ]
    get_via http://127.0.0.1:3131 https://www.egress.test/index.html
    [ "$status_code" != 200 ]
    grep -q 'CONNECT tunnel failed, response 403' "$BATS_TEST_TMPDIR/curl.err"
    # HTTP/2 with prior knowledge: not taken.
    run ip netns exec sbxeg-proxy curl -sS -m 5 --interface 127.64.0.1 --http2-prior-knowledge -o /dev/null -w '%{http_code}' http://127.0.0.1:3131/
    [ "$output" != 200 ]
    [ "$(requests_to 192.0.2.10)" = "$seen" ]
}

@test "an allowed name that resolves to the proxy's own host is refused, and the host never asked" {
    # Control: the proxy's host serves on that address, straight from its namespace.
    run ip netns exec sbxeg-proxy curl -sS -m 5 http://192.0.2.99/
    [ "$output" = "hello from 192.0.2.99" ]
    local before
    before=$(requests_to 192.0.2.99)
    allow self.egress.test www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    get http://self.egress.test/
    [ "$status_code" = 403 ]
    [ "$(requests_to 192.0.2.99)" = "$before" ]
    # Over HTTPS, Squid's refusal.
    tunnel_refused self.egress.test 192.0.2.99
}

@test "the proxies' management interfaces and other protocols are refused" {
    local seen
    allow www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    # Through the front, Squid's manager path is the named host's path (its 404), never Squid's;
    # to Squid's own port, refused.
    seen=$(requests_to 192.0.2.10)
    get http://www.egress.test/squid-internal-mgr/info
    [ "$status_code" = 404 ]
    [ "$(requests_to 192.0.2.10)" = $((seen + 1)) ]
    get_via http://127.0.0.1:3128 http://www.egress.test/squid-internal-mgr/menu
    [ "$status_code" = 403 ]
    # A URL naming a proxy's own address (through the front): no name, refused.
    get http://127.0.0.1:3128/squid-internal-mgr/info
    [ "$status_code" = 403 ]
    get http://127.0.0.1:3131/
    [ "$status_code" = 403 ]
    # Another scheme: the front takes its Host's port for one the URL does not name.
    get ftp://www.egress.test/
    [ "$status_code" = 400 ]
    get_via http://127.0.0.1:3128 ftp://www.egress.test/
    [ "$status_code" = 403 ]
}

# through ID ENTRIES COMMAND...: COMMAND run in the sandbox's namespace, its connections through the
# relay as execution ID with that list (comma-separated); the relay's answers in $out (JSON).
through() {
    local id=$1 entries=$2
    shift 2
    out=$(ip netns exec sbxeg-sbx "$BATS_TEST_DIRNAME/relay-client.py" "$EG/relay/egress.sock" "$EG/lists" "$id" "$entries" -- "$@")
}

@test "through the relay: an execution reaches its names over HTTP and HTTPS, nothing else, and its bytes are counted" {
    through x1 www.egress.test curl -sS -m 10 --cacert "$EG/net/ca.pem" -o /dev/null -o /dev/null http://www.egress.test/index.html https://www.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" = 0 ]
    jq -e '.registered.address | test("^127\\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\\.")' <<<"$out"
    [ "$(jq -r .list <<<"$out")" = www.egress.test ]
    [ "$(jq -r .list_after <<<"$out")" = false ]
    jq -e '.usage.connections == 2 and .usage.refused == 0 and .usage.tx_bytes > 100 and .usage.rx_bytes > 1000' <<<"$out"
    # The names it reached, from the proxy's log, in its report.
    jq -e '.usage.hosts == ["www.egress.test"] and .usage.refused_hosts == []' <<<"$out"
    # A name outside its list: refused by the proxies (HAProxy, then Squid), over HTTP and HTTPS,
    # and reported so.
    through x2 www.egress.test curl -sS -m 10 -o "$EG/relay/x2.body" http://other.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" = 0 ]
    grep -q '403 Forbidden' "$EG/relay/x2.body"
    jq -e '.usage.hosts == [] and .usage.refused_hosts == ["other.egress.test"] and .usage.refused == 1' <<<"$out"
    through x3 www.egress.test curl -sS -m 10 --cacert "$EG/net/ca.pem" -o /dev/null https://other.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" != 0 ]
    jq -e '.usage.hosts == [] and .usage.refused_hosts == ["other.egress.test"]' <<<"$out"
    # A Host that is not the URL's host: the front refuses it, and the report counts the refusal.
    through x5 www.egress.test curl -sS -m 10 -o "$EG/relay/x5.body" -H 'Host: other.egress.test' http://www.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" = 0 ]
    grep -q '400 Bad request' "$EG/relay/x5.body"
    jq -e '.usage.hosts == [] and .usage.refused == 1 and .usage.connections == 1' <<<"$out"
    # A request cut short by its client: no refusal, though the front logs it.
    through x6 www.egress.test python3 -c 'import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"GET http://www.egress.test/index.html HTTP/1.1\r\nHo")
s.close()'
    [ "$(jq -r .status <<<"$out")" = 0 ]
    jq -e '.usage.refused == 0 and .usage.connections == 1' <<<"$out"
}

@test "through the relay: the sandbox itself has no route and no resolver" {
    # Control: the name is reached through the proxy.
    through x4 www.egress.test curl -sS -m 10 -o "$EG/relay/got" http://www.egress.test/index.html
    [ "$(jq -r .status <<<"$out")" = 0 ]
    [ "$(cat "$EG/relay/got")" = "hello from 192.0.2.10" ]
    # Straight to the host's address, and to the resolver: no route.
    run ip netns exec sbxeg-sbx curl -sS -m 5 --noproxy '*' http://192.0.2.10/index.html
    [ "$status" = 7 ]
    [[ $output == *"Network is unreachable"* || $output == *"Couldn't connect"* ]]
    run ip netns exec sbxeg-sbx python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.53", 53))'
    [ "$status" != 0 ]
    [[ $output == *"Network is unreachable"* ]]
    run ip netns exec sbxeg-sbx getent hosts www.egress.test
    [ "$status" != 0 ]
}

@test "through the relay: two executions at once, each with its own list" {
    local a b
    # Each in a namespace of its own, as sandboxes are, registered at the same time.
    # shellcheck disable=SC2016 # $1 is the inner shell's
    ip netns exec sbxeg-sbx "$BATS_TEST_DIRNAME/relay-client.py" "$EG/relay/egress.sock" "$EG/lists" a www.egress.test -- \
        sh -c 'sleep 1; curl -sS -m 10 -o /dev/null -o /dev/null -w "%{http_code} " http://other.egress.test/index.html http://www.egress.test/index.html >"$1"' \
        - "$EG/relay/a" >"$EG/relay/a.json" &
    a=$!
    # shellcheck disable=SC2016
    ip netns exec sbxeg-sbx2 "$BATS_TEST_DIRNAME/relay-client.py" "$EG/relay/egress.sock" "$EG/lists" b other.egress.test -- \
        sh -c 'sleep 1; curl -sS -m 10 -o /dev/null -o /dev/null -w "%{http_code} " http://other.egress.test/index.html http://www.egress.test/index.html >"$1"' \
        - "$EG/relay/b" >"$EG/relay/b.json" &
    b=$!
    wait "$a"
    wait "$b"
    [ "$(cat "$EG/relay/a")" = "403 200 " ]
    [ "$(cat "$EG/relay/b")" = "200 403 " ]
    # Two addresses, one an execution; each report names its own.
    [ "$(jq -r .registered.address "$EG/relay/a.json")" != "$(jq -r .registered.address "$EG/relay/b.json")" ]
    # curl asked for both on one connection; the front answered each on its own, so that each
    # request's line is its connection's last, which the report waits for.
    [ "$(jq -r .usage.connections "$EG/relay/a.json")" = 2 ]
    [ "$(jq -r .usage.connections "$EG/relay/b.json")" = 2 ]
    [ "$(jq -c '[.usage.hosts, .usage.refused_hosts]' "$EG/relay/a.json")" = '[["www.egress.test"],["other.egress.test"]]' ]
    jq -e '.usage.hosts == ["other.egress.test"] and .usage.refused_hosts == ["www.egress.test"]' "$EG/relay/b.json"
}

@test "through the relay: 10 MiB come whole, and are counted" {
    through big www.egress.test curl -sS -m 60 -o "$EG/relay/big.bin" http://www.egress.test/big.bin
    [ "$(jq -r .status <<<"$out")" = 0 ]
    cmp "$EG/relay/big.bin" "$EG/net/www-192.0.2.10/big.bin"
    jq -e '.usage.rx_bytes > 10485760 and .usage.rx_bytes < 10485760 + 4096' <<<"$out"
}

@test "through the relay: an execution's bandwidth is its limit (SANDBOXD_EGRESS_RATE_BYTES)" {
    local pid start took_free took_limited slow
    # Control: with the default limit (100 MiB/s), 10 MiB take well under what 2 MiB/s would.
    start=$(date +%s%N)
    through free www.egress.test curl -sS -m 60 -o "$EG/relay/free.bin" http://www.egress.test/big.bin
    took_free=$((($(date +%s%N) - start) / 1000000))
    [ "$(jq -r .status <<<"$out")" = 0 ]
    [ "$took_free" -lt 3000 ]
    # A relay of its own at 2 MiB/s: a second's worth at once, then 2 MiB a second, so the other 8
    # MiB take 4 s at least; the file comes whole all the same.
    ip netns exec sbxeg-proxy setsid setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env SANDBOXD_EGRESS_LISTS="$EG/lists" SANDBOXD_EGRESS_SOCKET="$EG/relay/slow.sock" SANDBOXD_EGRESS_PROXY=127.0.0.1:3128 \
        SANDBOXD_EGRESS_AUDIT=127.0.0.1:3131 SANDBOXD_EGRESS_RATE_BYTES=2097152 "$BUILD/sandboxd-egress" >"$EG/slow.out" 2>&1 </dev/null &
    pid=$!
    for _ in $(seq 100); do
        [ ! -S "$EG/relay/slow.sock" ] || break
        sleep 0.05
    done
    start=$(date +%s%N)
    slow=$(ip netns exec sbxeg-sbx "$BATS_TEST_DIRNAME/relay-client.py" "$EG/relay/slow.sock" "$EG/lists" slow www.egress.test -- \
        curl -sS -m 60 -o "$EG/relay/slow.bin" http://www.egress.test/big.bin)
    took_limited=$((($(date +%s%N) - start) / 1000000))
    kill "$pid"
    [ "$(jq -r .status <<<"$slow")" = 0 ]
    cmp "$EG/relay/slow.bin" "$EG/net/www-192.0.2.10/big.bin"
    [ "$took_limited" -ge 3600 ]
    jq -e '.usage.rx_bytes > 10485760' <<<"$slow"
}

# cpu_ticks PID: the user and system time PID has used, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

@test "through the relay: urgent data ends its connection, and the relay does not spin on it" {
    local probe before after
    # PROBE plain|urgent FILE: a request through the proxy port, urgent data first or not; what came
    # back (its first 12 bytes, or how the connection ended) a second later, in FILE.
    probe='import socket, sys, time
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
if sys.argv[1] == "urgent":
    s.send(b"x", socket.MSG_OOB)
s.sendall(b"GET http://www.egress.test/index.html HTTP/1.1\r\nHost: www.egress.test\r\nConnection: close\r\n\r\n")
time.sleep(1)
try:
    said = s.recv(12).decode() or "closed"
except (ConnectionResetError, socket.timeout) as e:
    said = type(e).__name__
open(sys.argv[2], "w").write(said + "\n")'
    # Control: the same request without urgent data is answered.
    through u1 www.egress.test python3 -c "$probe" plain "$EG/relay/u1.out"
    [ "$(jq -r .status <<<"$out")" = 0 ]
    grep -qxE 'HTTP/1\.[01] 200' "$EG/relay/u1.out"
    # Urgent data first: the relay cannot splice past its mark; it ends the connection, and spends
    # no more than a moment of CPU while the code waits a second on it.
    before=$(cpu_ticks "$(cat "$EG/relay.pid")")
    through u2 www.egress.test python3 -c "$probe" urgent "$EG/relay/u2.out"
    after=$(cpu_ticks "$(cat "$EG/relay.pid")")
    [ "$(jq -r .status <<<"$out")" = 0 ]
    [ $((after - before)) -lt 20 ] || { echo "the relay used $((after - before)) ticks" >&2; false; }
    grep -qxE 'closed|ConnectionResetError' "$EG/relay/u2.out"
}
