#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Egress by name (README, "Network"): a request's "network" is checked against the host's
# /etc/sandboxd/egress.allow before anything is claimed; a name outside it is a 400 naming it.
# The keys' own lists are keys.bats's.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    egress_allow_save
}

teardown() {
    egress_allow_restore
}

# no_sandbox RID STATUS: the request's row, closed with STATUS, names no sandbox and no machine.
no_sandbox() {
    local row
    for _ in $(seq 100); do
        row=$(db "SELECT status || ' ' || coalesce(sandbox_id, '-') || ' ' || coalesce(machine_id, '-') FROM requests
                  WHERE request_id = '$1' AND status IS NOT NULL")
        [ -z "$row" ] || break
        sleep 0.05
    done
    [ "$row" = "$2 - -" ] || { echo "row of $1: '$row'" >&2; return 1; }
}

@test "network: a name the host's egress.allow does not list is a 400 naming it, and nothing runs" {
    rm -f "$EGRESS_ALLOW"
    # No list at all: egress is off, every name is refused.
    execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "pypi.org" is not allowed on this host'
    no_sandbox "$rid" 400
    # Listed (an edit holds from the next request): the name gets past the list. The egress units
    # start with sandboxd.target once the list exists, not before: with no relay running yet, the
    # code is not run without what it asked for.
    printf '# test list\npypi.org   # the index\n*.pythonhosted.org\nexample.org:8443\n' >"$EGRESS_ALLOW"
    execute "$(code_json 'print(1)' '{network: {allow: ["PyPI.org", "files.pythonhosted.org:443", "example.org:8443"]}}')"
    expect_error 503 "egress is unavailable: the host's egress relay is not running"
    no_sandbox "$rid" 503
    # Each entry is checked on its own: a port, a name above a wildcard, a wildcard wider than one.
    execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org", "pypi.org:8080"]}}')"
    expect_error 400 'network.allow[1]: egress to "pypi.org:8080" is not allowed on this host'
    execute "$(code_json 'print(1)' '{network: {allow: ["pythonhosted.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "pythonhosted.org" is not allowed on this host'
    execute "$(code_json 'print(1)' '{network: {allow: ["example.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "example.org" is not allowed on this host'
    execute "$(code_json 'print(1)' '{network: {allow: ["*.example.org:8443"]}}')"
    expect_error 400 'network.allow[0]: egress to "*.example.org:8443" is not allowed on this host'
    # Without "network", nothing changes: the code runs, with no interface but its loopback.
    execute "$(code_json 'import socket
print(sorted(i[1] for i in socket.if_nameindex()))')"
    expect_status 200
    [ "$(field .stdout)" = "['lo']" ]
}

@test "network: a malformed field is a 400 saying what it must be" {
    rm -f "$EGRESS_ALLOW"
    local shape='network must be an object whose "allow" is an array of 1 to 32 host names'
    execute "$(code_json 'print(1)' '{network: {allow: []}}')"
    expect_error 400 "$shape"
    execute "$(code_json 'print(1)' '{network: ["pypi.org"]}')"
    expect_error 400 "$shape"
    execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"], deny: ["x.org"]}}')"
    expect_error 400 "$shape"
    execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org", "169.254.169.254"]}}')"
    expect_error 400 "network.allow[1] must be a host name or *.suffix, with an optional :port"
    no_sandbox "$rid" 400
    execute "$(code_json 'print(1)' '{network: {allow: ["http://pypi.org/"]}}')"
    expect_error 400 "network.allow[0] must be a host name or *.suffix, with an optional :port"
    # Control: a well-formed one gets as far as the host's list.
    execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "pypi.org" is not allowed on this host'
}

@test "network: /execute and a session's create are checked alike, and make nothing when refused" {
    rm -f "$EGRESS_ALLOW"
    local before
    before=$(db "SELECT count(*) FROM sessions")
    api POST /v1/sessions '{"network": {"allow": ["registry.npmjs.org"]}}'
    expect_error 400 'network.allow[0]: egress to "registry.npmjs.org" is not allowed on this host'
    no_sandbox "$rid" 400
    api POST /v1/sessions '{"network": {"allow": "registry.npmjs.org"}}'
    expect_error 400 'network must be an object whose "allow" is an array of 1 to 32 host names'
    [ "$(db "SELECT count(*) FROM sessions")" = "$before" ]
    api POST /execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_error 400 'network.allow[0]: egress to "pypi.org" is not allowed on this host'
    # Control: listed, both get past the list.
    printf 'registry.npmjs.org\npypi.org\n' >"$EGRESS_ALLOW"
    api POST /v1/sessions '{"network": {"allow": ["registry.npmjs.org"]}}'
    expect_error 503 "egress is unavailable: the host's egress relay is not running"
    api POST /execute "$(code_json 'print(1)' '{network: {allow: ["pypi.org"]}}')"
    expect_error 503 "egress is unavailable: the host's egress relay is not running"
    [ "$(db "SELECT count(*) FROM sessions")" = "$before" ]
}
