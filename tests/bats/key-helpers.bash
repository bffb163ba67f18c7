# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# API keys for the suites that turn them on (keys.bats, quotas.bats): keys made with sandboxctl, as
# an administrator would, and requests that send them. Needs helpers.bash, and KEYS_MADE (a file the
# suite's teardown_file revokes every name in) and KEY_PREFIX (this run's) set by setup_file.

SANDBOXCTL=${SANDBOXCTL:-/usr/local/sbin/sandboxctl}


# The services with keys on (once: later tests find them so).
keys_on() {
    if [ ! -f /etc/systemd/system/sandbox-api.service.d/keys.conf ]; then
        with_settings keys SANDBOXD_API_KEYS=on
        wait_up
    fi
}

# For teardown_file: keys off again (other suites run with them off, the default), and every key
# the suite made revoked.
keys_off() {
    local name
    if clear_settings keys; then
        wait_up
    fi
    while read -r name; do
        "$SANDBOXCTL" key revoke "$name" >/dev/null 2>&1 || true
    done <"$KEYS_MADE"
}

# new_key NAME [QUOTA OPTIONS]: makes the key KEY_PREFIX-NAME; its token in $token, its name in $kname.
new_key() {
    local suffix=$1
    shift
    kname="$KEY_PREFIX-$suffix"
    token=$("$SANDBOXCTL" key add "$kname" "$@" 2>"$BATS_TEST_TMPDIR/key-add.err")
    echo "$kname" >>"$KEYS_MADE"
    [[ $token =~ ^sbx_[0-9a-f]{64}$ ]] || { echo "no token: '$token' $(cat "$BATS_TEST_TMPDIR/key-add.err")" >&2; return 1; }
}

# kapi TOKEN METHOD PATH [BODY]: like api, with "Authorization: Bearer TOKEN" (none when TOKEN is
# empty); the headers stay in $BATS_TEST_TMPDIR/hdr.
kapi() {
    local token=$1 method=$2 path=$3 hdr="$BATS_TEST_TMPDIR/hdr"
    local -a auth=()
    [ -z "$token" ] || auth=(-H "Authorization: Bearer $token")
    if [ $# -ge 4 ]; then
        body=$(curl -s -D "$hdr" -X "$method" "${auth[@]}" "$SANDBOXD_URL$path" -H 'content-type: application/json' --data-binary "$4")
    else
        body=$(curl -s -D "$hdr" -X "$method" "${auth[@]}" "$SANDBOXD_URL$path")
    fi
    read_headers "$hdr"
    openapi_check "$method" "$path" "$hdr"
}

# kapi_header AUTHORIZATION_VALUE METHOD PATH: a request with that Authorization header, as it is.
# shellcheck disable=SC2034 # $body is the caller's
kapi_header() {
    local hdr="$BATS_TEST_TMPDIR/hdr"
    body=$(curl -s -D "$hdr" -X "$2" -H "Authorization: $1" "$SANDBOXD_URL$3")
    read_headers "$hdr"
    openapi_check "$2" "$3" "$hdr"
}

# A header of the last response.
header() {
    awk -v h="$(tr '[:upper:]' '[:lower:]' <<<"$1"):" 'tolower($1) == h { sub("\r", ""); $1 = ""; sub(" ", ""); print }' "$BATS_TEST_TMPDIR/hdr"
}

# finished RID: waits until the request's row is closed (the worker closes it once the client has
# its answer) and prints its status.
finished() {
    local status
    for _ in $(seq 100); do
        status=$(db "SELECT status FROM requests WHERE request_id = '$1' AND status IS NOT NULL")
        [ -n "$status" ] && { echo "$status"; return 0; }
        sleep 0.05
    done
    echo "the row of $1 was never closed" >&2
    return 1
}
