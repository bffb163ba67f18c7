# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Before any suite of this directory: what an earlier run cut short (a bats killed, a machine reset)
# left changed in the host's settings is put back, and the stack, if it runs, restarted with them.
# Without it, one run killed while keys were on made every later run find them on.

setup_suite() {
    # shellcheck source=tests/bats/helpers.bash
    source "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    if leftovers_restore >&3; then
        if curl -s -o /dev/null "$SANDBOXD_URL/"; then
            in_systemd systemctl daemon-reload
            in_systemd systemctl restart sandboxd.target
            wait_up
        fi
    fi
}
