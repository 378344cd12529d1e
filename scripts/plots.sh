#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# plots.sh - draw the benchmark plots of a bench CSV with gnuplot (no GPU needed).
#
# usage: scripts/plots.sh [CSV [OUTDIR]]
#   CSV     a bench.csv written by the harness (default: every results/*/bench.csv), or a
#           shapes.csv (then the shapes plot alone)
#   OUTDIR  where the plots go (default: the CSV's folder)
# Writes, as PNG (pngcairo) and SVG, into OUTDIR:
#   gflops          GFLOP/s against size: every rung, cuBLAS and the measured FFMA peak
#   ladder          each rung's ratio to cuBLAS at LADDER_SIZE, as bars
#   last_vs_cublas  the last rung's ratio to cuBLAS against size (the last of Part I, the
#                   FFMA ladder, when the CSV has it; so for clock_power and precision)
#   part2           when the CSV has Part II's rungs (from PART2_FIRST): their ratio to
#                   cuBLAS SGEMM against size, with cuBLAS TF32 and 3xTF32 from cuBLAS as
#                   reference lines when anchors.csv lies beside the CSV
#   clock_power     SM clock and board power against size for the last rung and
#                   cuBLAS, and GFLOP/s per watt
#   precision       the largest error against FP64 (in u = 2^-24 of |A||B|) against size,
#                   for the last rung, cuBLAS and a sequential float loop (sampled)
#   accuracy        speed against accuracy at LADDER_SIZE: each rung's GFLOP/s against its
#                   largest error against FP64, beside cuBLAS SGEMM and, when anchors.csv
#                   lies beside the CSV, cuBLAS TF32 and 3xTF32 composed from cuBLAS
#   shapes          when a shapes.csv lies beside the CSV (make all-bench's shape set): the
#                   last rung's ratio to cuBLAS on each shape, as bars, other rungs in it as
#                   points; labelled M×N×K, with the leading dimensions from the shape set
#                   copied beside it (shapes.txt: "pad" or "ld lda,ldb,ldc") when it is there
# Environment:
#   PEAK_GFLOPS   the ceiling line (default 64131: FFMA peak measured on H100/H200,
#                 shared/ANCHORS.md)
#   LADDER_SIZE   the size of the ladder bars (default 4096; if no rung has it, the
#                 largest size present, said on stderr)
#   CUDA_VERSION, PLOT_DATE, DRIVER_VERSION  for the titles; by default read from
#                 the CSV's run.txt (written by sweep.sh), else nvcc --version and the
#                 CSV's modification date
#   GNUPLOT       the gnuplot to run (default gnuplot); NVCC (default nvcc)
# Exit: 0, or 1 with one line on stderr (missing, empty or malformed CSV, no gnuplot,
# gnuplot errors or warnings: an empty plot is never left behind silently).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly PLOT_DIR=$ROOT/plots
readonly PLOT_W=1280 PLOT_H=800
readonly PLOTS="gflops ladder last_vs_cublas clock_power precision accuracy"
readonly PART2_FIRST=20 # rungs from here on are Part II (tensor cores): plotted apart
# shellcheck source=lib/bench_csv.sh
source "$ROOT/scripts/lib/bench_csv.sh"
# shellcheck source=lib/gnuplot.sh
source "$ROOT/scripts/lib/gnuplot.sh"

die() {
    echo "plots.sh: $*" >&2
    exit 1
}

# prepare_data CSV DIR: gnuplot-ready files in DIR (see the comments in the awk).
prepare_data() {
    local csv=$1 dir=$2 ladder_size=$3
    # 1. square rows only, the last row of each (step, size) wins (a CSV the harness
    #    appended to twice keeps the newer run); one line per point, sorted.
    awk -F, 'NR > 1 && $5 == $6 && $6 == $7 {
            sub(/\r$/, "")
            key = $3 " " $5
            if (!(key in row)) order[++n] = key
            row[key] = $0
        }
        function t(x) { return (x == "" || tolower(x) ~ /nan/) ? "NaN" : x }
        END {
            for (i = 1; i <= n; i++) {
                split(row[order[i]], f, ",")
                gpw = (t(f[23]) == "NaN" || f[23] + 0 <= 0) ? "NaN" : f[14] / f[23]
                cgpw = (t(f[27]) == "NaN" || f[27] + 0 <= 0) ? "NaN" : f[17] / f[27]
                # step size gflops cublas_gflops ratio cut sm power csm cpower gpw cgpw slug,
                # then the largest errors against FP64 in u: the rung, cuBLAS, the sequential loop
                print f[3], f[5], f[14], f[17], f[18], f[9], t(f[21]), t(f[23]), t(f[26]), t(f[27]), gpw, cgpw, f[4], t(f[30]), t(f[32]), t(f[34])
            }
        }' "$csv" | sort -k1,1n -k2,2n >"$dir/points.txt"
    [[ -s $dir/points.txt ]] || die "$csv: no square (M = N = K) points to plot"

    # 2. one series file per rung, cuBLAS per size (mean over the rungs' processes),
    #    the ladder at one size, and the last rung's ratio and telemetry.
    awk -v dir="$dir" -v want="$ladder_size" -v part2="$PART2_FIRST" '
        { step[$1] = $13; size[$2] = 1
          if ($1 < part2) last = ($1 > last) ? $1 : last; else top = ($1 > top) ? $1 : top
          cb_sum[$2] += $4; cb_n[$2]++ }
        { all[NR] = $0 }
        END {
            if (last == "") last = top # Part II alone: its last rung
            ls = (want in size) ? want : 0
            if (!ls) { for (s in size) if (s + 0 > ls) ls = s + 0
                       printf "plots.sh: no point at %d, the ladder uses %d\n", want, ls > "/dev/stderr" }
            for (i = 1; i <= NR; i++) {
                split(all[i], f, " ")
                file = sprintf("%s/s%02d.dat", dir, f[1])
                if (!(file in started)) { started[file] = 1
                    printf "size \"%02d %s\"\n", f[1], f[13] > file
                    series = series " " file; steps = steps " " f[1] }
                print f[2], f[3] > file
                if (f[2] == ls) {
                    printf "%d \"%02d %s\" %s %d\n", f[1], f[1], f[13], f[5], f[6] > (dir "/ladder.dat")
                    # step gflops err_u: the speed-against-accuracy points (an error of 0, or
                    # none, cannot sit on a log axis: left out)
                    if (f[14] != "NaN" && f[14] + 0 > 0) print f[1], f[3], f[14] > (dir "/accuracy.dat")
                    if (f[15] != "NaN" && f[15] + 0 > 0) { cb_err_sum += f[15]; cb_err_n++ }
                }
                if (f[1] >= part2) { # Part II: the ratio to cuBLAS SGEMM, a file per rung
                    p2 = sprintf("%s/p%02d.dat", dir, f[1])
                    if (!(p2 in p2_started)) { p2_started[p2] = 1
                        printf "size \"rung %02d %s\"\n", f[1], f[13] > p2
                        p2_files = p2_files " " p2; p2_steps = p2_steps " " f[1] }
                    print f[2], f[5] > p2
                }
                if (f[1] == last) {
                    print f[2], f[5], f[3], f[4], f[7], f[8], f[9], f[10], f[11], f[12], f[14], f[15], f[16] > (dir "/last.dat")
                    for (c = 7; c <= 10; c++) if (f[c] != "NaN") seen[c] = 1
                    if (f[7] != "NaN") { clk_lo = (clk_lo == "" || f[7] < clk_lo) ? f[7] : clk_lo; clk_hi = (f[7] > clk_hi) ? f[7] : clk_hi }
                    if (f[9] != "NaN") { clk_lo = (clk_lo == "" || f[9] < clk_lo) ? f[9] : clk_lo; clk_hi = (f[9] > clk_hi) ? f[9] : clk_hi }
                }
            }
            if (cb_err_n) printf "%.1f %.4g\n", cb_sum[ls] / cb_n[ls], cb_err_sum / cb_err_n > (dir "/accuracy_cublas.dat")
            for (s in size) printf "%d %.1f\n", s, cb_sum[s] / cb_n[s] | ("sort -n > " dir "/cublas.dat")
            close("sort -n > " dir "/cublas.dat")
            # the clock panel needs every curve: telemetry is all there or it is not drawn
            tel = (7 in seen) && (8 in seen) && (9 in seen) && (10 in seen)
            if (tel && clk_hi - clk_lo < 100) { mid = (clk_hi + clk_lo) / 2; clk_lo = mid - 50; clk_hi = mid + 50 }
            printf "series %s\nsteps %s\nlast_step %d\nlast_slug %s\nladder_size %d\nhas_tel %d\nclock_lo %d\nclock_hi %d\n", \
                substr(series, 2), substr(steps, 2), last, step[last], ls, tel, clk_lo - 20, clk_hi + 20 > (dir "/vars.txt")
            printf "part2_files %s\npart2_steps %s\n", substr(p2_files, 2), substr(p2_steps, 2) > (dir "/vars.txt")
        }' "$dir/points.txt"
    label_accuracy "$dir"
}

# label_accuracy DIR: a fourth column for DIR/accuracy.dat, the label beside each point ("-":
# none). The first four rungs and those from the last FFMA rung on are numbered; points of
# those within 20% in GFLOP/s and 50% in error of a higher one share one label, at the highest
# ("25,26"), so that no two labels overlap.
label_accuracy() {
    local dir=$1 last
    [[ -s $dir/accuracy.dat ]] || return 0
    last=$(awk '$1 == "last_step" { print $2 }' "$dir/vars.txt")
    sort -k2,2gr "$dir/accuracy.dat" | awk -v last="$last" '
        { step[NR] = $1; gf[NR] = $2; err[NR] = $3; lab[NR] = "-"
          if ($1 > 4 && $1 < last) next
          for (g = 1; g <= groups; g++) # the group whose top point this one sits under
              if (gf[top[g]] <= 1.2 * $2 && err[top[g]] <= 1.5 * $3 && $3 <= 1.5 * err[top[g]]) break
          if (g > groups) { top[++groups] = NR; members[g] = "" }
          members[g] = members[g] " " $1 }
        END {
            for (g = 1; g <= groups; g++) { # the group numbered in ascending order, at its top
                n = split(members[g], m, " "); text = ""
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (m[j] + 0 < m[i] + 0) { t = m[i]; m[i] = m[j]; m[j] = t }
                for (i = 1; i <= n; i++) text = text (i > 1 ? "," : "") sprintf("%02d", m[i])
                lab[top[g]] = text
            }
            for (i = 1; i <= NR; i++) print step[i], gf[i], err[i], lab[i]
        }' | sort -k1,1n >"$dir/accuracy.lab" && mv "$dir/accuracy.lab" "$dir/accuracy.dat"
}

# prepare_anchors CSV DIR: DIR/anchors.dat (size tf32_ratio x3_ratio, square rows, the mean
# per size) from the anchors.csv beside CSV; prints 1 when there is one, else 0.
prepare_anchors() {
    local anchors
    anchors=$(dirname "$1")/anchors.csv
    if [[ ! -s $anchors ]]; then
        echo 0
        return
    fi
    awk -F, 'NR > 1 && $3 == $4 && $4 == $5 { t[$3] += $10; x[$3] += $14; n[$3]++ }
        END { for (s in n) printf "%d %.4f %.4f\n", s, t[s] / n[s], x[s] / n[s] }' "$anchors" |
        sort -n >"$2/anchors.dat"
    if [[ -s $2/anchors.dat ]]; then echo 1; else echo 0; fi
}

# prepare_accuracy_anchors CSV DIR SIZE: DIR/accuracy_anchors.dat (tf32_gflops tf32_err
# x3_gflops x3_err, the means at M = N = K = SIZE) from the anchors.csv beside CSV; prints 1
# when there is such a row, else 0.
prepare_accuracy_anchors() {
    local anchors
    anchors=$(dirname "$1")/anchors.csv
    if [[ ! -s $anchors ]]; then
        echo 0
        return
    fi
    awk -F, -v s="$3" 'NR > 1 && $3 == s && $4 == s && $5 == s && $11 > 0 && $15 > 0 {
            tg += $9; te += $11; xg += $13; xe += $15; n++ }
        END { if (n) printf "%.1f %.4g %.1f %.4g\n", tg / n, te / n, xg / n, xe / n }' \
        "$anchors" >"$2/accuracy_anchors.dat"
    if [[ -s $2/accuracy_anchors.dat ]]; then echo 1; else echo 0; fi
}

# gp_string S: S as a gnuplot single-quoted string.
gp_string() {
    printf "'%s'" "${1//\'/\'\'}"
}

# var DATA KEY: a value prepare_data left in DATA/vars.txt.
var() {
    awk -v key="$2" '$1 == key { sub(/^[^ ]* /, ""); print; exit }' "$1/vars.txt"
}

# bench_vars DATA: the gnuplot variables of the bench plots, from DATA/vars.txt.
bench_vars() {
    local data=$1
    printf '%s; ' "series=$(gp_string "$(var "$data" series)")" \
        "steps=$(gp_string "$(var "$data" steps)")" "peak=${PEAK_GFLOPS:-64131}" \
        "ladder_size=$(var "$data" ladder_size)" "has_tel=$(var "$data" has_tel)" \
        "clock_lo=$(var "$data" clock_lo)" "clock_hi=$(var "$data" clock_hi)"
}

# render NAME FMT DATA OUTDIR SUBTITLE VARS: one plot in one format; VARS holds the
# plot's own gnuplot assignments.
render() {
    local name=$1 fmt=$2 data=$3 outdir=$4 subtitle=$5 vars=$6
    local out=$outdir/$name.$fmt log=$data/gnuplot.$name.$fmt.log last_label
    last_label=$(printf '%02d %s' "$(var "$data" last_step)" "$(var "$data" last_slug)")
    if ! "${GNUPLOT:-gnuplot}" \
        -e "fmt=$(gp_string "$fmt"); out=$(gp_string "$out"); W=$PLOT_W; H=$PLOT_H" \
        -e "plotdir=$(gp_string "$PLOT_DIR"); data=$(gp_string "$data")" \
        -e "subtitle=$(gp_string "$subtitle"); last_label=$(gp_string "$last_label")" \
        -e "$vars" \
        "$PLOT_DIR/$name.gp" 2>"$log"; then
        rm -f "$out"
        cat "$log" >&2
        die "gnuplot failed on plots/$name.gp ($fmt)"
    fi
    if grep -qi 'warning' "$log"; then
        rm -f "$out"
        cat "$log" >&2
        die "gnuplot warned on plots/$name.gp ($fmt); refusing a possibly empty plot"
    fi
    [[ -s $out ]] || die "gnuplot wrote no $out"
}

# prepare_shapes CSV SET DIR: gnuplot-ready files in DIR for the shapes plot, SET (the
# shape set the CSV was measured on, or "") giving the leading dimensions of the labels.
prepare_shapes() {
    local csv=$1 set=$2 dir=$3
    # shapes.dat: index "label" ratio cut_short of the last rung, one line per shape in the
    # order measured (NaN where it has none); rNN.dat: index ratio of every other rung.
    awk -F, -v dir="$dir" -v set="$set" '
        BEGIN {
            n = 0; top = 0
            # the n-th "M N K" line of the set labels the n-th M x N x K row of each rung
            while (set != "" && (getline line < set) > 0) {
                sub(/\r$/, "", line)
                sub(/#.*/, "", line)
                nf = split(line, f, " ")
                if (nf < 3) continue
                key = f[1] " " f[2] " " f[3]
                ld[key, ++lines[key]] = (nf == 4) ? " " f[4] : (nf == 6) ? " ld " f[4] "," f[5] "," f[6] : ""
            }
        }
        NR > 1 && NF {
            sub(/\r$/, "")
            key = $5 " " $6 " " $7
            nth = ++seen[$3, key]
            # a row beyond the set (--random) goes to the random plot, by its work
            if (set != "" && nth > lines[key] + 0) {
                file = sprintf("%s/random%02d.dat", dir, $3)
                if (!(file in rfile)) {
                    rfile[file] = 1; rfiles = rfiles " " file; rsteps = rsteps " " $3
                    printf "index \"%02d %s\"\n", $3, $4 > file
                }
                print 2 * $5 * $6 * $7, $18 > file
                rtop = ($18 + 0 > rtop) ? $18 + 0 : rtop
                next
            }
            if (!((key, nth) in idx)) { idx[key, nth] = n; label[n++] = $5 "×" $6 "×" $7 ld[key, nth] }
            if (!($3 in slug)) { slug[$3] = $4; order[++rungs] = $3 }
            last = ($3 + 0 > last + 0) ? $3 : last
            ratio[$3, idx[key, nth]] = $18; cut[$3, idx[key, nth]] = $9
            top = ($18 + 0 > top) ? $18 + 0 : top
        }
        END {
            for (i = 0; i < n; i++)
                printf "%d \"%s\" %s %d\n", i, label[i], ((last, i) in ratio) ? ratio[last, i] : "NaN", cut[last, i] + 0 > (dir "/shapes.dat")
            for (r = 1; r <= rungs; r++) {
                s = order[r]
                if (s == last) continue
                file = sprintf("%s/r%02d.dat", dir, s)
                printf "index \"%02d %s\"\n", s, slug[s] > file
                for (i = 0; i < n; i++) if ((s, i) in ratio) print i, ratio[s, i] > file
                others = others " " file; steps = steps " " s
            }
            printf "last_step %d\nlast_slug %s\nothers %s\nother_steps %s\nshapes %d\ntop %s\n", \
                last, slug[last], substr(others, 2), substr(steps, 2), n, top > (dir "/vars.txt")
            printf "random_files %s\nrandom_steps %s\nrandom_top %s\n", substr(rfiles, 2), \
                substr(rsteps, 2), rtop + 0 >> (dir "/vars.txt")
        }' "$csv"
}

# subtitle_of CSV: "GPU · CUDA x · driver y · date" for the titles.
subtitle_of() {
    local csv=$1 csvdir device cuda date driver
    csvdir=$(dirname "$csv")
    device=$(bench_device "$csv")
    cuda=$(bench_title_meta cuda "${CUDA_VERSION:-}" "$csvdir" "$(bench_cuda_version)")
    date=$(bench_title_meta date "${PLOT_DATE:-}" "$csvdir" "$(date -r "$csv" +%F)")
    driver=$(bench_title_meta driver "${DRIVER_VERSION:-}" "$csvdir" "")
    printf '%s\n' "$device · CUDA ${cuda:-unknown}${driver:+ · driver $driver} · $date"
}

# random_words CSV: "--random N --seed S" as run.txt beside CSV names them, or "--random".
random_words() {
    local run
    run=$(dirname "$1")/run.txt
    if [[ -r $run ]] && grep -qo -- '--random [0-9]* --seed [0-9]*' "$run"; then
        grep -o -- '--random [0-9]* --seed [0-9]*' "$run" | head -n 1
    else
        echo "--random"
    fi
}

# plot_shapes CSV OUTDIR: the shapes plot of a shapes.csv (labels from shapes.txt beside it).
plot_shapes() {
    local csv=$1 outdir=$2 set data vars fmt
    bench_csv_check "$csv" || die "cannot plot $csv"
    set=$(dirname "$csv")/shapes.txt
    [[ -r $set ]] || set=""
    mkdir -p "$outdir"
    data=$(mktemp -d "${TMPDIR:-/tmp}/plots.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$data'" EXIT
    prepare_shapes "$csv" "$set" "$data"
    vars="others=$(gp_string "$(var "$data" others)"); other_steps=$(gp_string "$(var "$data" other_steps)")"
    vars="$vars; last_step=$(var "$data" last_step); shapes=$(var "$data" shapes); top=$(var "$data" top)"
    for fmt in png svg; do
        render shapes "$fmt" "$data" "$outdir" "$(subtitle_of "$csv")" "$vars"
    done
    local drawn=shapes random_files
    random_files=$(var "$data" random_files)
    if [[ -n $random_files ]]; then # the shapes after the set (--random): apart, by their work
        vars="random_files=$(gp_string "$random_files"); random_steps=$(gp_string "$(var "$data" random_steps)")"
        vars="$vars; random_top=$(var "$data" random_top); random_words=$(gp_string "$(random_words "$csv")")"
        for fmt in png svg; do
            render random "$fmt" "$data" "$outdir" "$(subtitle_of "$csv")" "$vars"
        done
        drawn="{shapes,random}"
    else
        rm -f "$outdir"/random.png "$outdir"/random.svg
    fi
    rm -rf "$data"
    trap - EXIT
    echo "plots.sh: $csv -> $outdir/$drawn.{png,svg}"
}

# plot_csv CSV OUTDIR: the bench plots, then the shapes plot when shapes.csv lies beside CSV.
plot_csv() {
    local csv=$1 outdir=$2 data subtitle vars name fmt
    if [[ $(basename "$csv") == shapes.csv ]]; then
        plot_shapes "$csv" "$outdir"
        return
    fi
    bench_csv_check "$csv" || die "cannot plot $csv"
    mkdir -p "$outdir"
    data=$(mktemp -d "${TMPDIR:-/tmp}/plots.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$data'" EXIT
    prepare_data "$csv" "$data" "${LADDER_SIZE:-4096}"
    subtitle=$(subtitle_of "$csv")
    vars=$(bench_vars "$data")
    local plots=$PLOTS p2_files
    vars="$vars; has_acc_anchors=$(prepare_accuracy_anchors "$csv" "$data" "$(var "$data" ladder_size)")"
    p2_files=$(var "$data" part2_files)
    if [[ -n $p2_files ]]; then # Part II's rungs, apart, with the anchors when measured
        plots="$plots part2"
        vars="$vars; part2_files=$(gp_string "$p2_files")"
        vars="$vars; part2_steps=$(gp_string "$(var "$data" part2_steps)")"
        vars="$vars; has_anchors=$(prepare_anchors "$csv" "$data")"
    else
        rm -f "$outdir"/part2.png "$outdir"/part2.svg
    fi

    for name in $plots; do
        for fmt in png svg; do
            render "$name" "$fmt" "$data" "$outdir" "$subtitle" "$vars"
        done
    done
    rm -rf "$data"
    trap - EXIT
    echo "plots.sh: $csv -> $outdir/{${plots// /,}}.{png,svg}"
    if [[ -e $(dirname "$csv")/shapes.csv ]]; then
        plot_shapes "$(dirname "$csv")/shapes.csv" "$outdir"
    fi
}

main() {
    ensure_gnuplot || die "gnuplot not found: apt-get install -y gnuplot-nox"
    if (($# > 2)); then
        die "usage: scripts/plots.sh [CSV [OUTDIR]]"
    fi
    if (($# >= 1)); then
        plot_csv "$1" "${2:-$(dirname "$1")}"
        return
    fi
    local csvs=() csv
    shopt -s nullglob
    csvs=("$ROOT"/results/*/bench.csv)
    shopt -u nullglob
    ((${#csvs[@]} > 0)) || die "no results/*/bench.csv to plot (run 'make all-bench' on a GPU machine)"
    for csv in "${csvs[@]}"; do
        plot_csv "$csv" "$(dirname "$csv")"
    done
}

main "$@"
