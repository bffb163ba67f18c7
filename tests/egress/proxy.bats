#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The egress proxy's policy, on its own: Debian's Squid with sandboxd's squid.conf and helper
# (nspawn/egress/), in a network namespace whose only routes lead to the test "internet" that
# tests/egress/net makes. The client here stands for the egress relay: it connects from 127.0.0.1,
# whose list is the file lists/127.0.0.1, as the relay's address for an execution would be.
# Every check that something is refused comes after its positive control.

BUILD=${BUILD:-build}

setup_file() {
    # Squid's user (proxy) must reach its files: not below the suite's private temporary directory.
    EG=$(mktemp -d /var/tmp/sandboxd-egress-test.XXXXXX)
    export EG
    chmod 0755 "$EG"
    mkdir -p "$EG/net" "$EG/run/lists"
    "$BATS_TEST_DIRNAME/net" up "$EG/net"
    # Squid's own files, and the helper, for its user (proxy).
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$EG/bump.key" -out "$EG/bump.crt" -days 2 -subj /CN=sandboxd-egress 2>/dev/null
    cat "$EG/bump.crt" "$EG/bump.key" >"$EG/run/bump.pem"
    install -m 0755 "$BUILD/sandboxd-egress-acl" "$EG/run/sandboxd-egress-acl"
    sed -e "s|@LISTEN@|127.0.0.1:3128|; s|@LIBDIR@|$EG/run|; s|@RUNDIR@|$EG/run|g; s|@CERT@|$EG/run/bump.pem|" \
        "$BATS_TEST_DIRNAME/../../nspawn/egress/squid.conf.in" >"$EG/run/squid.conf"
    # The test's resolver, and logs where the test reads them.
    printf '%s\n' 'dns_nameservers 192.0.2.53' "access_log stdio:$EG/run/access.log" "cache_log $EG/run/cache.log" \
        'cache_effective_user proxy' >>"$EG/run/squid.conf"
    : >"$EG/run/access.log"
    : >"$EG/run/cache.log"
    chmod -R a+rX "$EG"
    chown proxy "$EG/run" "$EG/run/access.log" "$EG/run/cache.log"
    ip netns exec sbxeg-proxy setsid /usr/sbin/squid -N -f "$EG/run/squid.conf" >"$EG/squid.out" 2>&1 </dev/null &
    for _ in $(seq 200); do
        ip netns exec sbxeg-proxy ss -Hltn 'sport = :3128' | grep -q . && return 0
        sleep 0.05
    done
    cat "$EG/squid.out" "$EG/run/cache.log" >&2
    return 1
}

teardown_file() {
    [ ! -f "$EG/run/squid.pid" ] || kill "$(cat "$EG/run/squid.pid")" 2>/dev/null || true
    "$BATS_TEST_DIRNAME/net" down "$EG/net"
    rm -rf "$EG"
}

# allow ENTRY...: the client's list, as the relay writes it for an execution.
allow() {
    printf '%s\n' "$@" >"$EG/run/lists/127.0.0.1"
}

# get URL [CURL OPTIONS]: through the proxy; the status in $status_code, the body in $out.
get() {
    local url=$1
    shift
    out=$(ip netns exec sbxeg-proxy curl -sS -m 10 -x http://127.0.0.1:3128 --cacert "$EG/net/ca.pem" \
        -w '\n%{http_code}' "$@" "$url" 2>"$BATS_TEST_TMPDIR/curl.err") || true
    status_code=${out##*$'\n'}
    out=${out%$'\n'*}
    out=${out%$'\n'}
}

# requests_to ADDR: how many requests the test host at ADDR has served.
requests_to() {
    grep -c '"GET ' "$EG/net/http-$1.log" || true
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

@test "a client with no list of its own gets nothing" {
    allow www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    rm "$EG/run/lists/127.0.0.1"
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
    local private metadata
    private=$(requests_to 10.20.30.40)
    metadata=$(requests_to 169.254.169.254)
    allow private.egress.test metadata.egress.test
    get http://private.egress.test/
    [ "$status_code" = 403 ]
    get http://metadata.egress.test/
    [ "$status_code" = 403 ]
    # By address: no name, no list covers it.
    get http://169.254.169.254/
    [ "$status_code" = 403 ]
    [ "$(requests_to 10.20.30.40)" = "$private" ]
    [ "$(requests_to 169.254.169.254)" = "$metadata" ]
}

@test "a tunnel whose TLS SNI names another host is cut; a plain request reaches only its URL's host" {
    allow www.egress.test
    # Control: the SNI that names the CONNECT's host, verified by the test CA.
    run ip netns exec sbxeg-proxy openssl s_client -proxy 127.0.0.1:3128 -connect www.egress.test:443 \
        -servername www.egress.test -CAfile "$EG/net/ca.pem" -verify_return_error </dev/null
    [ "$status" = 0 ]
    [[ $output == *"BEGIN CERTIFICATE"* ]]
    [[ $output == *"Verify return code: 0 (ok)"* ]]
    # other.egress.test is a name the server's certificate holds too: only the SNI check stops it.
    run ip netns exec sbxeg-proxy openssl s_client -proxy 127.0.0.1:3128 -connect www.egress.test:443 \
        -servername other.egress.test -CAfile "$EG/net/ca.pem" -verify_return_error </dev/null
    [ "$status" != 0 ]
    [[ $output != *"BEGIN CERTIFICATE"* ]]
    # A Host header that names another host: Squid, a forward proxy, forwards the URL's host
    # (RFC 9112, 3.2.2), so the server sees only the allowed name.
    get http://www.egress.test/index.html -H 'Host: other.egress.test'
    [ "$status_code" = 200 ]
}

@test "the proxy's management interface and other protocols are refused" {
    allow www.egress.test
    get http://www.egress.test/index.html
    [ "$status_code" = 200 ]
    get http://www.egress.test/squid-internal-mgr/info
    [ "$status_code" = 403 ]
    get http://www.egress.test/squid-internal-mgr/menu
    [ "$status_code" = 403 ]
    get ftp://www.egress.test/
    [ "$status_code" = 403 ]
}
