#!/usr/bin/env bash
# check_build.sh: every compile of the last build left zero warnings, and ptxas reports
# no register spills (and no stack frame) for any kernel on any architecture.
# Reads the logs that scripts/logged.sh keeps under build/.
set -uo pipefail
cd "$(dirname "$0")/.."

logs=$(find build -name '*.log' 2>/dev/null | sort)
rungs=$(find build/steps -name '*.log' 2>/dev/null | wc -l)
sources=$(ls steps/[0-9][0-9]_*.cu 2>/dev/null | wc -l)
if [ "$sources" -eq 0 ] || [ "$rungs" -ne "$sources" ]; then
  echo "FAIL: $sources rung sources but $rungs rung build logs (run make all first)"
  exit 1
fi

bad=0
for log in $logs; do
  if grep -iE 'warning' "$log" | grep -v 'ptxas info' >/dev/null; then
    echo "FAIL: warnings in $log:"
    grep -iE 'warning' "$log" | sed 's/^/    /'
    bad=1
  fi
  if grep -E '[1-9][0-9]* bytes spill (stores|loads)' "$log" >/dev/null; then
    echo "FAIL: register spills in $log:"
    grep -B2 -E '[1-9][0-9]* bytes spill (stores|loads)' "$log" | sed 's/^/    /'
    bad=1
  fi
  if grep -E '[1-9][0-9]* bytes stack frame' "$log" >/dev/null; then
    echo "FAIL: local memory (stack frame) in $log:"
    grep -B1 -E '[1-9][0-9]* bytes stack frame' "$log" | sed 's/^/    /'
    bad=1
  fi
done
kernels=$(cat build/steps/*.log | grep -c 'Compiling entry function')
[ "$bad" -eq 0 ] && echo "ok: $rungs rungs, $kernels kernel builds, zero warnings, no spills, no stack frames"
exit "$bad"
