#!/usr/bin/env bash
# run_tests.sh [--host-only] TEST_BINARIES...: what `make test` runs.
#   1. the host tests (cmocka binaries given as arguments, and the bank-conflict test),
#   2. the build test: every rung built for every architecture with zero warnings and no
#      register spills, and the test of the Makefile's flags, architectures and stamps; each
#      rung's object exporting step_NN alone, and every rung linked into one program (which
#      also launches each rung where there is a GPU); each rung's size and its diff budget,
#   3. the plot test (gnuplot scripts and the README table on a fixture),
#   4. the GPU tests, when a GPU is present (skipped with a visible line when not), on every
#      bin/step* or on the binaries GPU_TEST_BINS names (a glob; e.g. "bin/step0*", to split
#      the GPU suite over two runs).
# Ends with one line "tests: N passed, N failed, N skipped" and a non-zero exit on failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

host_only=0
if [ "${1:-}" = "--host-only" ]; then
  host_only=1
  shift
fi

passed=0 failed=0 skipped=0
failures=()

# run NAME CMD...: one suite; exit 0 passes, 77 is a skip, anything else fails.
run() {
  local name=$1
  shift
  echo "=== $name"
  "$@"
  local status=$?
  case $status in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)); echo "--- $name: skipped" ;;
    *) failed=$((failed + 1)); failures+=("$name"); echo "--- $name: FAILED (exit $status)" ;;
  esac
}

for t in "$@"; do
  run "$(basename "$t")" "$t"
done
run "build: every rung for every architecture, zero warnings, no spills" tests/check_build.sh
run "build flags, architectures and stamps (dry runs)" tests/test_build_flags.sh
run "exports: each rung defines step_NN alone" tests/check_exports.sh
run "rungs: lines, headers and the diff budget" tests/check_rungs.sh
run "every rung linked into one program (launched where there is a GPU)" build/tests/all_rungs
run "sweep, inspect and profile-table scripts" tests/test_tools.sh
if [ "$host_only" -eq 0 ]; then
  run "plots and README table" tests/test_plots.sh
  # shellcheck disable=SC2086 # GPU_TEST_BINS is a glob
  run "GPU: bin/ladder, every rung in one process" tests/ladder_run.sh
  run "GPU: check matrix, compute-sanitizer, launch contract" tests/gpu_tests.sh ${GPU_TEST_BINS:-bin/step*}
fi

echo
if [ "$failed" -gt 0 ]; then
  echo "failed suites: ${failures[*]}"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
