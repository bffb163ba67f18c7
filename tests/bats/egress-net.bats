#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Egress by name, whole (README, "Network: egress by name"): an execution that asks for network
# reaches its names through the runner's socket in its sandbox, the relay and Squid, and nothing
# else. The "internet" is tests/egress/net's: hosts in network namespaces of the test's own, and
# the relay and Squid run in the one whose only routes lead there (tests/egress/stack), so that
# every address a test names, the refused ones too, is one of those hosts'.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
    EGNET=$(mktemp -d /var/tmp/sandboxd-egress-e2e.XXXXXX)
    export EGNET
    SANDBOXD_HOST=$SANDBOXD_HOST "$BATS_TEST_DIRNAME/../egress/stack" up "$EGNET"
}

teardown_file() {
    SANDBOXD_HOST=$SANDBOXD_HOST "$BATS_TEST_DIRNAME/../egress/stack" down "$EGNET"
    rm -rf "$EGNET"
}

# fetch NAMES PYTHON: an execution allowed NAMES (a JSON array) running PYTHON.
fetch() {
    execute "$(code_json "$2" "{network: {allow: $1}}")"
}

# requests_to ADDR: how many requests the test host at ADDR has served.
requests_to() {
    grep -c '"GET ' "$EGNET/net/http-$1.log" || true
}

@test "an execution reaches the names it asked for through the proxy, nothing else; usage counts the bytes" {
    fetch '["www.egress.test"]' 'import os, urllib.request, urllib.error
print(urllib.request.urlopen("http://www.egress.test/index.html", timeout=10).read().decode().strip())
try:
    urllib.request.urlopen("http://other.egress.test/index.html", timeout=10)
except urllib.error.HTTPError as e:
    print("other", e.code)
print(os.environ["HTTPS_PROXY"], os.environ["no_proxy"])'
    expect_status 200
    [ "$(field .stdout)" = "hello from 192.0.2.10
other 403
http://127.0.0.1:3128 localhost,127.0.0.1,::1" ]
    [ "$(field .exit_code)" = 0 ]
    jq -e '.usage.network_rx_bytes > 300 and .usage.network_tx_bytes > 100' <<<"$body"
    # Without "network", nothing of it: no proxy in the environment, and no usage fields.
    execute "$(code_json 'import os; print(os.environ.get("HTTP_PROXY"))')"
    expect_status 200
    [ "$(field .stdout)" = None ]
    jq -e '.usage | has("network_rx_bytes") | not' <<<"$body"
}

@test "the sandbox has no route of its own and no resolver, only the proxy" {
    fetch '["www.egress.test"]' 'import socket, urllib.request
print(len(urllib.request.urlopen("http://www.egress.test/index.html", timeout=10).read()))
for what in (lambda: socket.create_connection(("192.0.2.10", 80), timeout=3),
             lambda: socket.getaddrinfo("www.egress.test", 80),
             lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.53", 53))):
    try:
        what()
        print("reached")
    except OSError as e:
        print(type(e).__name__)'
    expect_status 200
    [ "$(field .stdout)" = "22
OSError
gaierror
OSError" ]
}

@test "an allowed name that resolves to a private or the metadata address is refused, and the host never asked" {
    local private metadata
    private=$(requests_to 10.20.30.40)
    metadata=$(requests_to 169.254.169.254)
    # Control: a name of the same list that resolves outside is reached.
    fetch '["private.egress.test", "metadata.egress.test", "www.egress.test"]' 'import urllib.request, urllib.error
for name in ("www", "private", "metadata"):
    try:
        print(name, urllib.request.urlopen("http://%s.egress.test/" % name, timeout=10).status)
    except urllib.error.HTTPError as e:
        print(name, e.code)'
    expect_status 200
    [ "$(field .stdout)" = "www 200
private 403
metadata 403" ]
    [ "$(requests_to 10.20.30.40)" = "$private" ]
    [ "$(requests_to 169.254.169.254)" = "$metadata" ]
}

@test "node and bash get the proxy in their environment too" {
    execute "$(jq -cn '{language: "bash", code: "echo $HTTP_PROXY $https_proxy $npm_config_https_proxy", network: {allow: ["www.egress.test"]}}')"
    expect_status 200
    [ "$(field .stdout)" = "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128" ]
    execute "$(jq -cn '{language: "node", code: "console.log(process.env.HTTPS_PROXY)", network: {allow: ["www.egress.test"]}}')"
    expect_status 200
    [ "$(field .stdout)" = "http://127.0.0.1:3128" ]
}
