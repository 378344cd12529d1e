#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# sweep.sh - time the ladder beside cuBLAS (make all-bench): bin/ladder, one process per point set.
#
# usage: scripts/sweep.sh
# bin/ladder draws each point's inputs once and times every rung of the set on them, each
# beside cuBLAS in alternating batches, in one process. The point sets:
#   slow    the slow rungs (01, naive) at 256..4096: one of its replays takes 2 s at 8192
#   ladder  every other rung at 256, 512, 1024, 2048, 4096 and 8192: the README's table and the
#           ladder plot; with Part II's rungs, cuBLAS TF32 and 3xTF32 from cuBLAS once a size
#   sweep   the last rung of each part (FFMA; tensor cores, from PART2_FIRST) every 256 up to
#           8192 and at 1088, 1600, 2880, 4160 (tiles cut short in both dimensions), but the
#           powers of two the ladder set has; with the references
#   shapes  the same rungs on the shape set (SHAPES) and RANDOM_SHAPES random shapes
# Nothing is cut short: every point gets the harness's replays (max(10, 800000/size) of each
# kernel, the second half kept). The rows go to results/<gpu>/bench.csv (slow, ladder and
# sweep), anchors.csv (the references) and shapes.csv (with the set itself as shapes.txt);
# results/<gpu>/run.txt says what ran: the GPU, driver, toolkit, clocks before and after,
# date, and each set's rungs, sizes and seconds. Then `make plots` and `make readme-table`.
# An H200 takes about 8 minutes.
#
# Environment:
#   STEPS="5 9 11"   the rungs (default: every steps/NN_*.cu); the shape set then runs on each
#   SIZES=a,b,c      these sizes for every rung, in one set, and no sweep set
#   BUDGET=sec       cut each kernel's replays to this many seconds a point (a quick look:
#                    the CSV's cut_short column and run.txt say which points were cut)
#   POWER=sec        the back-to-back run per kernel for clocks and power (default 0.05)
#   SHAPES=FILE      the shape set (default shapes/default.txt; none: no shape set, and
#                    results/<gpu>/shapes.* are left as they are)
#   RANDOM_SHAPES=N  random shapes after the set (default 64; 0: none),
#   RANDOM_SEED=S    drawn by the harness's --random N --seed S (default 20261128)
#   DEVICE=N         the CUDA device (default 0)
#   BIN_DIR (or BIN), RESULTS_DIR, STEPS_DIR   (default bin, results, steps)
#   SWEEP_POLL       seconds between progress lines (default 1)
#   MAKE             make to run plots and readme-table with (default make); SWEEP_POST=0 skips them
# Exit: 0; 1 when no GPU, a set failed (a check, or the harness), or nothing was measured;
# 130 interrupted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
# SHAPES is a path from where the sweep was started (make: the repository root)
SHAPES_FILE=${SHAPES:-$ROOT/shapes/default.txt}
if [[ $SHAPES_FILE != none && $SHAPES_FILE != /* ]]; then
    SHAPES_FILE=$PWD/$SHAPES_FILE
fi
readonly SHAPES_FILE SHAPES_NAME=${SHAPES:-shapes/default.txt}
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
readonly PART2_FIRST=20 # the first rung of Part II (tensor cores)
readonly STEPS_DIR=${STEPS_DIR:-steps}
readonly DEVICE=${DEVICE:-0}
readonly SLOW_RUNGS="1"
readonly LADDER_SIZES="256,512,1024,2048,4096,8192" SLOW_SIZES="256,512,1024,2048,4096"
readonly OFF_GRID_SIZES="1088 1600 2880 4160"
readonly POWER_S=${POWER:-0.05}

CHILD_PID=""
WORK=""
SKIPPED="" # rungs the ladder skipped (the GPU is below their compute capability)

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

# rungs: the rung numbers to run, one per line (STEPS, or every steps/NN_*.cu).
rungs() {
    local n f
    if [[ -n ${STEPS:-} ]]; then
        for n in ${STEPS//,/ }; do
            [[ $n =~ ^[0-9]{1,2}$ ]] || die "STEPS: '$n' is not a rung number"
            compgen -G "$STEPS_DIR/$(printf '%02d' "$((10#$n))")_*.cu" >/dev/null ||
                die "STEPS: there is no rung $n in $STEPS_DIR/"
            echo "$((10#$n))"
        done
        return
    fi
    for f in "$STEPS_DIR"/[0-9][0-9]_*.cu; do
        [[ -f $f ]] || continue
        f=${f##*/}
        echo "$((10#${f%%_*}))"
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

# top_rungs: the rungs the sweep and shape sets run on: every rung when STEPS is set,
# otherwise the highest-numbered that ran of each part (FFMA below PART2_FIRST, tensor cores
# from it).
top_rungs() {
    local n last1="" last2=""
    for n in $RUNG_LIST; do
        [[ " $SKIPPED " == *" $n "* ]] && continue
        if [[ -n ${STEPS:-} ]]; then
            echo "$n"
        elif ((n < PART2_FIRST)); then
            last1=$n
        else
            last2=$n
        fi
    done
    if [[ -n $last1 ]]; then echo "$last1"; fi
    if [[ -n $last2 ]]; then echo "$last2"; fi
}

# grid_sizes: every 256 up to 8192 and the sizes off that grid, but the ladder set's.
grid_sizes() {
    # shellcheck disable=SC2086 # one size a word
    { seq 256 256 8192; printf '%s\n' $OFF_GRID_SIZES; } | sort -n |
        grep -vxF -f <(tr ',' '\n' <<<"$LADDER_SIZES") | paste -sd, -
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
# when the child has ended: a log has each run's last state however fast the run was.
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

# set_status NAME TOTAL T_START ROWS: the progress line of a point set.
set_status() {
    printf '%s: points %d/%d | %ds' "$1" "$4" "$2" "$((SECONDS - $3))"
}

# list_words "1 2 3": "01 02 03".
list_words() {
    local n out=""
    for n in $1; do out="$out $(printf '%02d' "$n")"; done
    echo "${out# }"
}

# comma_list " 1 2 3": "1,2,3".
comma_list() {
    local words
    read -ra words <<<"$1"
    (IFS=,; echo "${words[*]}")
}

# run_set NAME "RUNGS" POINTS ARGS...: bin/ladder on RUNGS with ARGS (their shapes; POINTS of
# them) into WORK/NAME.csv, the log in WORK/NAME.log; a line for run.txt; returns 1 when the
# ladder failed.
run_set() {
    local name=$1 set_rungs=$2 points=$3 rc=0 t0=$SECONDS status n skipped=""
    shift 3
    local csv=$WORK/$name.csv log=$WORK/$name.log
    local budget=() count
    count=$(wc -w <<<"$set_rungs")
    if [[ -n ${BUDGET:-} ]]; then budget=(--budget "$BUDGET"); else budget=(--budget 3600); fi
    "$BIN_DIR/ladder" --steps "$(comma_list "$set_rungs")" --no-check --quiet --device "$DEVICE" \
        "${budget[@]}" --csv "$csv" "$@" >"$log" 2>&1 &
    CHILD_PID=$!
    follow "$csv" set_status "$name" "$((points * count))" "$t0" || rc=$?
    # a rung the GPU is below is skipped by the ladder, which says so
    for n in $set_rungs; do
        if grep -q "rung $(printf '%02d' "$n") .*needs compute capability.*(skipped)" "$log" 2>/dev/null; then
            skipped="$skipped $n"
            [[ " $SKIPPED " == *" $n "* ]] || SKIPPED="$SKIPPED $n"
        fi
    done
    case $rc in
    0) status="ok" ;;
    77) status="SKIPPED (exit 77: $(grep -m 1 -o 'needs compute capability.*\|no CUDA device.*' "$log" || echo 'no rung could run'))" ;;
    *) status="FAILED (exit $rc)" ;;
    esac
    say "$name: rungs $(list_words "$set_rungs"): $status, $(data_rows "$csv") points, $((SECONDS - t0)) s${skipped:+, skipped$skipped}"
    if ((rc != 0)); then
        tail -n 5 "$log" | sed 's/^/    /' >&2
    fi
    printf '%s: rungs %s: %s, %s s, %s points%s\n' "$name" "$(list_words "$set_rungs")" "$status" \
        "$((SECONDS - t0))" "$(data_rows "$csv")" "${skipped:+, skipped$skipped}" >>"$WORK/run.txt"
    # 77 where nvidia-smi lists a GPU but the rungs need more: not a failure of the sweep
    [[ $rc == 0 || ($rc == 77 && $status == *"needs compute capability"*) ]]
}

# merge OUT HEADER NAME...: HEADER and the rows of each WORK/NAME.csv, in that order.
merge() {
    local out=$1 header=$2 f
    shift 2
    echo "$header" >"$out"
    for f in "$@"; do
        [[ -s $WORK/$f.csv ]] && awk 'NR > 1 && NF' "$WORK/$f.csv" >>"$out"
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
    local msg
    [[ $SHAPES_FILE == none ]] && return 0
    [[ -f $SHAPES_FILE && -r $SHAPES_FILE ]] || die "SHAPES: $SHAPES_NAME is not a readable file"
    msg=$("$BIN_DIR/ladder" --shapes "$SHAPES_FILE" --help 2>&1 >/dev/null) ||
        die "SHAPES: the harness refuses the shape set: ${msg:-exit status $?}"
}

# random_args: the harness's arguments for the random shapes (none when RANDOM_SHAPES=0).
random_args() {
    if ((RANDOM_SHAPES > 0)); then echo "--random $RANDOM_SHAPES --seed $RANDOM_SEED"; fi
}

# anchors_args "RUNGS" NAME: --anchors WORK/NAME_anchors.csv when a rung of RUNGS is Part II's.
anchors_args() {
    local n
    for n in $1; do
        if ((n >= PART2_FIRST)); then
            echo "--anchors $WORK/${2}_anchors.csv"
            return
        fi
    done
}

# cut_short_summary CSV: "rung NN at sizes..." for the points the budget cut short.
cut_short_summary() {
    awk -F, 'NR > 1 && $9 == 1 { s[$3] = s[$3] " " $5; if (!($3 in seen)) { seen[$3] = 1; o[++n] = $3 } }
        END { for (i = 1; i <= n; i++) printf "  rung %02d at%s\n", o[i], s[o[i]]; if (!n) print "  none" }' "$1"
}

gpu_query() {
    nvidia-smi -i "$DEVICE" --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -n 1 || true
}

main() {
    local n out_dir csv gpu t_post failed=0 post_rc=0 slow="" rest="" top sets=()
    trap on_interrupt INT TERM
    require_gpu
    [[ -x $BIN_DIR/ladder ]] || die "$BIN_DIR/ladder is not built (run 'make all' first)"
    RUNG_LIST=$(rungs | sort -n | uniq | tr '\n' ' ')
    [[ -n ${RUNG_LIST// /} ]] || die "no rungs in $STEPS_DIR/"
    check_shape_set
    mkdir -p "$RESULTS_DIR"
    WORK=$(mktemp -d "$RESULTS_DIR/.sweep.XXXXXX")
    T0=$SECONDS
    {
        echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "gpu: $(gpu_query name)"
        echo "driver: $(gpu_query driver_version)"
        echo "cuda: $(bench_cuda_version)"
        echo "replays: the harness's rule, max(10, 800000/size) a kernel${BUDGET:+, cut to $BUDGET s}"
        echo "gpu state before: $(gpu_query clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu)"
    } >"$WORK/run.txt"

    for n in $RUNG_LIST; do
        if [[ -z ${SIZES:-} ]] && is_slow "$n"; then slow="$slow $n"; else rest="$rest $n"; fi
    done
    say "rungs: $(list_words "$RUNG_LIST")"
    if [[ -n $slow ]]; then
        run_set slow "$slow" "$(tr ',' ' ' <<<"$SLOW_SIZES" | wc -w)" --sizes "$SLOW_SIZES" \
            --power "$POWER_S" || failed=1
        sets+=(slow)
    fi
    if [[ -n $rest ]]; then
        local sizes=${SIZES:-$LADDER_SIZES}
        # shellcheck disable=SC2046 # anchors_args is words on purpose
        run_set ladder "$rest" "$(tr ',' ' ' <<<"$sizes" | wc -w)" --sizes "$sizes" \
            --power "$POWER_S" $(anchors_args "$rest" ladder) || failed=1
        sets+=(ladder)
    fi
    top=$(top_rungs | tr '\n' ' ')
    if [[ -z ${SIZES:-} && -n ${top// /} ]]; then
        # shellcheck disable=SC2046
        run_set sweep "$top" "$(grid_sizes | tr ',' ' ' | wc -w)" --sizes "$(grid_sizes)" \
            --power "$POWER_S" $(anchors_args "$top" sweep) || failed=1
        sets+=(sweep)
    fi

    csv=$WORK/bench.csv
    merge "$csv" "$BENCH_CSV_HEADER" "${sets[@]}"
    if ! bench_csv_check "$csv" 2>/dev/null; then
        die "nothing was measured (logs in $WORK)"
    fi
    gpu=$(bench_device "$csv")
    out_dir=$RESULTS_DIR/$(bench_slug "$gpu")
    mkdir -p "$out_dir"
    cp "$csv" "$out_dir/bench.csv"
    rm -f "$out_dir/anchors.csv"
    if compgen -G "$WORK/*_anchors.csv" >/dev/null; then
        merge "$out_dir/anchors.csv" "$ANCHORS_CSV_HEADER" ladder_anchors sweep_anchors
        [[ $(data_rows "$out_dir/anchors.csv") -gt 0 ]] || rm -f "$out_dir/anchors.csv"
    fi
    say "wrote $out_dir/bench.csv ($(data_rows "$csv") points) in $((SECONDS - T0)) s"
    if awk -F, 'NR > 1 && $20 != "PASS" { f = 1 } END { exit !f }' "$csv"; then
        say "WARNING: some timed outputs did not match cuBLAS (check = FAIL in the CSV)"
        failed=1
    fi

    if [[ $SHAPES_FILE != none && -n ${top// /} ]]; then
        echo "shapes: $SHAPES_NAME, $(shape_count "$SHAPES_FILE") shapes$(
            ((RANDOM_SHAPES > 0)) && echo " and $RANDOM_SHAPES random ($(random_args))")" >>"$WORK/run.txt"
        # shellcheck disable=SC2046
        run_set shapes "$top" "$(($(shape_count "$SHAPES_FILE") + RANDOM_SHAPES))" \
            --shapes "$SHAPES_FILE" --power 0 $(random_args) || failed=1
        rm -f "$out_dir"/shapes.csv "$out_dir"/shapes.txt "$out_dir"/shapes.png "$out_dir"/shapes.svg
        merge "$WORK/shapes_all.csv" "$BENCH_CSV_HEADER" shapes
        if bench_csv_check "$WORK/shapes_all.csv" 2>/dev/null; then
            cp "$WORK/shapes_all.csv" "$out_dir/shapes.csv"
            cp "$SHAPES_FILE" "$out_dir/shapes.txt"
            say "wrote $out_dir/shapes.csv ($(data_rows "$out_dir/shapes.csv") rows)"
            if awk -F, 'NR > 1 && $20 != "PASS" { f = 1 } END { exit !f }' "$out_dir/shapes.csv"; then
                say "WARNING: some timed shapes did not match cuBLAS (check = FAIL in shapes.csv)"
                failed=1
            fi
        else
            say "shapes: nothing was measured, no $out_dir/shapes.csv"
            failed=1
        fi
    fi
    {
        cat "$WORK/run.txt"
        echo "gpu state after: $(gpu_query clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu)"
        echo "date: $(date -u +%F)"
        echo "wall_s: $((SECONDS - T0))"
        echo "cut short by the time budget:"
        cut_short_summary "$out_dir/bench.csv"
    } >"$out_dir/run.txt"
    rm -rf "$WORK"
    WORK=""

    if [[ ${SWEEP_POST:-1} != 0 ]]; then
        t_post=$SECONDS
        "${MAKE:-make}" plots || post_rc=$?
        "${MAKE:-make}" readme-table BENCH_CSV="$out_dir/bench.csv" || post_rc=$?
        echo "post_wall_s: $((SECONDS - t_post))" >>"$out_dir/run.txt"
    fi
    ((failed == 0 && post_rc == 0)) || exit 1
}

# Sourced (tests/test_tools.sh calls follow alone), it defines the functions and runs nothing.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
