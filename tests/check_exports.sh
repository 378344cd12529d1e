#!/usr/bin/env bash
# check_exports.sh [OBJECT...]: each rung's object defines one global symbol, step_NN (the NN
# of its file name), and nothing else: every kernel and helper of a rung is static, so that
# any set of rungs links into one program (common/step.h). Weak symbols count as exports too:
# two rungs' weak definitions of one name (template instances, inline functions) would merge
# silently into one. The one exception is the C++ runtime's DW.ref.__gxx_personality_v0,
# which every C++ object carries and which is the same everywhere.
# Without arguments: the object of each steps/NN_*.cu (run after `make all`). Exits 0, or 1 naming each extra.
# --self-test: the check itself, on objects made here with gcc (one clean, one leaking a
# function, one leaking a weak symbol, one exporting another rung's name): must pass, fail,
# fail, fail.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# check OBJECT: prints what is wrong with it, returns 1 if anything is.
check() {
  local obj=$1 nn want syms extra
  nn=$(basename "$obj" | grep -oE '^[0-9]{2}')
  if [ -z "$nn" ]; then
    echo "FAIL: $obj: not named NN_<slug>.o"
    return 1
  fi
  want="step_$nn"
  if ! syms=$(nm -g --defined-only "$obj" 2>&1); then
    echo "FAIL: $obj: nm: $syms"
    return 1
  fi
  syms=$(awk 'NF >= 3 { print $3 }' <<<"$syms" | grep -vx 'DW.ref.__gxx_personality_v0' | sort -u)
  extra=$(grep -vx "$want" <<<"$syms" || true)
  if ! grep -qx "$want" <<<"$syms"; then
    echo "FAIL: $obj does not define $want"
    return 1
  fi
  if [ -n "$extra" ]; then
    echo "FAIL: $obj exports more than $want (make them static):"
    c++filt <<<"$extra" | sed 's/^/    /'
    return 1
  fi
  return 0
}

self_test() {
  local dir bad=0
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  printf 'int step_98 = 1;\nstatic int helper(void) { return step_98; }\nint leak(void);\nint leak(void) { return helper(); }\n' >"$dir/x.c"
  gcc -c -x c - -o "$dir/99_clean.o" <<<'const int step_99 = 1; static int f(void) { return step_99; } int g(void);'
  gcc -c "$dir/x.c" -o "$dir/98_leak.o"
  gcc -c -x c - -o "$dir/97_weak.o" <<<'const int step_97 = 1; __attribute__((weak)) int shared_helper(void) { return 1; }'
  gcc -c -x c - -o "$dir/96_other.o" <<<'const int step_96 = 1; const int step_95 = 2;'
  check "$dir/99_clean.o" >/dev/null || { echo "FAIL: self-test: a clean object failed"; bad=1; }
  check "$dir/98_leak.o" >/dev/null && { echo "FAIL: self-test: a leaked function passed"; bad=1; }
  check "$dir/97_weak.o" >/dev/null && { echo "FAIL: self-test: a weak symbol passed"; bad=1; }
  check "$dir/96_other.o" >/dev/null && { echo "FAIL: self-test: another rung's name passed"; bad=1; }
  [ "$bad" -eq 0 ] && echo "ok: self-test: a clean object passes, a leaked function, a weak symbol and a second step_NN fail"
  return "$bad"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
  exit $?
fi

status=0
self_test || status=1
objs=("$@")
if [ "${#objs[@]}" -eq 0 ]; then
  for src in steps/[0-9][0-9]_*.cu; do
    obj=build/steps/$(basename "${src%.cu}").o
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then
      echo "FAIL: $obj is missing or older than $src: run make all first"
      exit 1
    fi
    objs+=("$obj")
  done
fi
for obj in "${objs[@]}"; do
  if check "$obj"; then
    echo "ok: $(basename "$obj") exports $(basename "$obj" | cut -c1-2 | sed 's/^/step_/') alone"
  else
    status=1
  fi
done
exit "$status"
