#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The runner's own checks, with the installed runner talked to directly: the worker refuses the
# same paths before a sandbox is involved, so through the API these are never reached.

RUNNER=${SANDBOXD_RUNNER:-/usr/local/lib/sandboxd/sandboxd-runner}

# runner JSON: the runner's reply to one request, in $output ($status: the client's).
runner() {
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/runner-client.py" "$RUNNER" "$1"
}

@test "the runner on its own: a request it takes is run, its files written and returned" {
    runner '{"code":"print(open(\"d/in.txt\").read())","files":[{"path":"d/in.txt","content_b64":"aGk="}],"return_files":["d/in.txt","missing"]}'
    [ "$status" -eq 0 ]
    [ "$(jq -c '[.status, .exit_code, .stdout_b64, .files]' <<<"$output")" = '[200,0,"aGkK",[{"path":"d/in.txt","content_b64":"aGk="}]]' ]
}

@test "the runner refuses paths that climb out of the working directory, in files and in return_files" {
    for p in ../x /etc/passwd a/../../x ./../x '' . a/.. 'a/b/../../..'; do
        req=$(jq -cn --arg p "$p" '{code: "print(1)", files: [{path: $p, content_b64: "eA=="}]}')
        runner "$req"
        [ "$status" -eq 0 ]
        [ "$output" = "$(jq -cn --arg e "file path escapes working directory: '$p'" '{status: 400, error: $e}')" ] ||
            { echo "files: $p: $output" >&2; false; }
        req=$(jq -cn --arg p "$p" '{code: "print(1)", return_files: [$p]}')
        runner "$req"
        [ "$status" -eq 0 ]
        [ "$output" = "$(jq -cn --arg e "file path escapes working directory: '$p'" '{status: 400, error: $e}')" ] ||
            { echo "return_files: $p: $output" >&2; false; }
    done
}

@test "the runner's return cap: files up to it come back, one byte more is refused" {
    runner '{"code":"open(\"a\",\"wb\").write(b\"x\" * 6); open(\"b\",\"wb\").write(b\"y\" * 4)","return_files":["a","b"],"return_cap":10}'
    [ "$status" -eq 0 ]
    [ "$(jq -c '[.status, (.files | map(.path))]' <<<"$output")" = '[200,["a","b"]]' ]
    runner '{"code":"open(\"a\",\"wb\").write(b\"x\" * 6); open(\"b\",\"wb\").write(b\"y\" * 5)","return_files":["a","b"],"return_cap":10}'
    [ "$status" -eq 0 ]
    [ "$output" = '{"status":400,"error":"return_files are larger than 10 bytes"}' ]
}
