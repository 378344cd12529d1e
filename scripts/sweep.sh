#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# sweep.sh - time every rung beside cuBLAS over a range of sizes (make all-bench).
#
# usage: scripts/sweep.sh
# One process per rung (bin/stepNN --no-check --quiet --csv ... --sizes ... --budget ...),
# the rows gathered into results/<gpu>/bench.csv (<gpu>: the device name, lowercase,
# runs of other characters as '-'), the run described in results/<gpu>/run.txt (the GPU, driver,
# toolkit, clocks before and after, date, each rung's budget and sizes, what was cut short),
# then `make plots` and `make readme-table`. Part II's rungs (from PART2_FIRST) also time
# cuBLAS TF32 and 3xTF32 from cuBLAS at each size (--anchors): results/<gpu>/anchors.csv.
#
# The default sweep (square sizes up to 8192) must finish within 8 minutes on an H100/H200,
# the shape set and the plots included.  Every point costs the rung's replays plus
# cuBLAS's, a short power run of each, and host work (filling and checking the operands)
# that grows with the size.  At a 0.4 s budget and a 0.15 s power run, 11 rungs at
# 256..8192 step 256 took 491 s on an H200, so the per-kernel budget is 0.35 s and the
# power run 0.1 s.  At those, a rung costs ~52 s for 32 sizes on an H100, and 13 rungs
# took over 10 minutes; so only the last rung of each part of the ladder (FFMA, tensor cores) gets every 256
# (256..8192), and four sizes off that grid (1088, 1600, 2880, 4160). Every point also runs the exact check and the FP64 reference (~2 s of host work
# at 8192): 14 rungs, the 12 lower ones at 10 sizes, took 9m10s on an H100 (2026-11-25), so
# the other rungs get 256, 512, 1024, 2048, 4096 and 8192 (the powers of two of
# the README table), and the slow rungs 0.25 s (01: up to 4096).  Points whose replays the budget cut below the rule are listed
# at the end (the CSV's cut_short column).
#
# Then the shape set (SHAPES, default shapes/default.txt: LLM layers, skinny, shallow, deep,
# odd and padded products) is timed on the last rung that ran of each part of the ladder
# (FFMA, tensor cores), or on every rung STEPS names when it is set, at SHAPE_BUDGET per
# shape and kernel: bin/stepNN --shapes FILE.
# The rows go to results/<gpu>/shapes.csv (bench.csv's columns) and the set itself to
# results/<gpu>/shapes.txt beside it (the shapes plot takes its labels from it).  The set
# is checked by the harness before the square sweep starts, so a bad line fails at once.
#
# Environment:
#   STEPS="5 9 11"   rungs to run (default: every bin/stepNN that exists)
#   SWEEP=full       1024..12800 step 128, budget 1.0 s (01: ..4096, 02: ..8192 step 256)
#   SIZES=a,b,c      these sizes for every rung instead of the plan
#   BUDGET=sec       this --budget for every rung instead of the plan
#   POWER=sec        the back-to-back run per kernel for clocks and power (default 0.1)
#   SHAPES=FILE      the shape set to time after the sweep (default shapes/default.txt;
#                    none: no shape set, and results/<gpu>/shapes.* are left as they are)
#   SHAPE_BUDGET=sec the shape set's --budget (default 0.15)
#   RANDOM_SHAPES=N  random shapes timed after the set on the same rungs (default 64; 0: none),
#   RANDOM_SEED=S    drawn by the harness's --random N --seed S (default 20261128)
#   DEVICE=N         the CUDA device (default 0)
#   BIN_DIR (or BIN), RESULTS_DIR, STEPS_DIR   (default bin, results, steps)
#   SWEEP_POLL       seconds between progress checks (default 1)
#   MAKE             make to run plots and readme-table with (default make);
#   SWEEP_POST=0     skip them
# Exit: 0; 1 when no GPU, a rung failed, or nothing was measured; 130 interrupted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
# SHAPES is a path from where the sweep was started (make: the repository root)
SHAPES_FILE=${SHAPES:-$ROOT/shapes/default.txt}
if [[ $SHAPES_FILE != none && $SHAPES_FILE != /* ]]; then
    SHAPES_FILE=$PWD/$SHAPES_FILE
fi
readonly SHAPES_FILE SHAPES_NAME=${SHAPES:-shapes/default.txt}
readonly SHAPE_BUDGET=${SHAPE_BUDGET:-0.15}
readonly RANDOM_SHAPES=${RANDOM_SHAPES:-64} RANDOM_SEED=${RANDOM_SEED:-20261128}
cd "$ROOT"
if ! [[ $RANDOM_SHAPES =~ ^[0-9]+$ && $RANDOM_SEED =~ ^[0-9]+$ ]] || ((RANDOM_SHAPES > 512)); then
    echo "sweep.sh: RANDOM_SHAPES must be 0..512 and RANDOM_SEED a whole number" >&2
    exit 1
fi
# shellcheck source=lib/bench_csv.sh
source "$ROOT/scripts/lib/bench_csv.sh"

readonly BIN_DIR=${BIN_DIR:-${BIN:-bin}}
readonly RESULTS_DIR=${RESULTS_DIR:-results}
readonly PART2_FIRST=19 # the first rung of Part II (tensor cores): shape set and anchors
readonly STEPS_DIR=${STEPS_DIR:-steps}
readonly DEVICE=${DEVICE:-0}
readonly SLOW_RUNGS="1 2"

CHILD_PID=""
WORK=""
SKIPPED="" # rungs that exited 77 (below the GPU's compute capability, or no CUDA device): not run

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

# is_top N: rung N is the highest-numbered rung of its part of the ladder in this run (Part I
# below PART2_FIRST, Part II from it; RUNG_LIST is sorted).
is_top() {
    local list r last_ffma="" last_tc=""
    read -ra list <<<"$RUNG_LIST"
    for r in "${list[@]}"; do
        if ((10#$r < PART2_FIRST)); then
            last_ffma=$r
        else
            last_tc=$r
        fi
    done
    [[ $1 == "$last_ffma" || $1 == "$last_tc" ]]
}

# top_sizes: the last rung of each part: every 256 up to 8192, and sizes off that grid (1088 =
# 17 x 64, 1600 = 25 x 64, 2880, 4160: tiles cut short in both dimensions).
readonly OFF_GRID_SIZES="1088 1600 2880 4160"
top_sizes() {
    { seq 256 256 8192; printf '%s\n' $OFF_GRID_SIZES; } | sort -n | paste -sd, -
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
        1) echo "256,512,1024,2048,4096" ;;
        2) echo "256,512,1024,2048,4096,8192" ;;
        *) if is_top "$n"; then top_sizes; else echo "256,512,1024,2048,4096,8192"; fi ;;
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

# The cost model behind the time estimates (seconds, rough, fitted to an H100 sweep):
# each kernel runs min(budget, its natural replays) plus one estimate replay,
# cuBLAS near 51 TFLOP/s, slow rungs assumed 0.05x of it, fast ones 0.3x at worst;
# plus the power run of each (awk variable power), 0.5 s and host work per point
# (2.5e-8 s per float of A, B and C: filling, the exact check, the FP64 reference) and 1.5 s
# per process. Refitted to the 14-rung sweep of 2026-11-25 on an H100 (modelled 534 s, took
# 550 s).
readonly COST_AWK='
function cost(m, n, k, budget, slow,   tc, tr, reps, run) {
    tc = 2 * m * n * k / 51e12; tr = tc / (slow ? 0.05 : 0.3)
    reps = int(800000 / ((m + n + k) / 3)); if (reps < 10) reps = 10
    run = (reps * tr < budget ? reps * tr : budget) + tr + (reps * tc < budget ? reps * tc : budget) + tc
    return run + 2 * power + 0.5 + 2.5e-8 * (m * k + k * n + m * n)
}'

# write_plan FILE: one line per rung: "step slug budget weight0 weight1 ..." where
# weight i is the modelled cost of the first i points (cumulative).
write_plan() {
    local file=$1 n
    : >"$file"
    for n in $RUNG_LIST; do
        printf '%s %s %s %s\n' "$n" "$(slug "$n")" "$(plan_budget "$n")" "$(plan_sizes "$n")"
    done | awk -v power="${POWER:-0.1}" "$COST_AWK"'
        { slow = ($1 == 1 || $1 == 2); m = split($4, s, ",")
          line = $1 " " $2 " " $3 " 1.5"; c = 1.5
          for (i = 1; i <= m; i++) { c += cost(s[i], s[i], s[i], $3, slow); line = line " " c }
          print line }' >"$file"
}

# shapes_cost: the modelled seconds of one rung on the shape set.
shapes_cost() {
    # the random shapes counted as 2048^3 each (their median work is about that)
    awk -v power="${POWER:-0.1}" -v budget="$SHAPE_BUDGET" -v r="$RANDOM_SHAPES" "$COST_AWK"'
        { sub(/#.*/, "") } NF { c += cost($1, $2, $3, budget, 0) }
        END { printf "%d", c + r * cost(2048, 2048, 2048, budget, 0) + 1.5 }' "$SHAPES_FILE"
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

# follow CSV STATUS...: waits for CHILD_PID, showing the line `STATUS... ROWS` prints (ROWS:
# the rows CSV has so far) whenever it grows, or all the time on a terminal; returns the
# child's exit status.  Off a terminal the line for the final ROWS is always shown, once,
# when the child has ended: a log has each run's last state however fast the run was
# (a child that ends before the first poll would otherwise leave no line at all).
follow() {
    local csv=$1 rows last_rows=-1 rc=0 line tty=0
    shift
    [[ -t 2 ]] && tty=1
    while kill -0 "$CHILD_PID" 2>/dev/null; do
        rows=$(data_rows "$csv")
        if ((tty)) || ((rows != last_rows)); then
            line="sweep: $("$@" "$rows")"
            if ((tty)); then printf '\r\033[K%s' "$line" >&2; else echo "$line" >&2; fi
            last_rows=$rows
        fi
        sleep "${SWEEP_POLL:-1}"
    done
    wait "$CHILD_PID" || rc=$?
    CHILD_PID=""
    if ((tty)); then
        printf '\r\033[K' >&2
    else
        rows=$(data_rows "$csv")
        if ((rows != last_rows)); then echo "sweep: $("$@" "$rows")" >&2; fi
    fi
    return "$rc"
}

# square_status PLAN N SIZES ROWS: the progress line of rung N in the square sweep.
square_status() {
    progress "$1" "$2" "$4" "$((SECONDS - T0))" "$3"
}

# run_rung N PLAN: runs one rung; returns its exit status.
run_rung() {
    local n=$1 plan=$2 bin sizes budget csv log
    bin=$(printf '%s/step%02d' "$BIN_DIR" "$n")
    sizes=$(plan_sizes "$n")
    budget=$(plan_budget "$n")
    csv=$WORK/$(printf 'step%02d' "$n").csv
    log=$WORK/$(printf 'step%02d' "$n").log
    local anchors=()
    # Part II's rungs: cuBLAS TF32 and 3xTF32 from cuBLAS timed beside them (harness --anchors)
    if ((10#$n >= PART2_FIRST)); then
        anchors=(--anchors "$WORK/$(printf 'anchors%02d' "$n").csv")
    fi
    "$bin" --no-check --quiet --device "$DEVICE" --budget "$budget" --power "${POWER:-0.1}" \
        --sizes "$sizes" --csv "$csv" ${anchors[@]+"${anchors[@]}"} >"$log" 2>&1 &
    CHILD_PID=$!
    follow "$csv" square_status "$plan" "$n" "$sizes"
}

# merge_anchors OUT_DIR: the anchors rows of the Part II rungs that ran (WORK/anchorsNN.csv,
# one header) into OUT_DIR/anchors.csv; none ran: no anchors.csv (an earlier one would be
# plotted beside this sweep's numbers).
merge_anchors() {
    local f
    rm -f "$1/anchors.csv"
    for f in "$WORK"/anchors[0-9][0-9].csv; do
        if [[ -s $f ]]; then # a rung that stopped before its first point leaves it empty
            merge "$1/anchors.csv" anchors "$ANCHORS_CSV_HEADER"
            return 0
        fi
    done
}

# merge OUT PREFIX [HEADER]: HEADER (bench.csv's by default) and the rows of every
# WORK/PREFIXnn.csv, in rung order.
merge() {
    local out=$1 prefix=$2 f
    echo "${3:-$BENCH_CSV_HEADER}" >"$out"
    for f in "$WORK/$prefix"[0-9][0-9].csv; do
        [[ -s $f ]] && awk 'NR > 1 && NF' "$f" >>"$out"
    done
    return 0
}

# shape_count FILE: the shapes in a shape file (lines with a field outside comments).
shape_count() {
    awk '{ sub(/#.*/, "") } NF { n++ } END { print n + 0 }' "$1"
}

# check_shape_set: exit 1 with the harness's own message unless it accepts SHAPES_FILE
# (it parses its arguments in order, so --help after --shapes reads the file, then stops).
check_shape_set() {
    local n bin msg
    [[ $SHAPES_FILE == none ]] && return 0
    [[ -f $SHAPES_FILE && -r $SHAPES_FILE ]] || die "SHAPES: $SHAPES_NAME is not a readable file"
    n=${RUNG_LIST%% *}
    bin=$(printf '%s/step%02d' "$BIN_DIR" "$n")
    msg=$("$bin" --shapes "$SHAPES_FILE" --help 2>&1 >/dev/null) ||
        die "SHAPES: the harness refuses the shape set: ${msg:-exit status $?}"
}

# shape_rungs: the rungs to time the shape set on: every rung that ran when STEPS is
# set, otherwise the highest-numbered one of each part of the ladder that ran (Part I, the
# FFMA rungs, below PART2_FIRST; Part II, the tensor-core rungs, from it; a rung that exited
# 77 did not run).
shape_rungs() {
    local n last1="" last2=""
    for n in $RUNG_LIST; do
        [[ " $SKIPPED " == *" $n "* ]] && continue
        if [[ -n ${STEPS:-} ]]; then
            echo "$n"
        elif ((10#$n < PART2_FIRST)); then
            last1=$n
        else
            last2=$n
        fi
    done
    if [[ -n $last1 ]]; then echo "$last1"; fi
    if [[ -n $last2 ]]; then echo "$last2"; fi
}

# shape_status N COUNT T_START ROWS: the progress line of rung N on the shape set.
shape_status() {
    printf 'shapes: rung %02d %s | shape %d/%d | %ds' "$1" "$(slug "$1")" \
        "$(($4 < $2 ? $4 + 1 : $2))" "$2" "$((SECONDS - $3))"
}

# random_args: the harness's arguments for the random shapes (none when RANDOM_SHAPES=0).
random_args() {
    if ((RANDOM_SHAPES > 0)); then echo "--random $RANDOM_SHAPES --seed $RANDOM_SEED"; fi
}

# random_words: ", and N random (--random N --seed S)" for the logs, or nothing.
random_words() {
    if ((RANDOM_SHAPES > 0)); then echo " and $RANDOM_SHAPES random ($(random_args))"; fi
}

# run_shapes N: times rung N on the shape set, then the random shapes; returns its exit status.
run_shapes() {
    local n=$1 bin csv log
    bin=$(printf '%s/step%02d' "$BIN_DIR" "$n")
    csv=$WORK/$(printf 'shapes%02d' "$n").csv
    log=$WORK/$(printf 'shapes%02d' "$n").log
    # shellcheck disable=SC2046 # random_args is words on purpose
    "$bin" --no-check --quiet --device "$DEVICE" --budget "$SHAPE_BUDGET" --power "${POWER:-0.1}" \
        --shapes "$SHAPES_FILE" --csv "$csv" $(random_args) >"$log" 2>&1 &
    CHILD_PID=$!
    follow "$csv" shape_status "$n" "$(($(shape_count "$SHAPES_FILE") + RANDOM_SHAPES))" "$SECONDS"
}

# shape_set OUT_DIR: the shape set on shape_rungs, into OUT_DIR/shapes.csv and shapes.txt,
# with its lines appended to OUT_DIR/run.txt; returns 1 when a rung failed or a timed
# output did not match cuBLAS.
shape_set() {
    local out_dir=$1 n rc status t0=$SECONDS t_rung failed=0 rungs csv=$WORK/shapes.csv
    rungs=$(shape_rungs | tr '\n' ' ')
    rm -f "$out_dir"/shapes.csv "$out_dir"/shapes.txt "$out_dir"/shapes.png "$out_dir"/shapes.svg
    echo "shapes: $SHAPES_NAME, $(shape_count "$SHAPES_FILE") shapes$(random_words), budget $SHAPE_BUDGET s" >>"$out_dir/run.txt"
    for n in $rungs; do
        t_rung=$SECONDS
        rc=0
        run_shapes "$n" || rc=$?
        case $rc in
        0) status="ok" ;;
        *) status="FAILED (exit $rc)"; failed=1 ;;
        esac
        say "shapes: rung $(printf '%02d' "$n") $(slug "$n"): $status, $(data_rows "$WORK/$(printf 'shapes%02d' "$n").csv") shapes, $((SECONDS - t_rung)) s"
        if ((rc != 0)); then
            tail -n 5 "$WORK/$(printf 'shapes%02d' "$n").log" | sed 's/^/    /' >&2
        fi
        printf 'shapes rung %02d %s: %s, %s s\n' "$n" "$(slug "$n")" "$status" "$((SECONDS - t_rung))" >>"$out_dir/run.txt"
    done
    echo "shapes_wall_s: $((SECONDS - t0))" >>"$out_dir/run.txt"
    merge "$csv" shapes
    if ! bench_csv_check "$csv" 2>/dev/null; then
        say "shapes: nothing was measured, no $out_dir/shapes.csv"
        return 1
    fi
    cp "$csv" "$out_dir/shapes.csv"
    cp "$SHAPES_FILE" "$out_dir/shapes.txt"
    say "wrote $out_dir/shapes.csv ($(data_rows "$csv") rows) in $((SECONDS - t0)) s"
    if awk -F, 'NR > 1 && $20 != "PASS" { f = 1 } END { exit !f }' "$csv"; then
        say "WARNING: some timed shapes did not match cuBLAS (check = FAIL in shapes.csv)"
        failed=1
    fi
    ((failed == 0))
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
    local plan n rc status out_dir csv gpu t_start t_meas t_post failed=0 ran=0 post_rc=0
    trap on_interrupt INT TERM
    require_gpu
    RUNG_LIST=$(rungs | sort -n | uniq | tr '\n' ' ')
    [[ -n ${RUNG_LIST// /} ]] || die "no rung binaries in $BIN_DIR/ (run 'make all' first)"
    check_shape_set
    mkdir -p "$RESULTS_DIR"
    WORK=$(mktemp -d "$RESULTS_DIR/.sweep.XXXXXX")
    plan=$WORK/plan.txt
    write_plan "$plan"
    T0=$SECONDS
    t_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    say "rungs: $RUNG_LIST| ${SWEEP:-default} sweep, $(awk '{ p += NF - 4 } END { print p }' "$plan") points, modelled ~$(awk '{ s += $NF } END { printf "%dm%02ds", s / 60, s % 60 }' "$plan")$(
        [[ $SHAPES_FILE == none ]] || echo "; then $(shape_count "$SHAPES_FILE") shapes ($SHAPES_NAME)$(random_words), ~$(shapes_cost) s a rung")"
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
        # exit 77 is a skip only for a GPU below the rung's compute capability (the harness
        # says "needs compute capability"); "no CUDA device" where nvidia-smi lists one fails
        case $rc in
        0) status="ok"; ran=$((ran + 1)) ;;
        77) if grep -q 'needs compute capability' "$WORK/$(printf 'step%02d' "$n").log"; then
                status="SKIPPED (exit 77: the GPU is below the rung's compute capability)"
                SKIPPED="$SKIPPED $n"
            else
                status="FAILED (exit 77: no CUDA device, but nvidia-smi lists a GPU)"
                SKIPPED="$SKIPPED $n"
                failed=1
            fi ;;
        *) status="FAILED (exit $rc)"; failed=1; ran=$((ran + 1)) ;;
        esac
        say "rung $(printf '%02d' "$n") $(slug "$n"): $status, $(data_rows "$WORK/$(printf 'step%02d' "$n").csv") points, $((SECONDS - t_rung)) s"
        if ((rc != 0)) && [[ $status != SKIPPED* ]]; then
            tail -n 5 "$WORK/$(printf 'step%02d' "$n").log" | sed 's/^/    /' >&2
        fi
        printf 'rung %02d %s: %s, %s s, budget %s s, sizes %s\n' "$n" "$(slug "$n")" "$status" \
            "$((SECONDS - t_rung))" "$(plan_budget "$n")" "$(plan_sizes "$n")" >>"$WORK/sweep.log"
    done
    t_meas=$((SECONDS - T0))

    csv=$WORK/bench.csv
    merge "$csv" step
    if ((ran == 0)) || ! bench_csv_check "$csv" 2>/dev/null; then
        die "nothing was measured (logs in $WORK)"
    fi
    gpu=$(bench_device "$csv")
    out_dir=$RESULTS_DIR/$(bench_slug "$gpu")
    mkdir -p "$out_dir"
    cp "$csv" "$out_dir/bench.csv"
    merge_anchors "$out_dir"
    {
        cat "$WORK/sweep.log"
        echo "gpu state after: $(gpu_query clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu)"
        echo "date: $(date -u +%F)"
        echo "wall_s: $t_meas"
        echo "cut short by the time budget:"
        cut_short_summary "$csv"
    } >"$out_dir/run.txt"
    rm -f "$out_dir/sweep.log" # what an older sweep called run.txt
    say "wrote $out_dir/bench.csv ($(data_rows "$csv") points) in $((t_meas / 60))m$((t_meas % 60))s"
    if awk -F, 'NR > 1 && $9 == 1 { f = 1 } END { exit !f }' "$csv"; then
        say "points cut short by the time budget (fewer replays than the rule):"
        cut_short_summary "$csv" >&2
    fi
    if awk -F, 'NR > 1 && $20 != "PASS" { f = 1 } END { exit !f }' "$csv"; then
        say "WARNING: some timed outputs did not match cuBLAS (check = FAIL in the CSV)"
        failed=1
    fi
    if [[ $SHAPES_FILE != none ]]; then
        shape_set "$out_dir" || failed=1
    fi
    rm -rf "$WORK"
    WORK=""

    if [[ ${SWEEP_POST:-1} != 0 ]]; then
        t_post=$SECONDS
        "${MAKE:-make}" plots || post_rc=$?
        "${MAKE:-make}" readme-table BENCH_CSV="$out_dir/bench.csv" || post_rc=$?
        echo "post_wall_s: $((SECONDS - t_post))" >>"$out_dir/run.txt"
    fi
    echo "total_wall_s: $((SECONDS - T0))" >>"$out_dir/run.txt"
    ((failed == 0 && post_rc == 0)) || exit 1
}

# Sourced (tests/test_tools.sh calls progress and follow alone), it defines the functions
# and runs nothing.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
