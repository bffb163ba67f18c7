# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Before any suite of this directory: what an earlier run cut short (a bats killed, a machine reset)
# left changed in the host's settings is put back, and the stack, if its systemd runs, restarted
# with them. Without it, one run killed while keys were on made every later run find them on. Two
# runs at once would undo each other's settings: the second is refused.

setup_suite() {
    # shellcheck source=tests/bats/helpers.bash
    source "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    # Held as long as this bats runs: its tests inherit the descriptor.
    exec {SUITE_LOCK_FD}>/run/lock/sandboxd-tests.lock
    if ! flock -n "$SUITE_LOCK_FD"; then
        echo "another run of these suites holds /run/lock/sandboxd-tests.lock: two at once undo each other's settings" >&2
        return 1
    fi
    if leftovers_restore >&3 && "$SANDBOXD_HOST" exec true 2>/dev/null; then
        in_systemd systemctl daemon-reload
        in_systemd systemctl restart sandboxd.target
        wait_up
    fi
}
