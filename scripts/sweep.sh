#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# sweep.sh - time every rung beside cuBLAS over a range of sizes (make all-bench).
#
# usage: scripts/sweep.sh
# One process per rung (bin/stepNN --no-check --quiet --csv ... --sizes ... --budget ...),
# the rows gathered into results/<gpu>/bench.csv (<gpu>: the device name, lowercase,
# runs of other characters as '-'), the run described in results/<gpu>/sweep.log,
# then `make plots` and `make readme-table`.
#
# The default sweep (square 256..8192 step 256) must finish within 8 minutes on an
# H100/H200: every point costs the rung's replays plus cuBLAS's, and a short power run
# of each.  At a 0.4 s budget and a 0.15 s power run it took 491 s on an H200, so the
# per-kernel budget is 0.35 s and the power run 0.1 s; the slow rungs get fewer sizes
# and 0.25 s (01: 256..4096, 02: 256..8192 step 512).  Points whose replays the budget cut
# below the rule are listed at the end (the CSV's cut_short column).
#
# Environment:
#   STEPS="5 9 11"   rungs to run (default: every bin/stepNN that exists)
#   SWEEP=full       1024..12800 step 128, budget 1.0 s (01: ..4096, 02: ..8192 step 256)
#   SIZES=a,b,c      these sizes for every rung instead of the plan
#   BUDGET=sec       this --budget for every rung instead of the plan
#   POWER=sec        the back-to-back run per kernel for clocks and power (default 0.1)
#   DEVICE=N         the CUDA device (default 0)
#   BIN_DIR (or BIN), RESULTS_DIR, STEPS_DIR   (default bin, results, steps)
#   SWEEP_POLL       seconds between progress checks (default 1)
#   MAKE             make to run plots and readme-table with (default make);
#   SWEEP_POST=0     skip them
# Exit: 0; 1 when no GPU, a rung failed, or nothing was measured; 130 interrupted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
cd "$ROOT"
# shellcheck source=lib/bench_csv.sh
source "$ROOT/scripts/lib/bench_csv.sh"

readonly BIN_DIR=${BIN_DIR:-${BIN:-bin}}
readonly RESULTS_DIR=${RESULTS_DIR:-results}
readonly STEPS_DIR=${STEPS_DIR:-steps}
readonly DEVICE=${DEVICE:-0}
readonly SLOW_RUNGS="1 2"

CHILD_PID=""
WORK=""

say() { echo "sweep: $*" >&2; }
die() {
    say "$*"
    exit 1
}

on_interrupt() {
    if [[ -n $CHILD_PID ]]; then
        kill "$CHILD_PID" 2>/dev/null || true
    fi
    say "interrupted; partial results left in ${WORK:-nowhere}"
    exit 130
}

# require_gpu: one line and exit 1 unless nvidia-smi sees a GPU.
require_gpu() {
    command -v nvidia-smi >/dev/null 2>&1 ||
        die "needs an NVIDIA GPU: nvidia-smi not found (run 'make all-bench' on a GPU machine)"
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' ||
        die "needs an NVIDIA GPU: nvidia-smi finds none"
    local others
    others=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c . || true)
    if ((others > 0)); then
        say "warning: $others other process(es) are using a GPU; timings may suffer"
    fi
}

# rungs: the rung numbers to run, one per line.
rungs() {
    local n f
    if [[ -n ${STEPS:-} ]]; then
        for n in ${STEPS//,/ }; do
            [[ $n =~ ^[0-9]{1,2}$ ]] || die "STEPS: '$n' is not a rung number"
            f=$(printf '%s/step%02d' "$BIN_DIR" "$((10#$n))")
            [[ -x $f ]] || die "$f is not built (make step=$((10#$n)))"
            echo "$((10#$n))"
        done
        return
    fi
    for f in "$BIN_DIR"/step[0-9][0-9]; do
        [[ -x $f ]] && echo "$((10#${f##*step}))"
    done
    return 0
}

# slug N: the rung's name from steps/NN_<slug>.cu ("?" if not found).
slug() {
    local f
    for f in "$STEPS_DIR"/"$(printf '%02d' "$1")"_*.cu; do
        if [[ -f $f ]]; then
            f=${f##*/}
            f=${f#*_}
            echo "${f%.cu}"
            return
        fi
    done
    echo "?"
}

is_slow() {
    [[ " $SLOW_RUNGS " == *" $1 "* ]]
}

# plan_sizes N: the comma-separated sizes of rung N.
plan_sizes() {
    local n=$1
    if [[ -n ${SIZES:-} ]]; then
        echo "$SIZES"
    elif [[ ${SWEEP:-} == full ]]; then
        case $n in
        1) seq -s, 1024 256 4096 ;;
        2) seq -s, 1024 256 8192 ;;
        *) seq -s, 1024 128 12800 ;;
        esac
    else
        case $n in
        1) echo "256,$(seq -s, 512 512 4096)" ;;
        2) echo "256,$(seq -s, 512 512 8192)" ;;
        *) seq -s, 256 256 8192 ;;
        esac
    fi
}

# plan_budget N: the --budget of rung N in seconds.
plan_budget() {
    if [[ -n ${BUDGET:-} ]]; then
        echo "$BUDGET"
    elif [[ ${SWEEP:-} == full ]]; then
        if is_slow "$1"; then echo 0.5; else echo 1.0; fi
    elif is_slow "$1"; then
        echo 0.25
    else
        echo 0.35
    fi
}

# The cost model behind the time estimates (seconds, rough, H100-like):
# each kernel runs min(budget, its natural replays) plus one estimate replay,
# cuBLAS near 51 TFLOP/s, slow rungs assumed 0.05x of it, fast ones 0.3x at worst;
# plus host work per point (filling and comparing 3 n^2 floats) and 1.5 s per process.
readonly COST_AWK='
function cost(n, budget, slow,   tc, tr, reps, k) {
    tc = 2 * n * n * n / 51e12; tr = tc / (slow ? 0.05 : 0.3)
    reps = int(800000 / n); if (reps < 10) reps = 10
    k = (reps * tr < budget ? reps * tr : budget) + tr + (reps * tc < budget ? reps * tc : budget) + tc
    return k + 0.02 + 1e-8 * n * n
}'

# write_plan FILE: one line per rung: "step slug budget weight0 weight1 ..." where
# weight i is the modelled cost of the first i points (cumulative).
write_plan() {
    local file=$1 n
    : >"$file"
    for n in $RUNG_LIST; do
        printf '%s %s %s %s\n' "$n" "$(slug "$n")" "$(plan_budget "$n")" "$(plan_sizes "$n")"
    done | awk "$COST_AWK"'
        { slow = ($1 == 1 || $1 == 2); m = split($4, s, ",")
          line = $1 " " $2 " " $3 " 1.5"; c = 1.5
          for (i = 1; i <= m; i++) { c += cost(s[i], $3, slow); line = line " " c }
          print line }' >"$file"
}

# progress PLAN STEP ROWS ELAPSED: one status line (rung, size, points, time left).
progress() {
    awk -v step="$2" -v rows="$3" -v elapsed="$4" -v sizes="$5" '
        function hms(t) { t = int(t + 0.5); return (t >= 60 ? int(t / 60) "m" : "") sprintf("%02ds", t % 60) }
        { total_pts += NF - 4; total_w += $NF
          if ($1 == step) { done_pts = prev_pts + rows; idx = 4 + rows; done_w = prev_w + $idx; slug = $2; here = 1 }
          if (!here) { prev_pts += NF - 4; prev_w += $NF } }
        END {
            split(sizes, s, ","); size = (rows + 1 in s) ? s[rows + 1] : s[rows]
            left = (done_w > 0 && elapsed > 5) ? elapsed / done_w * (total_w - done_w) : total_w - done_w
            printf "rung %02d %s | size %s | points %d/%d | %s elapsed, ~%s left",
                step, slug, size, done_pts, total_pts, hms(elapsed), hms(left)
        }' "$1"
}

# data_rows CSV: rows written so far (the header excluded).
data_rows() {
    if [[ -s $1 ]]; then
        awk 'NR > 1 && NF { r++ } END { print r + 0 }' "$1"
    else
        echo 0
    fi
}

# run_rung N PLAN: runs one rung; returns its exit status.
run_rung() {
    local n=$1 plan=$2 bin sizes budget csv log rows last_rows=-1 rc=0 line tty=0
    bin=$(printf '%s/step%02d' "$BIN_DIR" "$n")
    sizes=$(plan_sizes "$n")
    budget=$(plan_budget "$n")
    csv=$WORK/$(printf 'step%02d' "$n").csv
    log=$WORK/$(printf 'step%02d' "$n").log
    [[ -t 2 ]] && tty=1
    "$bin" --no-check --quiet --device "$DEVICE" --budget "$budget" --power "${POWER:-0.1}" \
        --sizes "$sizes" --csv "$csv" >"$log" 2>&1 &
    CHILD_PID=$!
    while kill -0 "$CHILD_PID" 2>/dev/null; do
        rows=$(data_rows "$csv")
        if ((tty)) || ((rows != last_rows)); then
            line="sweep: $(progress "$plan" "$n" "$rows" "$((SECONDS - T0))" "$sizes")"
            if ((tty)); then printf '\r\033[K%s' "$line" >&2; else echo "$line" >&2; fi
            last_rows=$rows
        fi
        sleep "${SWEEP_POLL:-1}"
    done
    wait "$CHILD_PID" || rc=$?
    CHILD_PID=""
    ((tty)) && printf '\r\033[K' >&2
    return "$rc"
}

# merge OUT: the header and every rung's rows, in rung order.
merge() {
    local out=$1 f
    echo "$BENCH_CSV_HEADER" >"$out"
    for f in "$WORK"/step[0-9][0-9].csv; do
        [[ -s $f ]] && awk 'NR > 1 && NF' "$f" >>"$out"
    done
    return 0
}

# cut_short_summary CSV: "rung NN: sizes..." for the points the budget cut short.
cut_short_summary() {
    awk -F, 'NR > 1 && $9 == 1 { s[$3] = s[$3] " " $5; if (!($3 in seen)) { seen[$3] = 1; o[++n] = $3 } }
        END { for (i = 1; i <= n; i++) printf "  rung %02d at%s\n", o[i], s[o[i]] }' "$1"
}

gpu_query() {
    nvidia-smi -i "$DEVICE" --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -n 1 || true
}

main() {
    local plan n rc status out_dir csv gpu t_start t_meas failed=0 ran=0 post_rc=0
    trap on_interrupt INT TERM
    require_gpu
    RUNG_LIST=$(rungs | sort -n | uniq | tr '\n' ' ')
    [[ -n ${RUNG_LIST// /} ]] || die "no rung binaries in $BIN_DIR/ (run 'make all' first)"
    mkdir -p "$RESULTS_DIR"
    WORK=$(mktemp -d "$RESULTS_DIR/.sweep.XXXXXX")
    plan=$WORK/plan.txt
    write_plan "$plan"
    T0=$SECONDS
    t_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    say "rungs: $RUNG_LIST| ${SWEEP:-default} sweep, $(awk '{ p += NF - 4 } END { print p }' "$plan") points, modelled ~$(awk '{ s += $NF } END { printf "%dm%02ds", s / 60, s % 60 }' "$plan")"
    {
        echo "started: $t_start"
        echo "gpu: $(gpu_query name)"
        echo "driver: $(gpu_query driver_version)"
        echo "cuda: $(bench_cuda_version)"
        echo "sweep: ${SWEEP:-default}${SIZES:+, SIZES=$SIZES}${BUDGET:+, BUDGET=$BUDGET}"
        echo "gpu state before: $(gpu_query clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu)"
    } >"$WORK/sweep.log"

    for n in $RUNG_LIST; do
        local t_rung=$SECONDS
        rc=0
        run_rung "$n" "$plan" || rc=$?
        case $rc in
        0) status="ok"; ran=$((ran + 1)) ;;
        77) status="SKIPPED (exit 77: no GPU, or the GPU is below the rung's compute capability)" ;;
        *) status="FAILED (exit $rc)"; failed=1; ran=$((ran + 1)) ;;
        esac
        say "rung $(printf '%02d' "$n") $(slug "$n"): $status, $(data_rows "$WORK/$(printf 'step%02d' "$n").csv") points, $((SECONDS - t_rung)) s"
        if ((rc != 0 && rc != 77)); then
            tail -n 5 "$WORK/$(printf 'step%02d' "$n").log" | sed 's/^/    /' >&2
        fi
        printf 'rung %02d %s: %s, %s s, budget %s s, sizes %s\n' "$n" "$(slug "$n")" "$status" \
            "$((SECONDS - t_rung))" "$(plan_budget "$n")" "$(plan_sizes "$n")" >>"$WORK/sweep.log"
    done
    t_meas=$((SECONDS - T0))

    csv=$WORK/bench.csv
    merge "$csv"
    if ((ran == 0)) || ! bench_csv_check "$csv" 2>/dev/null; then
        die "nothing was measured (logs in $WORK)"
    fi
    gpu=$(bench_device "$csv")
    out_dir=$RESULTS_DIR/$(bench_slug "$gpu")
    mkdir -p "$out_dir"
    cp "$csv" "$out_dir/bench.csv"
    {
        cat "$WORK/sweep.log"
        echo "gpu state after: $(gpu_query clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu)"
        echo "date: $(date -u +%F)"
        echo "wall_s: $t_meas"
        echo "cut short by the time budget:"
        cut_short_summary "$csv"
    } >"$out_dir/sweep.log"
    say "wrote $out_dir/bench.csv ($(data_rows "$csv") points) in $((t_meas / 60))m$((t_meas % 60))s"
    if awk -F, 'NR > 1 && $9 == 1 { f = 1 } END { exit !f }' "$csv"; then
        say "points cut short by the time budget (fewer replays than the rule):"
        cut_short_summary "$csv" >&2
    fi
    if awk -F, 'NR > 1 && $20 != "PASS" { f = 1 } END { exit !f }' "$csv"; then
        say "WARNING: some timed outputs did not match cuBLAS (check = FAIL in the CSV)"
        failed=1
    fi
    rm -rf "$WORK"
    WORK=""

    if [[ ${SWEEP_POST:-1} != 0 ]]; then
        "${MAKE:-make}" plots || post_rc=$?
        "${MAKE:-make}" readme-table BENCH_CSV="$out_dir/bench.csv" || post_rc=$?
        echo "post_wall_s: $((SECONDS - T0 - t_meas))" >>"$out_dir/sweep.log"
    fi
    ((failed == 0 && post_rc == 0)) || exit 1
}

main "$@"
