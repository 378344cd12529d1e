#!/usr/bin/env bash
# test_plots.sh - scripts/plots.sh and scripts/readme_table.sh on tests/fixtures/bench.csv
# (and the shapes plot on tests/fixtures/shapes.csv beside it, labelled from shapes.txt).
#
# usage: tests/test_plots.sh     (no GPU needed; installs gnuplot-nox when run as root)
# Checks that every plot appears as a real PNG and SVG of the expected size with the
# fixture's series in it, that the README table holds the fixture's numbers, and that
# a missing, empty, header-only or malformed CSV, or a README without markers, is
# refused with a clear message and a non-zero exit.  Ends with "N passed, M failed".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly FIXTURE=$ROOT/tests/fixtures/bench.csv
readonly SHAPES_FIXTURE=$ROOT/tests/fixtures/shapes.csv # with shapes.txt, the set it labels
readonly PLOTS="gflops ladder last_vs_cublas clock_power precision accuracy shapes"
readonly WANT_W=1280 WANT_H=800 # scripts/plots.sh PLOT_W, PLOT_H
# shellcheck source=tests/lib/assert.sh
source "$ROOT/tests/lib/assert.sh"

# PLOTS_OPTIONAL=1 (set for a lent GPU machine, which has no gnuplot and no package
# registry: plots are drawn where the CSV is brought back) turns a missing gnuplot into a
# visible skip (exit 77) instead of a failure.  CI never sets it.
no_gnuplot() {
    echo "$1" >&2
    if [[ ${PLOTS_OPTIONAL:-0} == 1 ]]; then
        echo "SKIP: no gnuplot here (PLOTS_OPTIONAL=1): the plot test runs where gnuplot can be installed"
        exit 77
    fi
    exit 1
}

# shellcheck source=scripts/lib/gnuplot.sh
source "$ROOT/scripts/lib/gnuplot.sh"

# png_size FILE: "W H" from the IHDR chunk, or nothing if FILE is not a PNG.
png_size() {
    local sig
    sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
    [[ $sig == 89504e470d0a1a0a ]] || return 1
    [[ $(od -An -c -j12 -N4 "$1" | tr -d ' \n') == IHDR ]] || return 1
    od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d\n", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}

# svg_size FILE: "W H" from the root <svg> element, or nothing if there is none.
svg_size() {
    grep -q '</svg>' "$1" || return 1
    awk '
        !open && /<svg[ \t>]|<svg$/ { open = 1; tag = substr($0, index($0, "<svg")) ; if (tag ~ />/) { done = 1 } ; next_line = 1 }
        open && !done && !next_line { tag = tag " " $0; if ($0 ~ />/) done = 1 }
        { next_line = 0 }
        done {
            w = tag; sub(/.*[ \t]width="/, "", w); sub(/".*/, "", w)
            h = tag; sub(/.*[ \t]height="/, "", h); sub(/".*/, "", h)
            print w, h; exit
        }' "$1"
}

test_plots_render() {
    local out=$1 name size rc log
    run_capture log rc env PLOT_DATE=2026-01-02 CUDA_VERSION=13.0 "$ROOT/scripts/plots.sh" "$FIXTURE" "$out"
    check_exit "plots.sh renders the fixture" 0 "$rc"
    [[ $rc == 0 ]] || echo "$log" | head -n 20
    for name in $PLOTS; do
        size=$(png_size "$out/$name.png" 2>/dev/null || true)
        if [[ $size == "$WANT_W $WANT_H" ]]; then
            pass "$name.png is a ${WANT_W}x$WANT_H PNG"
        else
            fail "$name.png is a ${WANT_W}x$WANT_H PNG (got '${size:-not a PNG}')"
        fi
        size=$(svg_size "$out/$name.svg" 2>/dev/null || true)
        if [[ $size == "$WANT_W $WANT_H" ]]; then
            pass "$name.svg is a ${WANT_W}x$WANT_H SVG"
        else
            fail "$name.svg is a ${WANT_W}x$WANT_H SVG (got '${size:-no root <svg>}')"
        fi
        check_file_contains "$name.svg title names the GPU" "$out/$name.svg" "NVIDIA H100 80GB HBM3"
        check_file_contains "$name.svg title names CUDA and the date" "$out/$name.svg" "CUDA 13.0 · 2026-01-02"
    done
    # the series are really there, not an empty frame
    check_file_contains "gflops.svg has rung 01" "$out/gflops.svg" "01 naive"
    check_file_contains "gflops.svg has rung 11" "$out/gflops.svg" "11 warptile_db"
    check_file_contains "gflops.svg has cuBLAS" "$out/gflops.svg" "cuBLAS"
    check_file_contains "gflops.svg has the FFMA peak line" "$out/gflops.svg" "FFMA peak, measured (64131)"
    check_file_contains "ladder.svg labels rung 06's ratio" "$out/ladder.svg" "0.600"
    check_file_contains "ladder.svg marks the cut-short point" "$out/ladder.svg" "0.010*"
    check_file_contains "last_vs_cublas.svg names the last rung" "$out/last_vs_cublas.svg" "11 warptile_db"
    check_file_contains "clock_power.svg plots the SM clock" "$out/clock_power.svg" "rung: SM clock"
    check_file_contains "clock_power.svg plots GFLOP/s per watt" "$out/clock_power.svg" "GFLOP/s per watt"
    check_file_contains "precision.svg has the rung's errors" "$out/precision.svg" "rung 11 warptile_db"
    check_file_contains "precision.svg has cuBLAS's" "$out/precision.svg" "cuBLAS SGEMM"
    check_file_contains "precision.svg has the loop's" "$out/precision.svg" "sequential loop (1024 samples)"
    check_file_contains "shapes.svg: bars of the last rung" "$out/shapes.svg" "rung 11 cp_async"
    check_file_contains "shapes.svg: the other rung as points" "$out/shapes.svg" "10 texld"
    check_file_contains "shapes.svg: a shape label" "$out/shapes.svg" "2048×11008×4096"
    check_file_contains "shapes.svg: the padded shape from shapes.txt" "$out/shapes.svg" "4096×4096×4096 pad"
    check_file_contains "shapes.svg: explicit leading dimensions" "$out/shapes.svg" "1024×1024×65536 ld 65600,1040,1040"
    check_file_contains "shapes.svg: the last rung's ratio" "$out/shapes.svg" "1.093"
    check_file_contains "shapes.svg: marks the cut-short shape" "$out/shapes.svg" "0.874*"
    check_file_contains "shapes.svg: the cuBLAS line" "$out/shapes.svg" "cuBLAS = 1.0"
}

# Part II (rungs from 20): its own plot, with the anchors as reference lines when anchors.csv
# lies beside the CSV; the last-rung plots keep the last rung of Part I.
test_part2_plot() {
    local tmp=$1 log rc
    mkdir -p "$tmp/part2"
    { cat "$FIXTURE"; awk -F, 'BEGIN { OFS = "," } NR > 1 && $3 == 11 { $3 = 20; $4 = "tf32x3_mma"; print }' "$FIXTURE"; } \
        >"$tmp/part2/bench.csv"
    check "no Part II in the fixture: no part2 plot" test ! -e "$tmp/out/part2.png"
    run_capture log rc env PLOT_DATE=2026-01-02 CUDA_VERSION=13.0 "$ROOT/scripts/plots.sh" "$tmp/part2/bench.csv"
    check_exit "plots.sh with a Part II rung" 0 "$rc"
    check_file_contains "part2.svg has rung 20" "$tmp/part2/part2.svg" "rung 20 tf32x3_mma"
    check_not_contains "part2.svg: no anchors without anchors.csv" "$(cat "$tmp/part2/part2.svg")" "cuBLAS TF32"
    check_file_contains "last_vs_cublas.svg keeps Part I's last rung" "$tmp/part2/last_vs_cublas.svg" "11 warptile_db"
    printf '%s\n' "device,cc,M,N,K,cublas_gflops,cublas_err_max_u,cublas_err_rms,tf32_gflops,tf32_ratio,tf32_err_max_u,tf32_err_rms,x3_gflops,x3_ratio,x3_err_max_u,x3_err_rms" \
        "NVIDIA H100 80GB HBM3,90,1024,1024,1024,34000.0,4.6,5.7e-07,70000.0,2.0588,400.0,2.5e-04,60000.0,1.7647,12.0,8.0e-06" \
        "NVIDIA H100 80GB HBM3,90,4096,4096,4096,52000.0,6.0,1.1e-06,118000.0,2.2692,475.0,2.6e-04,117000.0,2.2500,15.8,9.6e-06" \
        >"$tmp/part2/anchors.csv"
    run_capture log rc env PLOT_DATE=2026-01-02 CUDA_VERSION=13.0 "$ROOT/scripts/plots.sh" "$tmp/part2/bench.csv"
    check_exit "plots.sh with anchors.csv" 0 "$rc"
    check_file_contains "part2.svg: the TF32 reference" "$tmp/part2/part2.svg" "cuBLAS TF32 (not FP32-accurate"
    check_file_contains "part2.svg: the composed reference" "$tmp/part2/part2.svg" "3xTF32 from 3 cuBLAS TF32 calls"
    check_contains "part2 among the plots written" "$log" "precision,accuracy,part2}.{png,svg}"
}

# The shapes plot: only with a shapes.csv, labels without shapes.txt, one rung, refusals.
test_shapes_plot() {
    local tmp=$1 log rc
    mkdir -p "$tmp/bare" "$tmp/onerung" "$tmp/badshapes"
    # a bench.csv alone: the four plots, no shapes plot
    cp "$FIXTURE" "$tmp/bare/bench.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/bare/bench.csv"
    check_exit "plots.sh without a shapes.csv" 0 "$rc"
    check "no shapes.csv, no shapes plot" test ! -e "$tmp/bare/shapes.png"
    check_not_contains "and no word of one" "$log" "shapes.csv"
    # shapes.csv given alone, no shapes.txt beside it: M×N×K labels, no leading dimensions
    cp "$SHAPES_FIXTURE" "$tmp/bare/shapes.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/bare/shapes.csv"
    check_exit "plots.sh on a shapes.csv" 0 "$rc"
    check_contains "draws the shapes plot alone" "$log" "$tmp/bare/shapes.{png,svg}"
    check "the shapes plot is there" test -s "$tmp/bare/shapes.svg"
    check_file_contains "labels without shapes.txt" "$tmp/bare/shapes.svg" "4096×4096×4096"
    check_not_contains "no leading dimensions without shapes.txt" "$(cat "$tmp/bare/shapes.svg")" "4096 pad"
    # one rung only: bars, no points
    awk -F, 'NR == 1 || $3 == 11' "$SHAPES_FIXTURE" >"$tmp/onerung/shapes.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/onerung/shapes.csv"
    check_exit "plots.sh on a one-rung shapes.csv" 0 "$rc"
    check_file_contains "one rung: its bars" "$tmp/onerung/shapes.svg" "rung 11 cp_async"
    check_not_contains "one rung: no other rung" "$(cat "$tmp/onerung/shapes.svg")" "texld"
    # a malformed shapes.csv beside a good bench.csv fails make plots, naming the file
    cp "$FIXTURE" "$tmp/badshapes/bench.csv"
    sed '3s/,PASS,/,MAYBE,/' "$SHAPES_FIXTURE" >"$tmp/badshapes/shapes.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/badshapes/bench.csv"
    check_exit "plots.sh refuses a malformed shapes.csv" 1 "$rc"
    check_contains "and names it" "$log" "$tmp/badshapes/shapes.csv:3: check must be PASS or FAIL"
    check "no shapes plot from it" test ! -e "$tmp/badshapes/shapes.png"

    # rows beyond the set (--random): their own plot by work, not bars; none without them
    mkdir -p "$tmp/random" "$tmp/norandom"
    cp "$ROOT/tests/fixtures/shapes.txt" "$tmp/norandom/shapes.txt"
    cp "$SHAPES_FIXTURE" "$tmp/norandom/shapes.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/norandom/shapes.csv"
    check_exit "plots.sh on the set alone" 0 "$rc"
    check "the set alone: no random plot" test ! -e "$tmp/norandom/random.svg"
    cp "$ROOT/tests/fixtures/shapes.txt" "$tmp/random/shapes.txt"
    echo "shapes: shapes.txt, 5 shapes and 2 random (--random 2 --seed 9)" >"$tmp/random/run.txt"
    awk -F, -v OFS=, '{ print } NR > 1 && !done[$3]++ {
            $5 = 100 + $3; $6 = 200; $7 = 300; print; $5 = 5000; $6 = 6000; $7 = 700; print }' \
        "$SHAPES_FIXTURE" >"$tmp/random/shapes.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/random/shapes.csv"
    check_exit "plots.sh with random shapes" 0 "$rc"
    check_contains "draws both" "$log" "$tmp/random/{shapes,random}.{png,svg}"
    check_file_contains "the random plot names its seed" "$tmp/random/random.svg" "--random 2 --seed 9"
    check_file_contains "and each rung" "$tmp/random/random.svg" "10 texld"
    check_not_contains "the random shapes are no bars" "$(cat "$tmp/random/shapes.svg")" "5000×6000×700"
    check_file_contains "the set's bars stay" "$tmp/random/shapes.svg" "4096×4096×4096"
}

test_plot_options() {
    local tmp=$1 log rc
    run_capture log rc env PEAK_GFLOPS=66908 "$ROOT/scripts/plots.sh" "$FIXTURE" "$tmp/peak"
    check_exit "plots.sh with PEAK_GFLOPS" 0 "$rc"
    check_file_contains "PEAK_GFLOPS moves the ceiling line" "$tmp/peak/gflops.svg" "FFMA peak, measured (66908)"
    # no telemetry: the clock plot says so instead of failing or drawing empty axes
    awk -F, -v OFS=, 'NR > 1 { for (i = 21; i <= 28; i++) $i = "" } 1' "$FIXTURE" >"$tmp/notel.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/notel.csv" "$tmp/notel"
    check_exit "plots.sh without telemetry" 0 "$rc"
    check_file_contains "clock_power says there is no telemetry" "$tmp/notel/clock_power.svg" "No clock and power telemetry"
    # a CSV without the ladder size falls back to the largest size
    awk -F, 'NR == 1 || $5 != 4096' "$FIXTURE" >"$tmp/no4096.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/no4096.csv" "$tmp/no4096"
    check_exit "plots.sh without a 4096 point" 0 "$rc"
    check_contains "the ladder falls back to 3072 and says so" "$log" "the ladder uses 3072"
    check_file_contains "ladder title shows 3072" "$tmp/no4096/ladder.svg" "M = N = K = 3072"
    # speed against accuracy: a rung within 20% of another's speed and error shares its label
    # (numbered at the faster), one further off keeps its own
    awk -F, -v OFS=, '{ print } NR > 1 && $3 == 11 { $3 = 20; $14 *= 2; print; $3 = 21; $14 *= 1.05; print
            $3 = 22; $14 *= 1.5; print }' "$FIXTURE" >"$tmp/close.csv"
    run_capture log rc "$ROOT/scripts/plots.sh" "$tmp/close.csv" "$tmp/close"
    check_exit "plots.sh with two rungs close together" 0 "$rc"
    check_file_contains "close points share one label" "$tmp/close/accuracy.svg" "<text>20,21</text>"
    check_not_contains "and have none apart" "$(cat "$tmp/close/accuracy.svg")" "<text>20</text>"
    check_file_contains "a point further off keeps its own" "$tmp/close/accuracy.svg" "<text>22</text>"
}

# refused CSV NAME CSV NEEDLE: plots.sh and readme_table.sh both fail with NEEDLE, and draw nothing.
refused() {
    local what=$1 csv=$2 needle=$3 tmp=$4 log rc
    run_capture log rc "$ROOT/scripts/plots.sh" "$csv" "$tmp/out_$what"
    check_exit "plots.sh refuses a $what CSV" nonzero "$rc"
    check_contains "plots.sh explains the $what CSV" "$log" "$needle"
    if compgen -G "$tmp/out_$what/*.png" >/dev/null || compgen -G "$tmp/out_$what/*.svg" >/dev/null; then
        fail "plots.sh leaves no image for a $what CSV"
    else
        pass "plots.sh leaves no image for a $what CSV"
    fi
    cp "$tmp/README.md" "$tmp/README.refused.md"
    run_capture log rc "$ROOT/scripts/readme_table.sh" "$csv" "$tmp/README.refused.md"
    check_exit "readme_table.sh refuses a $what CSV" nonzero "$rc"
    check_contains "readme_table.sh explains the $what CSV" "$log" "$needle"
    check "readme_table.sh leaves README alone on a $what CSV" cmp -s "$tmp/README.md" "$tmp/README.refused.md"
}

test_bad_csvs() {
    local tmp=$1
    : >"$tmp/empty.csv"
    sed '1s/,ratio,/,ratio_to_cublas,/' "$FIXTURE" >"$tmp/badheader.csv"
    head -n 1 "$FIXTURE" >"$tmp/headeronly.csv"
    { head -n 3 "$FIXTURE"; echo "NVIDIA H100 80GB HBM3,90,1,naive,512"; } >"$tmp/shortrow.csv"
    sed '3s/,PASS,/,MAYBE,/' "$FIXTURE" >"$tmp/badcheck.csv"
    refused empty "$tmp/empty.csv" "empty file" "$tmp"
    refused malformed "$tmp/badheader.csv" "header does not match the harness schema" "$tmp"
    refused header-only "$tmp/headeronly.csv" "no data rows" "$tmp"
    refused short-row "$tmp/shortrow.csv" "5 fields, expected 36" "$tmp"
    refused bad-check "$tmp/badcheck.csv" "check must be PASS or FAIL" "$tmp"
    refused missing "$tmp/nonexistent.csv" "no such file" "$tmp"
}

test_readme_table() {
    local tmp=$1 readme=$1/README.md log rc before
    run_capture log rc env PLOT_DATE=2026-01-02 CUDA_VERSION=13.0 "$ROOT/scripts/readme_table.sh" "$FIXTURE" "$readme"
    check_exit "readme_table.sh writes the table" 0 "$rc"
    check_file_contains "table row: rung 01 (cut short)" "$readme" '| 01 | naive | 520\* | 0.015 | 0.010\* | 0.010\* | - | 2.50 | 1.1e-07 |'
    check_file_contains "table row: rung 02" "$readme" '| 02 | coalesced | 6,143 | 0.120 | 0.120 | 0.120 | - | 2.50 | 1.1e-07 |'
    check_file_contains "table row: rung 06" "$readme" '| 06 | vectorized | 30,713 | 0.600 | 0.600 | 0.600 | - | 2.50 | 1.1e-07 |'
    check_file_contains "table row: rung 11" "$readme" '| 11 | warptile_db | 49,653 | 0.970 | 0.970 | 0.970 | - | 2.50 | 1.1e-07 |'
    check_file_contains "table row: cuBLAS" "$readme" '| | cuBLAS | 51,189 | 1.000 | 1.000 | 1.000 | 1.000 | 2.40 | 1.0e-07 |'
    check_file_contains "caption names the GPU, CUDA and date" "$readme" "NVIDIA H100 80GB HBM3 (CUDA 13.0, 2026-01-02)"
    check_file_contains "caption gives the size" "$readme" "M = N = K = 4096"
    check_file_contains "the cut-short footnote" "$readme" "cut short by the time budget"
    check_file_contains "text before the markers is kept" "$readme" "Intro paragraph."
    check_file_contains "text after the markers is kept" "$readme" "Closing paragraph."
    check_not_contains "the old table is gone" "$(cat "$readme")" "old table"
    before=$(cksum <"$readme")
    env PLOT_DATE=2026-01-02 CUDA_VERSION=13.0 "$ROOT/scripts/readme_table.sh" "$FIXTURE" "$readme" >/dev/null 2>&1
    check "readme_table.sh is idempotent" test "$before" == "$(cksum <"$readme")"

    printf '# no markers here\n' >"$tmp/nomarkers.md"
    run_capture log rc "$ROOT/scripts/readme_table.sh" "$FIXTURE" "$tmp/nomarkers.md"
    check_exit "README without markers is refused" nonzero "$rc"
    check_contains "and the message names the markers" "$log" "<!-- bench-table:start -->"
}

TMP_DIR=""
cleanup() {
    if [[ -n $TMP_DIR ]]; then rm -rf "$TMP_DIR"; fi
}

# Redrawing changes nothing: every results/<gpu>/bench.csv in the tree drawn again (into a
# scratch folder: the CSV's own folder gives the titles, the anchors and the shape set) gives
# the plots that are there byte for byte, and the README table written again from the CSV
# `make readme-table` takes (the newest) gives README.md as it is (on a copy of README.md and
# results/, so that its links are relative to the same folder).
test_redraw_changes_nothing() {
    local tmp=$1 csv gpu out f log rc drawn=0 newest=""
    for csv in "$ROOT"/results/*/bench.csv; do
        [[ -f $csv ]] || continue
        if [[ -z $newest || $csv -nt $newest ]]; then newest=$csv; fi
        gpu=$(basename "$(dirname "$csv")")
        out=$tmp/redraw/$gpu
        mkdir -p "$out"
        rc=0
        log=$("$ROOT/scripts/plots.sh" "$csv" "$out" 2>&1) || rc=$?
        [[ $rc == 0 ]] || echo "$log" | tail -n 3
        check_exit "redraw $gpu: plots.sh" 0 "$rc"
        for f in "$out"/*.png "$out"/*.svg; do
            [[ -f $f ]] || continue
            check "redraw $gpu: $(basename "$f") as committed" \
                cmp -s "$f" "$(dirname "$csv")/$(basename "$f")"
            drawn=$((drawn + 1))
        done
    done
    check "redraw: some plot was drawn" test "$drawn" -gt 0
    mkdir -p "$tmp/copy"
    cp -p "$ROOT/README.md" "$tmp/copy/README.md"
    cp -rp "$ROOT/results" "$tmp/copy/results"
    rc=0
    "$ROOT/scripts/readme_table.sh" "$tmp/copy/${newest#"$ROOT"/}" "$tmp/copy/README.md" \
        >/dev/null 2>&1 || rc=$?
    check_exit "redraw: readme_table.sh" 0 "$rc"
    check "redraw: the README table as committed" cmp -s "$tmp/copy/README.md" "$ROOT/README.md"
}

# The titles' CUDA, driver and date come from the run.txt beside the CSV (sweep.sh writes it),
# before an older sweep's sweep.log.
test_run_txt_meta() {
    local tmp=$1 readme=$1/meta/README.md
    mkdir -p "$tmp/meta"
    cp "$FIXTURE" "$tmp/meta/bench.csv"
    printf 'gpu: NVIDIA H100 80GB HBM3\ndriver: 111.22\ncuda: 12.9\ndate: 2025-05-05\n' >"$tmp/meta/run.txt"
    printf 'driver: 999.99\ncuda: 1.0\ndate: 1999-01-01\n' >"$tmp/meta/sweep.log"
    printf '<!-- bench-table:start -->\n<!-- bench-table:end -->\n' >"$readme"
    env -u PLOT_DATE -u CUDA_VERSION -u DRIVER_VERSION "$ROOT/scripts/readme_table.sh" \
        "$tmp/meta/bench.csv" "$readme" >/dev/null 2>&1
    check_file_contains "run.txt gives the caption's CUDA, driver and date" "$readme" \
        "(CUDA 12.9, driver 111.22, 2025-05-05)"
    rm "$tmp/meta/run.txt"
    env -u PLOT_DATE -u CUDA_VERSION -u DRIVER_VERSION "$ROOT/scripts/readme_table.sh" \
        "$tmp/meta/bench.csv" "$readme" >/dev/null 2>&1
    check_file_contains "without it, an older sweep.log" "$readme" "(CUDA 1.0, driver 999.99, 1999-01-01)"
}

main() {
    local tmp
    ensure_gnuplot || no_gnuplot "the plot test needs gnuplot"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_plots.XXXXXX")
    TMP_DIR=$tmp
    trap cleanup EXIT
    printf '# Title\n\nIntro paragraph.\n\n<!-- bench-table:start -->\nold table\n<!-- bench-table:end -->\n\nClosing paragraph.\n' >"$tmp/README.md"
    test_bad_csvs "$tmp"
    test_plots_render "$tmp/out"
    test_plot_options "$tmp"
    test_shapes_plot "$tmp"
    test_part2_plot "$tmp"
    test_readme_table "$tmp"
    test_redraw_changes_nothing "$tmp"
    test_run_txt_meta "$tmp"
    finish
}

main "$@"
