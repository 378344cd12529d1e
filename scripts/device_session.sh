#!/usr/bin/env bash
# device_session.sh: one call's worth of work on a lent GPU machine, logs under $OUT.
#   TIME_STEPS="1 2"  rungs to time after the tests (default: all built rungs)
#   SIZES=1024,2048,4096,8192  sizes to time
#   SKIP_TESTS=1      skip make test
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{
  nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  nvcc --version | tail -n 2
} 2>&1 | tee "$OUT/device.txt"

make -j16 all >"$OUT/build.log" 2>&1 || { tail -n 50 "$OUT/build.log"; exit 1; }
for log in build/steps/*.log; do
  echo "== $log"; grep -E 'Compiling entry|registers|spill' "$log" | grep -B1 -A1 sm_90 | head -n 20
done >"$OUT/resources.txt"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  GPU_TEST_LOGS=$OUT/gpu-tests make test >"$OUT/test.log" 2>&1
  echo "make test exit: $?" >>"$OUT/test.log"
  grep -E '^(ok|FAIL|skip|SKIP)|tests:|GPU tests|make test exit|^---' "$OUT/test.log"
fi

steps=${TIME_STEPS:-$(ls bin/ | sed -n 's/^step\([0-9][0-9]\)$/\1/p')}
for s in $steps; do
  n=$(printf '%02d' "$((10#$s))")
  bin/step$n --no-check --sizes "${SIZES:-1024,2048,4096}" --csv "$OUT/bench.csv" ${BENCH_ARGS:-} \
    >"$OUT/step$n.txt" 2>&1
  echo "exit $?" >>"$OUT/step$n.txt"
done
cat "$OUT"/step*.txt
