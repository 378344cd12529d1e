#!/usr/bin/env bash
# check_rungs.sh: every rung is a lesson of a readable size.
#   - at most MAX_LINES lines in its file, at most MAX_HEADER of them its header (the first
#     comment, up to its closing " */");
#   - from rung 13 on, its code below the header differs from the rung before's by at most
#     MAX_DIFF changed lines (diff -w, lines removed plus lines added), unless its header says
#     it opens a Part ("Opens Part II") and names the rung it is read against.
# Each rung's line also gives the diff with the project's own headers written out in place
# (scripts/rung_body.sh): what changed in all that the rung compiles, for information.
# PENDING names the limits a rung does not meet yet, each with the reason; a pending limit that
# a rung meets after all fails the check, so that the list cannot go stale.
# Exits 0, or 1 naming every rung over a limit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

readonly MAX_LINES=700 MAX_HEADER=80 MAX_DIFF=250 FIRST_BUDGETED=13
# rung:limit  reason
readonly PENDING="
"

pending() { # pending RUNG LIMIT: 0 if PENDING lists it
  awk -v k="$1:$2" '$1 == k { f = 1 } END { exit !f }' <<<"$PENDING"
}
in_header() { # in_header FILE LINES REGEX: the first LINES lines of FILE match REGEX (no pipe:
  # a reader that stops early would fail the pipe under pipefail)
  awk -v n="$2" -v re="$3" 'NR <= n && $0 ~ re { f = 1 } END { exit !f }' "$1"
}
body() { awk 'BEGIN { h = 1 } h && /^ \*\/$/ { h = 0; next } !h' "$1"; }
changed() { diff -w "$1" "$2" | grep -c '^[<>]'; }

bad=0
prev=""
for f in steps/[0-9][0-9]_*.cu; do
  n=$(basename "$f" | cut -c1-2)
  r=$((10#$n))
  lines=$(wc -l <"$f")
  header=$(awk '/^ \*\/$/ { print NR; exit }' "$f")
  verdict=() over=()
  [ "$lines" -le "$MAX_LINES" ] || over+=(lines)
  [ -n "$header" ] && [ "$header" -le "$MAX_HEADER" ] || over+=(header)
  info="$lines lines, header ${header:-none}"
  if [ -n "$prev" ] && [ "$r" -ge "$FIRST_BUDGETED" ]; then
    d=$(changed <(body "$prev") <(body "$f"))
    flat=$(changed <(scripts/rung_body.sh "$prev") <(scripts/rung_body.sh "$f"))
    info+=", diff $d ($flat with common/ written out)"
    if in_header "$f" "${header:-0}" 'Opens Part'; then
      if in_header "$f" "${header:-0}" 'read against rung [0-9]'; then
        info+=", opens a Part"
      else
        over+=(opens-part-without-its-rung)
      fi
    elif [ "$d" -gt "$MAX_DIFF" ]; then
      over+=(diff)
    fi
  fi
  for limit in "${over[@]}"; do
    if pending "$n" "$limit"; then
      verdict+=("pending: $limit")
    else
      verdict+=("OVER: $limit")
      bad=1
    fi
  done
  for limit in lines header diff; do
    if pending "$n" "$limit" && [[ " ${over[*]} " != *" $limit "* ]]; then
      verdict+=("STALE: $limit is listed as pending but met")
      bad=1
    fi
  done
  if [ "${#verdict[@]}" -eq 0 ]; then
    echo "ok: $(basename "$f"): $info"
  else
    tag=ok
    [[ " ${verdict[*]}" == *"OVER"* || " ${verdict[*]}" == *"STALE"* ]] && tag=FAIL
    echo "$tag: $(basename "$f"): $info; ${verdict[*]}"
  fi
  prev=$f
done
[ "$bad" -eq 0 ] && echo "ok: every rung within $MAX_LINES lines and a $MAX_HEADER-line header, every diff from rung $FIRST_BUDGETED within $MAX_DIFF lines (pending: $(grep -c . <<<"$PENDING"))"
exit "$bad"
