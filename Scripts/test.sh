#!/usr/bin/env bash
# Installs what is missing, builds once, then runs the suite in two steps: the unit tests, then
# the end-to-end tests (GroveEndToEndTests, which spawn the real executables). Separate steps,
# so the two never compete for the cores. Each step's result, test count, known issues and time
# are reported at the end; the exit status is non-zero when either step failed.
# Usage: Scripts/test.sh                         both steps
#        Scripts/test.sh [swift test arguments]  one step with them, e.g. --filter HostOrderingTests
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
ensure_pyzmq
ensure_browser
ensure_test_postgres
say "building (debug) with tests"
swift build --build-tests

logs=$(mktemp -d)
trap 'rm -rf "$logs" "${GROVE_TEST_POSTGRES_DIRECTORY:-}"' EXIT
results=()
failed=0
passed_tests=0
failed_tests=0

# Runs `swift test --skip-build <arguments>` as the step `name`, keeping its output to report from.
run_step() {
    local name=$1
    shift
    step "$name"
    # The step's name made a file name: a long --filter made one past the 255-byte limit, tee
    # could not open it, and tests that all passed were reported FAILED.
    local safe=${name//[^A-Za-z0-9._-]/-}
    local log="$logs/$((${#results[@]} + 1))-${safe:0:80}.log" start=$SECONDS status=0
    swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?
    local elapsed=$((SECONDS - start))
    # Swift Testing's last line, e.g. "Test run with 540 tests in 70 suites passed after 80.1 seconds."
    local summary
    summary=$(grep -E '^.{0,4}Test run with [0-9]+ tests?' "$log" | tail -1 | sed -E 's/^[^T]*//') || true
    local total failures
    total=$(printf '%s' "$summary" | sed -nE 's/^Test run with ([0-9]+) tests?.*/\1/p')
    failures=$(grep -E '^.{0,4}Test .* failed after' "$log" | grep -vc 'Test run with' || true)
    passed_tests=$((passed_tests + ${total:-0} - failures))
    failed_tests=$((failed_tests + failures))
    if [ "$status" -eq 0 ] && [ "${total:-0}" -eq 0 ]; then
        # A filter that matches nothing, or a target that lost its tests, passes in swift test.
        results+=("$name: FAILED in ${elapsed} s: it ran no test (${summary:-no Swift Testing summary}); check the filter")
        failed=1
    elif [ "$status" -eq 0 ]; then
        results+=("$name: passed in ${elapsed} s; ${summary:-no Swift Testing summary}")
    else
        results+=("$name: FAILED (exit $status) in ${elapsed} s; ${summary:-no Swift Testing summary}")
        failed=1
    fi
}

if [ $# -gt 0 ]; then
    run_step "tests ($*)" "$@"
else
    run_step "unit tests" --skip GroveEndToEndTests
    run_step "end-to-end tests" --filter GroveEndToEndTests
fi

step "results"
for result in "${results[@]}"; do printf '    %s\n' "$result"; done
# One closing line for both steps, in the form CI reads.
printf 'tests: %d passed, %d failed\n' "$passed_tests" "$failed_tests"
exit "$failed"
