#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# readme_table.sh - write the benchmark table at one size into README.md.
#
# usage: scripts/readme_table.sh [CSV [README]]
#   CSV     a bench.csv written by the harness (default, or when given as "":
#           the newest results/*/bench.csv)
#   README  the Markdown file to update (default README.md in the repository)
# Replaces everything between the lines
#   <!-- bench-table:start -->  and  <!-- bench-table:end -->
# process), and a cuBLAS row (mean of the rungs' cuBLAS runs at that size).
# Environment: TABLE_SIZE (default 4096; if no rung has it, the largest size
# present, said in the caption), CUDA_VERSION, PLOT_DATE, DRIVER_VERSION (as plots.sh).
# Exit: 0, or 1 with one line on stderr (bad CSV, README without the markers).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly START_MARK='<!-- bench-table:start -->'
readonly END_MARK='<!-- bench-table:end -->'
# shellcheck source=lib/bench_csv.sh
source "$ROOT/scripts/lib/bench_csv.sh"

die() {
    echo "readme_table.sh: $*" >&2
    exit 1
}

newest_csv() {
    local newest="" csv
    for csv in "$ROOT"/results/*/bench.csv; do
        [[ -f $csv ]] || continue
        if [[ -z $newest || $csv -nt $newest ]]; then newest=$csv; fi
    done
    [[ -n $newest ]] || die "no results/*/bench.csv (run 'make all-bench' on a GPU machine)"
    printf '%s\n' "$newest"
}

# check_markers README: exactly one start marker, then exactly one end marker.
check_markers() {
    local readme=$1 starts ends
    [[ -f $readme ]] || die "$readme: no such file"
    starts=$(grep -cxF "$START_MARK" "$readme" || true)
    ends=$(grep -cxF "$END_MARK" "$readme" || true)
    if [[ $starts != 1 || $ends != 1 ]]; then
        die "$readme: needs the marker lines '$START_MARK' and '$END_MARK', once each, on lines of their own (found $starts and $ends)"
    fi
    awk -v s="$START_MARK" -v e="$END_MARK" '$0 == s { sl = NR } $0 == e { el = NR } END { exit !(sl < el) }' "$readme" ||
        die "$readme: '$END_MARK' comes before '$START_MARK'"
}

# link_path FILE README: FILE's path relative to the README's folder.
link_path() {
    realpath -m --relative-to="$(dirname "$2")" "$1"
}

# table CSV SIZE CAPTION: the Markdown block (without the markers): each rung's GFLOP/s at SIZE,
# its ratio to cuBLAS at 1024, 2048, SIZE and 8192 (each from the same process and batches),
# and its errors at SIZE.
table() {
    local csv=$1 size=$2 caption=$3
    awk -F, -v want="$size" -v caption="$caption" '
        # an error figure: as a number, or as written when it is not one (inf)
        function fig(x, fmt) { return (x ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) ? sprintf(fmt, x) : x }
        function commas(x,   s, out) {
            s = sprintf("%.0f", x); out = ""
            while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
            return s out
        }
        NR > 1 && $5 == $6 && $6 == $7 {
            sub(/\r$/, "")
            sizes[$5] = 1
            if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 }
            row[$3 " " $5] = $0
        }
        END {
            ls = (want in sizes) ? want : 0
            if (!ls) for (s in sizes) if (s + 0 > ls) ls = s + 0
            note = (ls == want) ? "" : sprintf(" (no point at %d in this CSV)", want)
            m = split("1024 2048 " ls " 8192", cols, " ")
            printf "%s; GFLOP/s and errors at M = N = K = %d%s.\n\n", caption, ls, note
            head = "| Rung | Kernel | GFLOP/s |"; rule = "| ---: | --- | ---: |"
            for (c = 1; c <= m; c++) { head = head " " cols[c] " |"; rule = rule " ---: |" }
            print head " Max error (u) | Relative rms error |"
            print rule " ---: | ---: |"
            for (i = 1; i <= n; i++) {
                st = order[i]; key = st " " ls
                if (!(key in row)) continue
                split(row[key], f, ",")
                line = sprintf("| %02d | %s", f[3], f[4])
                ok = 1
                for (c = 1; c <= m; c++) {
                    k2 = st " " cols[c]
                    if (!(k2 in row)) continue
                    split(row[k2], g, ",")
                    if (!(g[20] == "PASS" && g[29] == "PASS" && g[36] == "PASS")) ok = 0
                }
                if (!ok) any_fail = 1
                line = line (ok ? "" : " (FAIL)") " | " commas(f[14]) (f[9] == 1 ? "\\*" : "") " |"
                for (c = 1; c <= m; c++) {
                    k2 = st " " cols[c]
                    if (!(k2 in row)) { line = line " - |"; continue }
                    split(row[k2], g, ",")
                    if (g[9] == 1) any_cut = 1
                    line = line sprintf(" %.3f%s |", g[18], g[9] == 1 ? "\\*" : "")
                }
                print line sprintf(" %s | %s |", fig(f[30], "%.2f"), fig(f[31], "%.1e"))
                cb += f[17]; cbu += f[32]; cbr += f[33]; ncb++
                if (ncb == 1 || f[17] < cmin) cmin = f[17]
                if (ncb == 1 || f[17] > cmax) cmax = f[17]
            }
            if (ncb) {
                line = sprintf("| | cuBLAS | %s |", commas(cb / ncb))
                for (c = 1; c <= m; c++) line = line " 1.000 |"
                print line sprintf(" %.2f | %.1e |", cbu / ncb, cbr / ncb)
                printf("\ncuBLAS at %d: the mean of its runs beside each rung, %s to %s GFLOP/s (%.1f%%).\n", ls, commas(cmin), commas(cmax), (cb > 0 ? 100 * (cmax - cmin) / (cb / ncb) : 0))
            }
            if (any_cut) print "\n\\* cut short by the time budget: fewer replays than the rule, read with care."
            if (any_fail) print "\n(FAIL): a check of the timed shape failed (exact, bound or precision gate)."
            print "\nErrors against an FP64 product of the same inputs: the largest per element in units of u = 2^-24 of (|A||B|)_ij, and ||C - C64|| / ||C64||."
        }' "$csv"
}

# plot_links DIR README: a line linking the SVG plots in DIR, if plots.sh drew them.
plot_links() {
    local dir=$1 readme=$2 name links=""
    for name in gflops ladder last_vs_cublas clock_power precision accuracy shapes random part2; do
        [[ -f $dir/$name.svg ]] || continue
        links+="${links:+, }[$name]($(link_path "$dir/$name.svg" "$readme"))"
    done
    [[ -z $links ]] || printf '\n\nPlots: %s.' "$links"
}

main() {
    local csv=${1:-} readme=${2:-$ROOT/README.md} dir device cuda date driver caption block
    (($# <= 2)) || die "usage: scripts/readme_table.sh [CSV [README]]"
    [[ -n $csv ]] || csv=$(newest_csv)
    bench_csv_check "$csv" || die "cannot tabulate $csv"
    check_markers "$readme"

    dir=$(dirname "$csv")
    device=$(bench_device "$csv")
    cuda=$(bench_title_meta cuda "${CUDA_VERSION:-}" "$dir" "$(bench_cuda_version)")
    date=$(bench_title_meta date "${PLOT_DATE:-}" "$dir" "$(date -r "$csv" +%F)")
    driver=$(bench_title_meta driver "${DRIVER_VERSION:-}" "$dir" "")
    caption="Measured on $device (CUDA ${cuda:-unknown}${driver:+, driver $driver}, $date) from [$(link_path "$csv" "$readme")]($(link_path "$csv" "$readme")) by make all-bench: each point's inputs drawn once, every rung of its set timed on them beside cuBLAS in one process (alternating batches); ratio to cuBLAS at M = N = K = 1024 ... 8192"
    block=$(table "$csv" "${TABLE_SIZE:-4096}" "$caption")
    block+=$(plot_links "$dir" "$readme")

    local tmp
    tmp=$(mktemp "${TMPDIR:-/tmp}/readme.XXXXXX")
    BLOCK=$block awk -v s="$START_MARK" -v e="$END_MARK" '
        $0 == s { print; print ""; print ENVIRON["BLOCK"]; print ""; skip = 1; next }
        $0 == e { skip = 0 }
        !skip' "$readme" >"$tmp"
    cat "$tmp" >"$readme" # keeps the README's own permissions
    rm -f "$tmp"
    echo "readme_table.sh: $csv -> $readme"
}

main "$@"
