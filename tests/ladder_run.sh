#!/usr/bin/env bash
# ladder_run.sh - bin/ladder (make all-bench's program) on a GPU: every rung it can run, timed
# in one process on the same inputs at two points with edge tiles, each row checked (the
# exact check, the bound against cuBLAS, the precision gate) and written to the CSV.
# usage: tests/ladder_run.sh [BIN]   (default bin/ladder)
# Exit: 0 every rung ran and passed; 1 a rung failed, or a row is missing; 77 no GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bin=${1:-bin/ladder}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "skip: no GPU (nvidia-smi finds none)"
  exit 77
fi
[ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ladder_run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set -- steps/[0-9][0-9]_*.cu
rungs=$#
# 300 and 1000 x 520 x 777: partial tiles in every dimension; few replays (a check, not a benchmark)
"$bin" --no-check --reps 4 --power 0 --sizes 300 --mnk 1000,520,777 --csv "$tmp/rows.csv" \
  >"$tmp/out.txt" 2>&1
status=$?
skipped=$(grep -c "needs compute capability.*(skipped)" "$tmp/out.txt")
rows=$(awk 'NR > 1 && NF' "$tmp/rows.csv" 2>/dev/null | wc -l)
want=$((2 * (rungs - skipped)))
bad=$(awk -F, 'NR > 1 && ($20 != "PASS" || $29 != "PASS" || $36 != "PASS") { print $3 }' "$tmp/rows.csv" 2>/dev/null | sort -un | tr '\n' ' ')
if [ "$status" -ne 0 ] || [ "$rows" -ne "$want" ] || [ -n "$bad" ]; then
  echo "FAIL bin/ladder (exit $status): $rows rows of $want${bad:+, failing rungs: $bad}"
  grep -E 'FAIL|error' "$tmp/out.txt" | head -n 20 | sed 's/^/    /'
  exit 1
fi
echo "ok   bin/ladder: $((rungs - skipped)) rungs ($skipped skipped) at 2 points, $rows rows, every check passed"
