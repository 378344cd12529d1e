#!/usr/bin/env bash
# profile_table.sh - Nsight Compute CSV (ncu --csv --print-units base) -> PROFILE.md rows.
#
# usage: scripts/profile_table.sh [-o OUT.md | --stdout] CSV...
#   CSV     files written by `scripts/inspect.sh profile N` (results/<gpu>/profile/stepNN.csv,
#           cublas.csv): ncu's details page, one row per kernel launch and metric
#   -o      write a whole Markdown page (title, table, legend) to OUT.md
#           (default: results/<gpu>/PROFILE.md beside the CSVs' profile/ folder)
#   --stdout  print only the table
# One row per rung and kernel; several launches of one kernel are averaged.  The
# columns follow the metric set in scripts/inspect.sh.
# Exit: 0, or 1 with one line on stderr (no CSV, not an ncu CSV, no metrics).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly STEPS_DIR=${STEPS_DIR:-$ROOT/steps}

die() {
    echo "profile_table.sh: $*" >&2
    exit 1
}

# label CSV: "05 blocktiling_2d" for .../step05.csv, "cuBLAS" for .../cublas.csv.
label() {
    local base n f
    base=${1##*/}
    base=${base%.csv}
    if [[ $base == cublas ]]; then
        echo "cuBLAS"
    elif [[ $base =~ ^step([0-9][0-9])$ ]]; then
        n=${BASH_REMATCH[1]}
        for f in "$STEPS_DIR"/"$n"_*.cu; do
            if [[ -f $f ]]; then
                f=${f##*/}
                echo "$n ${f#*_}" | sed 's/\.cu$//'
                return
            fi
        done
        echo "$n"
    else
        echo "$base"
    fi
}

# rows CSV...: the Markdown table (header and rows).
rows() {
    local csv
    for csv in "$@"; do
        [[ -s $csv ]] || die "$csv: missing or empty"
        grep -q '^"ID",' "$csv" || die "$csv: not an ncu --csv report (no \"ID\" header line)"
    done
    printf '| rung | kernel | time (ms) | DRAM (%% of peak) | L1 hit (%%) | L2 hit (%%) | global ld sectors/req | global st sectors/req | smem ld conflicts | smem st conflicts | smem ld wavefronts/inst | occupancy (%%) | FMA pipe (%%) | tensor pipe (%%) | regs | top stalls (warps per issue) |\n'
    printf '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n'
    for csv in "$@"; do
        awk -F'"' -v label="$(label "$csv")" -v file="$csv" '
            function num(s) { gsub(/,/, "", s); return (s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) ? s + 0 : "" }
            function big(x) { if (x == "") return "–"; if (x >= 1e9) return sprintf("%.2fG", x / 1e9)
                if (x >= 1e6) return sprintf("%.2fM", x / 1e6); if (x >= 1e4) return sprintf("%.1fk", x / 1e3); return sprintf("%.0f", x) }
            function f1(x) { return x == "" ? "–" : sprintf("%.1f", x) }
            function f2(x) { return x == "" ? "–" : sprintf("%.2f", x) }
            function m(k, name) { return ((k, name) in n) ? sum[k, name] / n[k, name] : "" }
            /^"ID"/ { for (i = 2; i <= NF; i += 2) col[$i] = i; hdr = 1; next }
            !hdr || !/^"/ { next }
            {
                kern = $col["Kernel Name"]; sub(/\(.*/, "", kern); sub(/^void /, "", kern)
                # one row per kernel and grid: a rung may launch one kernel with several grids
                # for one product (whole tiles, then a last round cut another way)
                grid = ("Grid Size" in col) ? $col["Grid Size"] : ""
                if (!((kern, grid) in seen_grid)) { seen_grid[kern, grid] = 1; grids[kern]++ }
                kern = kern SUBSEP grid
                name = $col["Metric Name"]; unit = $col["Metric Unit"]; v = num($col["Metric Value"])
                if (v == "") next
                if (name == "gpu__time_duration.sum") {   # to milliseconds
                    if (unit == "nsecond" || unit == "ns") v /= 1e6; else if (unit == "usecond" || unit == "us") v /= 1e3
                    else if (unit == "second" || unit == "s") v *= 1e3
                }
                if (!(kern in seen)) { seen[kern] = 1; order[++nk] = kern }
                sum[kern, name] += v; n[kern, name]++; metrics++
            }
            END {
                if (!metrics) { printf "profile_table.sh: %s: no metric values\n", file > "/dev/stderr"; exit 1 }
                split("long_scoreboard short_scoreboard mio_throttle lg_throttle barrier math_pipe_throttle not_selected wait dispatch_stall no_instruction", st, " ")
                for (i = 1; i <= nk; i++) {
                    k = order[i]
                    wf = m(k, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"); li = m(k, "smsp__sass_inst_executed_op_shared_ld.sum")
                    # the three largest stall reasons
                    for (j = 1; j <= 10; j++) { sv[j] = m(k, "smsp__average_warps_issue_stalled_" st[j] "_per_issue_active.ratio"); used[j] = 0 }
                    stalls = ""
                    for (r = 1; r <= 3; r++) {
                        best = 0
                        for (j = 1; j <= 10; j++) if (!used[j] && sv[j] != "" && (best == 0 || sv[j] > sv[best])) best = j
                        if (!best) break
                        used[best] = 1; stalls = stalls (stalls == "" ? "" : ", ") sprintf("%s %.2f", st[best], sv[best])
                    }
                    tp = m(k, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
                    split(k, kg, SUBSEP)
                    shown = kg[1] (grids[kg[1]] > 1 ? "` (grid " kg[2] ")" : "`")
                    printf "| %s | `%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, shown,
                        (m(k, "gpu__time_duration.sum") == "" ? "–" : sprintf("%.3f", m(k, "gpu__time_duration.sum"))),
                        f1(m(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed")),
                        f1(m(k, "l1tex__t_sector_hit_rate.pct")), f1(m(k, "lts__t_sector_hit_rate.pct")),
                        f2(m(k, "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio")),
                        f2(m(k, "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio")),
                        big(m(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")),
                        big(m(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")),
                        (wf != "" && li > 0 ? sprintf("%.2f", wf / li) : "–"),
                        f1(m(k, "sm__warps_active.avg.pct_of_peak_sustained_active")),
                        f1(m(k, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")),
                        f1(tp),
                        (m(k, "launch__registers_per_thread") == "" ? "–" : sprintf("%.0f", m(k, "launch__registers_per_thread"))),
                        (stalls == "" ? "–" : stalls)
                }
            }' "$csv"
    done
}

legend() {
    cat <<'TXT'
Columns (Nsight Compute metric names):
- time: `gpu__time_duration.sum`, one launch at M = N = K = 4096, clocks as found (`--clock-control none`)
- DRAM: `dram__throughput.avg.pct_of_peak_sustained_elapsed`
- L1 hit, L2 hit: `l1tex__t_sector_hit_rate.pct`, `lts__t_sector_hit_rate.pct`
- global sectors/req: `l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_{ld,st}.ratio`
  (4 is a fully used 128-byte warp access of 4-byte elements; 32 is one sector per lane)
- smem conflicts: `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum`
- smem ld wavefronts/inst: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` /
  `smsp__sass_inst_executed_op_shared_ld.sum` (1 for a conflict-free 32-bit load; an LDS.128
  is served per half-warp, so 2 at best, more when a half-warp reads over 128 distinct bytes)
- occupancy: `sm__warps_active.avg.pct_of_peak_sustained_active`
- FMA pipe: `sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active`
- tensor pipe: `sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active`, where
  the GPU's ncu has it (–: not measured): `mma.sync` (HMMA) and, on sm_90, `wgmma` (HGMMA); it
  also counts HFMA2.MMA, which ptxas uses to set registers to constants, hence the few tenths
  of a percent in FFMA rungs
- a kernel launched with more than one grid for one product has a row per grid; time is per
  launch, averaged over the launches profiled (`NCU_COUNT`, one by default)
- regs: `launch__registers_per_thread`
- top stalls: the three largest `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`
TXT
}

main() {
    local out="" stdout=0
    while (($# > 0)); do
        case $1 in
        -o)
            (($# >= 2)) || die "-o needs a file"
            out=$2
            shift 2
            ;;
        --stdout)
            stdout=1
            shift
            ;;
        -*) die "unknown option $1" ;;
        *) break ;;
        esac
    done
    (($# > 0)) || die "usage: scripts/profile_table.sh [-o OUT.md | --stdout] CSV..."
    # rungs in order, cuBLAS last
    local sorted=() f
    while IFS= read -r f; do sorted+=("$f"); done < <(printf '%s\n' "$@" | awk '{ print ($0 ~ /cublas[^\/]*$/ ? 1 : 0) "\t" $0 }' | sort -t "$(printf '\t')" -k1,1n -k2,2 | cut -f2-)
    set -- "${sorted[@]}"
    if ((stdout)); then
        rows "$@"
        return
    fi
    if [[ -z $out ]]; then
        out=$(cd "$(dirname "$1")/.." && pwd)/PROFILE.md
    fi
    local table gpu generated
    table=$(rows "$@")
    gpu=$(basename "$(cd "$(dirname "$out")" && pwd)")
    generated=$(
        echo "<!-- profile-table:start -->"
        echo "Written by \`scripts/profile_table.sh\` from \`profile/*.csv\` (\`make step=N profile\`, \`make step=cublas profile\`)."
        echo
        echo "$table"
        echo
        legend
        echo "<!-- profile-table:end -->"
    )
    # An existing page keeps what is written around the markers (the claims beside the
    # counters); only the table between them is replaced.
    if [[ -f $out ]] && grep -q '<!-- profile-table:start -->' "$out" && grep -q '<!-- profile-table:end -->' "$out"; then
        local tmp
        tmp=$(mktemp)
        awk -v gen="$generated" '
            /<!-- profile-table:start -->/ { print gen; skip = 1; next }
            /<!-- profile-table:end -->/ { skip = 0; next }
            !skip { print }' "$out" >"$tmp"
        mv "$tmp" "$out"
    else
        {
            echo "# Nsight Compute profile: $gpu"
            echo
            echo "$generated"
        } >"$out"
    fi
    echo "profile_table.sh: $# CSV file(s) -> $out" >&2
}

main "$@"
