#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# shellcheck disable=all # a sample of bad checks, on purpose
# What tests/lint/bats-andand must flag (each line after a "# BAD" line) and let through (the rest):
# make lint runs it on this file first, so that a checker that flags nothing fails too.

@test "sample" {
    # BAD
    [ 1 = 2 ] && [ 2 = 2 ]
    for i in 1 2; do
        [ "$i" = 2 ] && break
    done
    [ -n "$x" ] || x=1
    run bash -c 'a && b
c && d'
    [[ a && b ]]
    echo "a && b"
    # A command continued over lines is judged whole, and flagged on its first line.
    # BAD
    cd / && ls / /tmp >/dev/null \
        2>&1
    # An apostrophe inside a double-quoted string opens no quote: the next line is still judged.
    [[ $x =~ "it's" ]]
    # BAD
    [ "$x" = 1 ] && [ "$i" = 2 ]
    [ "$x" = 1 ] && [ "$i" = 2 ]
}
