#!/usr/bin/env bash
# check_build.sh: the last build compiled every rung for every architecture it names, with
# zero warnings, and ptxas reports no register spills (and no stack frame) for any kernel on
# any architecture.
# Reads the logs that scripts/logged.sh keeps under build/ and the flag stamps the Makefile
# writes (build/flags/nvcc.txt, build/flags/cc.txt: the whole compile lines). A build that lost
# its -gencode or -Xptxas -v leaves logs without ptxas's per-architecture report, and fails here.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

nvcc_stamp=build/flags/nvcc.txt
cc_stamp=build/flags/cc.txt
bad=0
fail() {
  echo "FAIL: $*"
  bad=1
}

mapfile -t sources < <(ls steps/[0-9][0-9]_*.cu 2>/dev/null)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "FAIL: no rung sources (steps/NN_*.cu)"
  exit 1
fi
for stamp in "$nvcc_stamp" "$cc_stamp"; do
  if [ ! -s "$stamp" ]; then
    echo "FAIL: no $stamp (the compile line of the last build): run make all first"
    exit 1
  fi
done

# The architectures the build was asked for: every code=sm_XY of the nvcc compile line.
compile_line=$(sed -n 's/^compile: //; s/ | link: .*//p' "$nvcc_stamp")
mapfile -t archs < <(grep -oE 'code=sm_[0-9]+[a-z]?' <<<"$compile_line" | sed 's/^code=//' | sort -u)
if [ "${#archs[@]}" -eq 0 ]; then
  fail "$nvcc_stamp names no architecture (no -gencode ...,code=sm_XY): $compile_line"
fi
for flag in '-Xptxas -v' '-Xptxas -warn-spills'; do
  [[ " $compile_line " == *" $flag "* ]] || fail "the nvcc line lacks $flag ($nvcc_stamp): $compile_line"
done
cc_line=$(sed -n 's/^compile: //; s/ | tests: .*//p' "$cc_stamp")
for flag in -std=c11 -Wall -Wextra; do
  [[ " $cc_line " == *" $flag "* ]] || fail "the C compile line lacks $flag ($cc_stamp): $cc_line"
done

# Every rung (and every common/*.cu that defines a kernel): a build log no older than the
# stamp, with at least one kernel compiled by ptxas for each architecture.
units=("${sources[@]}")
for src in common/*.cu; do
  grep -q '__global__' "$src" && units+=("$src")
done
kernels=0
for src in "${units[@]}"; do
  log=build/${src%%/*}/$(basename "${src%.cu}").log
  if [ ! -f "$log" ]; then
    fail "$src has no build log ($log): run make all first"
    continue
  fi
  if [ "$nvcc_stamp" -nt "$log" ]; then
    fail "$log is older than $nvcc_stamp: $src was built with other flags (run make all)"
    continue
  fi
  # a rung with no device code of its own (no kernel, no .cuh: rung 29 routes to other rungs)
  if ! grep -q '__global__' "$src" && ! grep -qE '#include ".*\.cuh"' "$src"; then
    continue
  fi
  missing=()
  for arch in "${archs[@]}"; do
    n=$(grep -cE "Compiling entry function '[^']*' for '$arch'" "$log")
    if [ "$n" -eq 0 ]; then missing+=("$arch"); fi
    kernels=$((kernels + n))
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    fail "$src: no kernel build for ${missing[*]} in $log (of ${archs[*]}): ptxas's -v report is missing," \
      "so the -gencode or -Xptxas -v flags did not reach nvcc"
  fi
done

# Warnings, spills and stack frames in every compile log (not the GPU tests' run logs).
mapfile -t logs < <(find build -path build/gpu-tests -prune -o -name '*.log' -print 2>/dev/null | sort)
for log in "${logs[@]}"; do
  if grep -iE 'warning' "$log" | grep -v 'ptxas info' >/dev/null; then
    fail "warnings in $log:"
    grep -iE 'warning' "$log" | sed 's/^/    /'
  fi
  if grep -E '[1-9][0-9]* bytes spill (stores|loads)' "$log" >/dev/null; then
    fail "register spills in $log:"
    grep -B2 -E '[1-9][0-9]* bytes spill (stores|loads)' "$log" | sed 's/^/    /'
  fi
  if grep -E '[1-9][0-9]* bytes stack frame' "$log" >/dev/null; then
    fail "local memory (stack frame) in $log:"
    grep -B1 -E '[1-9][0-9]* bytes stack frame' "$log" | sed 's/^/    /'
  fi
done
[ "$bad" -eq 0 ] && echo "ok: ${#sources[@]} rungs x ${#archs[@]} architectures (${archs[*]}), $kernels kernel builds," \
  "zero warnings, no spills, no stack frames"
exit "$bad"
