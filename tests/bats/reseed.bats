#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fresh randomness in every sandbox: the generators a machine's zygote holds (random's, numpy's
# global RandomState) are reseeded from the kernel in each sandbox forked from it, and
# default_rng() draws fresh entropy at each call. Each test fails if draws repeat.

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

setup_file() {
    require_stack
}

setup() {
    wait_pool_full
}

teardown() {
    if clear_settings zz-reseed; then
        wait_pool_full
    fi
    expect_no_leftovers
}

run_code() {
    execute "$(code_json "$1")"
    expect_status 200
    [ "$(field .exit_code)" = 0 ] || { echo "exit code $(field .exit_code): $(field .stderr)" >&2; return 1; }
}

# What one sandbox draws, as one JSON line: whether numpy came preloaded (the data zygote), and a
# draw of each generator.
DRAW='import sys
preloaded = "numpy" in sys.modules
import json, random
import numpy as np
print(json.dumps({"preloaded": preloaded, "random": random.getrandbits(64),
                  "numpy": np.random.randint(0, 2**62, 4).tolist(),
                  "default_rng": np.random.default_rng().integers(0, 2**62, 4).tolist()}))'

@test "control: children that inherit a generator's state without a reseed draw the same, and the test sees it" {
    # libc's fork(), called through ctypes, runs none of the interpreter's at-fork hooks: each child
    # is a copy of this process's generators, as a sandbox is of the zygote's without the reseed.
    run_code 'import ctypes, json, os, random
import numpy as np
libc = ctypes.CDLL(None)

def in_children(draw):
    out = []
    for _ in range(2):
        r, w = os.pipe()
        pid = libc.fork()
        if pid == 0:
            os.write(w, json.dumps(draw()).encode())
            os._exit(0)
        os.close(w)
        out.append(json.loads(os.read(r, 4096)))
        os.close(r)
        os.waitpid(pid, 0)
    return out

# numpy 2 seeds its global generator at its first use, numpy 1 at import: used once here, so that
# the children inherit a seeded one in both.
np.random.randint(0, 2)
print(json.dumps({
    "random": in_children(lambda: random.getrandbits(64)),
    "numpy": in_children(lambda: np.random.randint(0, 2**62, 4).tolist()),
    "seeded_rng": in_children(lambda: np.random.default_rng(12345).integers(0, 2**62, 4).tolist()),
    "default_rng": in_children(lambda: np.random.default_rng().integers(0, 2**62, 4).tolist()),
    "seed_sequence": in_children(lambda: np.random.SeedSequence().entropy),
}))'
    out=$(field .stdout)
    # Inherited state repeats: the comparison below detects repetition.
    [ "$(jq -c '.random[0]' <<<"$out")" = "$(jq -c '.random[1]' <<<"$out")" ]
    [ "$(jq -c '.numpy[0]' <<<"$out")" = "$(jq -c '.numpy[1]' <<<"$out")" ]
    [ "$(jq -c '.seeded_rng[0]' <<<"$out")" = "$(jq -c '.seeded_rng[1]' <<<"$out")" ]
    # default_rng() inherits nothing: SeedSequence() takes 128 fresh bits from the OS at each call.
    [ "$(jq -c '.seed_sequence[0]' <<<"$out")" != "$(jq -c '.seed_sequence[1]' <<<"$out")" ]
    [ "$(jq -c '.default_rng[0]' <<<"$out")" != "$(jq -c '.default_rng[1]' <<<"$out")" ]
}

@test "12 consecutive executions that import numpy, most from the data zygote, all draw differently" {
    # Machines that serve many executions, whatever the suite runs with: the draws must not repeat
    # between executions forked from one zygote.
    if [ "$(executions_per_machine)" -lt 64 ]; then
        with_settings zz-reseed SANDBOXD_EXECUTIONS_PER_MACHINE=64
        wait_pool_full
    fi
    draws=$(mktemp)
    # The data zygote starts once a machine has run code that imports numpy: warm the pool's
    # machines up until executions come from it.
    warm=0
    for _ in $(seq 40); do
        run_code "$DRAW"
        field .stdout >>"$draws"
        if [ "$(field .stdout | jq -r .preloaded)" = true ]; then
            warm=$((warm + 1))
            [ "$warm" -lt 3 ] || break
        fi
    done
    [ "$warm" -ge 1 ]
    : >"$draws"
    for _ in $(seq 12); do
        run_code "$DRAW"
        field .stdout >>"$draws"
    done
    preloaded=$(jq -s '[.[] | select(.preloaded)] | length' "$draws")
    echo "# executions from the data zygote: $preloaded of 12" >&3
    [ "$preloaded" -ge 6 ]
    [ "$(jq -s '[.[].random] | unique | length' "$draws")" = 12 ]
    [ "$(jq -s '[.[].numpy] | unique | length' "$draws")" = 12 ]
    [ "$(jq -s '[.[].default_rng] | unique | length' "$draws")" = 12 ]
    rm -f "$draws"
}

@test "tempfile names and uuid1 clock sequences differ between sandboxes" {
    names=$(mktemp)
    for _ in $(seq 6); do
        run_code 'import tempfile, uuid
print(next(tempfile._get_candidate_names()), uuid.uuid1().clock_seq)'
        field .stdout >>"$names"
    done
    [ "$(awk 'NF {print $1}' "$names" | sort -u | wc -l)" = 6 ]
    [ "$(awk 'NF {print $2}' "$names" | sort -u | wc -l)" -ge 5 ]
    rm -f "$names"
}

@test "a session's interpreter started anew draws differently from the one before" {
    api POST /v1/sessions
    expect_status 201
    sid=$(field .session_id)
    draws=$(mktemp)
    # Its python interpreter, ended and started anew three times: each one is forked from the
    # session's init, in C, past the interpreter's at-fork hook (the control above shows what
    # that inherits without a reseed).
    for _ in 1 2 3; do
        api POST "/v1/sessions/$sid/run" "$(jq -cn --arg code "$DRAW" '{language: "python", code: $code}')"
        expect_status 200
        [ "$(field .result.exit_code)" = 0 ] || { echo "$body" >&2; false; }
        field .result.stdout >>"$draws"
        api POST "/v1/sessions/$sid/run" '{"language": "python", "code": "import os; os._exit(0)"}'
        expect_status 200
    done
    api DELETE "/v1/sessions/$sid"
    cat "$draws"
    [ "$(jq -s 'length' "$draws")" = 3 ]
    [ "$(jq -s '[.[].random] | unique | length' "$draws")" = 3 ]
    [ "$(jq -s '[.[].numpy] | unique | length' "$draws")" = 3 ]
    rm -f "$draws"
}
