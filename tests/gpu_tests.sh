#!/usr/bin/env bash
# gpu_tests.sh RUNG_BINARIES...: the tests that need a GPU.
#   - every rung through the whole check matrix (bin/stepNN --check)
#   - compute-sanitizer memcheck, racecheck and synccheck clean on small odd shapes
# Exits 77 (a visible skip) when there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: no GPU here (nvidia-smi lists none): the check matrix and compute-sanitizer run on a GPU machine"
  exit 77
fi
if [ "$#" -eq 0 ]; then
  echo "FAIL: no rung binaries given"
  exit 1
fi
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
jobs=${GPU_TEST_JOBS:-4}
logdir=${GPU_TEST_LOGS:-build/gpu-tests}
mkdir -p "$logdir"

# one_rung BIN: prints one line per test, returns non-zero if any failed.
one_rung() {
  local bin=$1 name status bad=0
  # Shapes that are multiples of nothing: edge tiles in every dimension, misaligned rows.
  # tile-aligned ones (K % 8 == 0), which take the fast paths (rung 10: texture loads),
  # one with more 128x256 tiles than a 132-SM GPU has SMs (rung 11: stream-K, split tiles),
  # and one with few tiles and a long K (rung 11: split-K, 9 tiles x 6 slices, a partial K tile).
  local shapes="--mnk 67,45,33 --mnk 130,131,17 --mnk 1,129,5 --mnk 256,256,64 --mnk 200,300,48 --mnk 2049,2300,37 --mnk 130,260,201"
  name=$(basename "$bin")
  # Rung 11 only (the early rungs would take minutes under the sanitizers): a C whose last
  # round of 128x256 tiles is more than half busy, the uneven tail (on 132 SMs: 132 whole
  # tiles + 100 cut in two, the short pieces in 4 waves on a second stream).
  case "$name" in step11*) shapes="$shapes --mnk 14848,512,1024" ;; esac
  "$bin" --check --quiet >"$logdir/$name.check.log" 2>&1
  status=$?
  if [ "$status" -eq 77 ]; then
    echo "skip $name: $(tail -n 1 "$logdir/$name.check.log")"
    return 0
  elif [ "$status" -ne 0 ]; then
    echo "FAIL $name check matrix (exit $status):"
    grep -E 'FAIL|error|failed' "$logdir/$name.check.log" | head -n 20 | sed 's/^/    /'
    bad=1
  else
    echo "ok   $name check matrix: $(grep 'check matrix' "$logdir/$name.check.log")"
  fi
  for tool in memcheck racecheck synccheck; do
    "$sanitizer" --tool "$tool" --error-exitcode 99 \
      "$bin" --no-check --no-time --quiet $shapes >"$logdir/$name.$tool.log" 2>&1
    status=$?
    if [ "$status" -ne 0 ]; then
      echo "FAIL $name $tool (exit $status):"
      grep -E '=========|FAIL' "$logdir/$name.$tool.log" | head -n 20 | sed 's/^/    /'
      bad=1
    else
      echo "ok   $name $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logdir/$name.$tool.log" | head -n 1)"
    fi
  done
  return "$bad"
}
export -f one_rung
export sanitizer logdir

for bin in "$@"; do
  [ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
done
# Rungs run in parallel (the sanitizers are CPU-bound); each writes a summary, shown in order.
printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c \
  'one_rung "$1" >"$logdir/$(basename "$1").summary" 2>&1 || touch "$logdir/$(basename "$1").failed"' _ {}
fails=0
for bin in "$@"; do
  name=$(basename "$bin")
  cat "$logdir/$name.summary"
  if [ -e "$logdir/$name.failed" ]; then
    fails=$((fails + 1))
    rm -f "$logdir/$name.failed"
  fi
done
echo "GPU tests: $# binaries, $fails with failures (logs in $logdir/)"
[ "$fails" -eq 0 ]
