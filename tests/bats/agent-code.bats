#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Agent code, checked for real: the snippets of tests/agent-code (pandas, numpy, scipy, matplotlib,
# pillow, sympy, openpyxl, node, bash), each with its known answer, through POST /v1/execute on the
# runtime image in use; those that need Debian 13's libraries are skipped on a Debian 12 image, and
# say so (tests/agent-code/check).

# shellcheck source=tests/bats/helpers.bash
source "$BATS_TEST_DIRNAME/helpers.bash"

CHECK="$BATS_TEST_DIRNAME/../agent-code/check"

# What depends on the runtime image only: in the VM that keeps an image of its own (tests/vm/guest).
# bats test_tags=vm-image
@test "agent code: every snippet gives its known answer on the runtime image" {
    # At least 30 snippets, each with its answer.
    n=$(find "$BATS_TEST_DIRNAME/../agent-code" -name '[0-9]*.py' -o -name '[0-9]*.js' -o -name '[0-9]*.sh' | wc -l)
    [ "$n" -ge 30 ]
    run "$CHECK"
    echo "$output"
    [ "$status" -eq 0 ]
    # Every snippet was run or said why not.
    [ "$(grep -c '^ok \|^skip ' <<<"$output")" -eq "$n" ]
}

@test "agent code: a wrong answer fails the check (the check can fail)" {
    # Positive control of the checker itself: the same snippet against an answer it does not give.
    dir="$BATS_TEST_TMPDIR/ac"
    mkdir -p "$dir"
    cp "$BATS_TEST_DIRNAME/../agent-code/check" "$BATS_TEST_DIRNAME/../agent-code/08-numpy-linalg.py" "$dir/"
    run "$dir/check" 08-numpy-linalg
    [ "$status" -ne 0 ] # no answer file: it cannot pass
    cp "$BATS_TEST_DIRNAME/../agent-code/08-numpy-linalg.out" "$dir/"
    run "$dir/check" 08-numpy-linalg
    [ "$status" -eq 0 ]
    sed -i '1s/2.0/2.5/' "$dir/08-numpy-linalg.out"
    run "$dir/check" 08-numpy-linalg
    [ "$status" -eq 1 ]
    [[ $output == *"FAIL 08-numpy-linalg (python): stdout"* ]]
}

@test "agent code: snippets that need Debian 13 say so, and run only there" {
    needing=$(grep -l '^# needs: debian 13' "$BATS_TEST_DIRNAME"/../agent-code/*.py | wc -l)
    [ "$needing" -ge 4 ]
    api GET /v1/runtimes
    expect_status 200
    debian=$(jq -r '.runtimes[0].os' <<<"$body" | sed 's/^Debian \([0-9]*\).*/\1/')
    run "$CHECK" 05-pandas-dataframe-map 11-numpy2-trapezoid-aliases
    echo "$output"
    if [ "$debian" -ge 13 ]; then
        [ "$status" -eq 0 ]
        [ "$(grep -c '^ok ' <<<"$output")" -eq 2 ]
    else
        [ "$(grep -c '^skip .*needs Debian 13' <<<"$output")" -eq 2 ]
    fi
}
