#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# /mcp through MCP clients nobody here wrote, as agents reach it: the official TypeScript SDK's
# Client (tests/mcp/client.js drives it through every tool), in both its generations (the second
# also in the stateless revision, 2026-07-28), and the protocol's conformance suite
# (tests/mcp/conformance), both from npm at pinned versions, installed by make mcp-clients. A
# missing install is a failure (make test installs them); a node too old for the conformance suite
# (Debian 12's) is a skip that says so.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"
# shellcheck source=tests/bats/key-helpers.bash
source "$BATS_TEST_DIRNAME/key-helpers.bash"

NPM_MCP="$BATS_TEST_DIRNAME/../../build/npm-mcp"
CLIENT="$BATS_TEST_DIRNAME/../mcp/client.js"
CONFORMANCE="$BATS_TEST_DIRNAME/../mcp/conformance"

setup_file() {
    require_stack
    export KEYS_MADE="$BATS_FILE_TMPDIR/keys"
    : >"$KEYS_MADE"
    KEY_PREFIX="bats-mcp-$(date +%s)-$$"
    export KEY_PREFIX
}

teardown() {
    expect_no_leftovers
}

teardown_file() {
    keys_off
}

require_mcp_clients() {
    if [ ! -f "$NPM_MCP/.installed" ]; then
        echo "the MCP clients are not installed under $NPM_MCP: run make mcp-clients" >&2
        return 1
    fi
}

# client [NODE OPTIONS...]: tests/mcp/client.js with the SDK on NODE_PATH, its TAP in $output.
client() {
    NODE_PATH="$NPM_MCP/node_modules" run node --test-reporter=tap "$@" "$CLIENT"
    echo "$output"
}

# client_whole [VAR=VALUE...]: every test of client.js, with those variables set, and what each such
# run must show: no failure, and both cancellations of execute ending their run's process.
client_whole() {
    local marker="mcp-cancel-$$-$RANDOM" v
    for v in "$@"; do
        local -x "$v"
    done
    MCP_CANCEL_MARKER=$marker client
    [ "$status" -eq 0 ]
    grep -qx '# fail 0' <<<"$output"
    grep -qx 'ok 15 - cancellation of execute answered on a stream: the call ends at once, the next call works, the run is killed' <<<"$output"
    grep -qx 'ok 16 - cancellation of execute answered as JSON (no progress token): the same' <<<"$output"
    expect_marker_gone "$marker"
}

@test "the official MCP SDK's client: every tool, the image's bytes, errors, progress, and a cancellation that kills the run" {
    require_mcp_clients
    client_whole
}

@test "the SDK's second generation in the stateless revision (2026-07-28): every tool, no session, a cancellation by closing the stream" {
    require_mcp_clients
    client_whole MCP_SDK=2 MCP_NEGOTIATION=pin
    grep -qx 'ok 2 - server/discover: the stateless revision, no session, the tools capability' <<<"$output"
    grep -qx 'ok 1 - initialize: a supported protocol version, a session id, the tools capability # SKIP the stateless revision' <<<"$output"
}

@test "the SDK's second generation finds the stateless revision by itself (auto), and keeps to a session by default (legacy)" {
    require_mcp_clients
    MCP_SDK=2 MCP_NEGOTIATION=auto client --test-name-pattern='^(server/discover|tools/list|execute: python)'
    [ "$status" -eq 0 ]
    grep -qx '# pass 3' <<<"$output"
    grep -qx 'ok 2 - server/discover: the stateless revision, no session, the tools capability' <<<"$output"
    MCP_SDK=2 client --test-name-pattern='^(initialize|tools/list|execute: python|DELETE)'
    [ "$status" -eq 0 ]
    grep -qx '# pass 4' <<<"$output"
    grep -qx 'ok 1 - initialize: a supported protocol version, a session id, the tools capability' <<<"$output"
}

@test "the MCP conformance suite: every scenario that applies to a server with sandboxd's tools passes" {
    require_mcp_clients
    run "$CONFORMANCE"
    echo "$output"
    [ "$status" -ne 77 ] || skip "$(head -n 1 <<<"$output")"
    [ "$status" -eq 0 ]
    grep -qx '5 passed, 0 failed' <<<"$output"
}

@test "keys on: both clients with the key as a Bearer token; without it the connection is refused" {
    require_mcp_clients
    keys_on
    new_key mcp
    SANDBOXD_API_KEY=$token client --test-name-pattern='^(initialize|without the key|tools/list|execute: python)'
    [ "$status" -eq 0 ]
    grep -qx '# fail 0' <<<"$output"
    grep -qx '# pass 4' <<<"$output"
    grep -qx 'ok 3 - without the key, when keys are on, the connection is refused' <<<"$output"
    SANDBOXD_API_KEY=$token MCP_SDK=2 MCP_NEGOTIATION=pin client --test-name-pattern='^(server/discover|without the key|tools/list|execute: python)'
    [ "$status" -eq 0 ]
    grep -qx '# pass 4' <<<"$output"
    grep -qx 'ok 3 - without the key, when keys are on, the connection is refused' <<<"$output"
    SANDBOXD_API_KEY=$token run "$CONFORMANCE"
    echo "$output"
    [ "$status" -ne 77 ] || skip "$(head -n 1 <<<"$output")"
    [ "$status" -eq 0 ]
    grep -qx '4 passed, 0 failed' <<<"$output"
}
