#!/usr/bin/env bash
# rung_body.sh FILE: a rung's code below its header, with the project's own headers it includes
# (#include "../common/X" and the includes inside them) written out in place, each once.
# What a rung compiles is its file and those headers: a diff of two rungs' bodies shows all that
# changed between them, also where code moved from a rung into common/ (tests/check_rungs.sh
# holds each diff to a budget).
set -euo pipefail
file=${1:?usage: rung_body.sh FILE}
[ -f "$file" ] || { echo "rung_body.sh: no file $file" >&2; exit 1; }
awk '
    function emit(path, dir,   line, inc, target) {
        while ((getline line < path) > 0) {
            if (match(line, /^#include "[^"]+"/)) {
                inc = substr(line, 11); sub(/".*/, "", inc)
                target = (dir == "" ? inc : dir "/" inc)
                gsub(/\/[^\/]+\/\.\.\//, "/", target)
                sub(/^[^\/]+\/\.\.\//, "", target)
                if (target ~ /^common\// || dir ~ /common$/) {
                    if (!(target in seen)) { seen[target] = 1; emit(target, "common") }
                    continue
                }
            }
            if (path == main && !body) {
                if (++seen_main == 1 && line !~ /^\/\*/) body = 1 # no header
                else { if (line ~ /^ \*\/$/) body = 1; continue }
            }
            print line
        }
        close(path)
    }
    BEGIN { main = ARGV[1]; ARGV[1] = ""; body = 0; emit(main, "steps") }
' "$file"
