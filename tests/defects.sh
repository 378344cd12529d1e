#!/usr/bin/env bash
# defects.sh [--dry-run] [PATCH...]: does the GPU suite catch the defects it is meant to catch?
# Each tests/defects/NN_<what>.patch plants one defect (its first lines: "rung: N", "caught by:
# check [racecheck]", "what: ..."). For each: a scratch copy of the tree under build/defects/,
# the patch applied, the rung built, then its check matrix (bin/stepNN --check) and, where the
# patch names it, compute-sanitizer racecheck on small odd shapes, or the launch contract's
# capture on random inputs (capture-random). A defect is caught when one of them fails.
# Prints a table; exits 0 only when every defect was caught.
# --dry-run: only that every patch still applies to this tree (no GPU; a host test runs it).
# Needs a GPU otherwise (exit 77 without one).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

dry=0
if [ "${1:-}" = --dry-run ]; then
  dry=1
  shift
fi
if [ "$#" -eq 0 ]; then
  set -- tests/defects/*.patch
fi
if [ "$dry" -eq 0 ] && { ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  echo "SKIP: no GPU here: the defects are run on a GPU machine (--dry-run checks that they apply)"
  exit 77
fi
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
scratch=${DEFECTS_DIR:-build/defects}
small="--mnk 67,45,33 --mnk 130,131,17 --mnk 256,256,64"
bad=0
[ "$dry" -eq 1 ] || printf '%-46s %4s  %s\n' "defect" "rung" "caught by"
for p in "$@"; do
  name=$(basename "$p" .patch)
  rung=$(awk '$1 == "rung:" { print $2; exit }' "$p")
  tools=$(sed -n 's/^caught by: //p' "$p" | head -n 1)
  if [ -z "$rung" ] || [ -z "$tools" ]; then
    echo "FAIL $name: no \"rung:\" or \"caught by:\" line"
    bad=1
    continue
  fi
  if ! patch -p1 --dry-run -s -f <"$p" >/dev/null 2>&1; then
    echo "FAIL $name: the patch no longer applies to this tree"
    bad=1
    continue
  fi
  if [ "$dry" -eq 1 ]; then
    echo "ok   $name: applies (rung $rung)"
    continue
  fi
  dir=$scratch/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  tar cf - --exclude=./build --exclude=./bin --exclude=./.git . | tar xf - -C "$dir"
  targets="bin/step$rung"
  case " $tools " in *" capture-random "*) targets="$targets build/tests/contract_$rung" ;; esac
  # shellcheck disable=SC2086
  if ! (cd "$dir" && patch -p1 -s <"$OLDPWD/$p" && make $targets >build.log 2>&1); then
    echo "FAIL $name: the patched rung does not build ($dir/build.log)"
    bad=1
    continue
  fi
  bin=$dir/bin/step$rung caught=""
  for tool in $tools; do
    case $tool in
      check) timeout 600 "$bin" --check --quiet >"$dir/check.log" 2>&1 ;;
      # the launch contract's cold capture on random floats (tests/gpu_contract.c), at a
      # split-K shape
      capture-random) timeout 120 "$dir/build/tests/contract_$rung" capture-random 256 256 4096 \
        >"$dir/$tool.log" 2>&1 ;;
      *) # shellcheck disable=SC2086
        timeout 600 "$sanitizer" --tool "$tool" --error-exitcode 99 "$bin" --no-check --no-time \
          --quiet $small >"$dir/$tool.log" 2>&1 ;;
    esac
    status=$?
    if [ "$status" -eq 77 ]; then # the rung did not run here (below its compute capability)
      caught=""
      break
    fi
    [ "$status" -ne 0 ] && caught="$caught $tool"
  done
  if [ -n "$caught" ]; then
    printf '%-46s %4s  %s\n' "$name" "$rung" "${caught# }"
  else
    printf '%-46s %4s  %s\n' "$name" "$rung" "NOT CAUGHT (tried: $tools)"
    bad=1
  fi
done
exit "$bad"
