#!/usr/bin/env bash
# logged.sh LOG CMD...: runs CMD with its output saved in LOG (the compiler's resource
# report lives there, for `make step=N regs` and the build test); shows warnings and
# errors on stderr, and the whole log when CMD fails.
set -uo pipefail
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ]; then
  cat "$log" >&2
  exit "$status"
fi
grep -iE 'warning|error' "$log" | grep -v 'ptxas info' >&2 || true
exit 0
