#!/usr/bin/env bash
# test_tools.sh - scripts/sweep.sh, scripts/inspect.sh, scripts/profile_table.sh and
# tests/gpu_tests.sh without a GPU: stand-ins for nvidia-smi, the rung binaries, make,
# cuobjdump, ncu and compute-sanitizer exercise every path, including the "no GPU" and
# "tool missing" refusals, and a GPU that nvidia-smi lists but CUDA cannot use.
# usage: tests/test_tools.sh   Ends with "N passed, M failed".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
readonly FIX=$ROOT/tests/fixtures
readonly GPU_SLUG=nvidia-h100-80gb-hbm3
# shellcheck source=tests/lib/assert.sh
source "$ROOT/tests/lib/assert.sh"

T=""
cleanup() {
    if [[ -n $T ]]; then rm -rf "$T"; fi
}

# make_fakes: the stand-in tools and a three-rung ladder under $T.
make_fakes() {
    mkdir -p "$T/gpu" "$T/nogpu" "$T/steps" "$T/bin" "$T/build"
    # nvidia-smi that sees one H100, and one that sees none (as the real one: exit 6)
    cat >"$T/gpu/nvidia-smi" <<'SH'
#!/usr/bin/env bash
case "$*" in
*-L*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-fake)" ;;
*query-compute-apps*) ;;
*driver_version*) echo "580.65.06" ;;
*query-gpu=name*) echo "NVIDIA H100 80GB HBM3" ;;
*query-gpu=*) echo "1980 MHz, 1980 MHz, 70.00 W, 700.00 W, 35" ;;
esac
SH
    printf '#!/usr/bin/env bash\necho "No devices were found"\nexit 6\n' >"$T/nogpu/nvidia-smi"
    # make that logs its arguments, and whether the shape set's CSV was there by then
    cat >"$T/gpu/make" <<SH
#!/usr/bin/env bash
s=""; if [[ -e "$T/results/$GPU_SLUG/shapes.csv" ]]; then s=" (with shapes.csv)"; fi
echo "make \$*\$s" >>"$T/make.log"
SH
    # the rungs' sources: comments, __launch_bounds__ and several kernels per file
    printf '/* rung 01: __global__ in a comment is not a kernel(x) */\n__global__ void sgemm_alpha(int m) { (void)m; }\n' >"$T/steps/01_alpha.cu"
    printf '#define T 256\n__global__ void __launch_bounds__(T * 1)\nsgemm_beta(int m) { (void)m; } // __global__ void not_me(\n' >"$T/steps/02_beta.cu"
    printf '__global__ void sgemm_blocktiling_2d(int m) { (void)m; }\n__global__ void\nsgemm_gamma_edge(int m) { (void)m; }\n' >"$T/steps/03_gamma.cu"
    # bin/stepNN for the inspect tests: the stand-in tools run nothing of it
    printf '#!/usr/bin/env bash\necho "${0##*/} $*" >>"${0%%/bin/*}/calls.log"\n' >"$T/fake_step"
    chmod +x "$T/gpu/nvidia-smi" "$T/nogpu/nvidia-smi" "$T/gpu/make" "$T/fake_step"
    ln -s ../fake_step "$T/bin/step01"
    ln -s ../fake_step "$T/bin/step02"
    ln -s ../fake_step "$T/bin/step03"
    # cuobjdump that prints the fixture listing
    printf '#!/usr/bin/env bash\ncat "%s"\n' "$FIX/inspect/sass_sm90.txt" >"$T/cuobjdump"
    # ncu that records its arguments and writes a fixture report to --log-file
    cat >"$T/ncu" <<SH
#!/usr/bin/env bash
# asked which metrics the GPU has: the mma.sync tensor pipe, not wgmma's (as on an sm_80 GPU)
if [[ "\$*" == *--query-metrics* ]]; then
    printf 'sm__pipe_fma_cycles_active  Counter  # of cycles where FMA was active\n'
    printf 'sm__pipe_tensor_op_hmma_cycles_active  Counter  # of cycles where HMMA was active\n'
    exit 0
fi
echo "\$*" >"$T/ncu.args"
while ((\$#)); do if [[ \$1 == --log-file ]]; then log=\$2; fi; shift; done
{ echo "==PROF== Connected to process 4242"; cat "$FIX/profile/step05.csv"; tail -n +2 "$FIX/profile/cublas.csv"; } >"\$log"
SH
    # compute-sanitizer: clean, except the tool named in FAKE_SAN_FAIL
    cat >"$T/compute-sanitizer" <<SH
#!/usr/bin/env bash
echo "\$*" >>"$T/sanitizer.args"
if [[ "\$*" == *"--tool \${FAKE_SAN_FAIL:-none} "* ]]; then echo "========= ERROR SUMMARY: 1 error"; exit 99; fi
echo "========= ERROR SUMMARY: 0 errors"
SH
    chmod +x "$T/cuobjdump" "$T/ncu" "$T/compute-sanitizer"
    touch "$T/build/03_gamma.o"
    cp "$FIX/inspect/ptxas.log" "$T/build/03_gamma.log"
}

# make_fake_ladder: bin/ladder as the sweep calls it: one CSV row per point and rung of
# --steps, from --sizes, or a --shapes file (whose lines it checks as the harness does,
# loosely: exit 2 and "FILE:LINE: ...") and --random; the rungs in FAKE_SKIP skipped with the
# harness's line (exit 77 when none is left); FAKE_EXIT (the square sets) and
# FAKE_SHAPES_EXIT (with --shapes) set its exit status; a point is cut short when --budget is
# under 3600 and the size at least 4096; every call's arguments go to calls.log.
make_fake_ladder() {
    cat >"$T/bin/ladder" <<'SH'
#!/usr/bin/env bash
echo "ladder $*" >>"${0%/bin/*}/calls.log"
steps="" sizes="" csv="" shapes="" help=0 anchors="" random=0 budget=2
while (($#)); do
    case $1 in --steps) steps=$2; shift ;; --sizes) sizes=$2; shift ;; --csv) csv=$2; shift ;;
    --shapes) shapes=$2; shift ;; --help) help=1 ;; --anchors) anchors=$2; shift ;;
    --random) random=$2; shift ;; --budget) budget=$2; shift ;; --seed) shift ;; esac
    shift
done
points=()
if [[ -n $shapes ]]; then
    [[ -r $shapes ]] || { echo "--shapes $shapes: cannot open" >&2; exit 2; }
    bad=$(awk '{ sub(/#.*/, "") } NF && !($1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/) { print FILENAME ":" FNR ": bad shape"; exit }' "$shapes")
    [[ -z $bad ]] || { echo "$bad" >&2; exit 2; }
    mapfile -t points < <(awk '{ sub(/#.*/, "") } NF { print $1 "," $2 "," $3 }' "$shapes")
    code=${FAKE_SHAPES_EXIT:-0}
else
    for s in ${sizes//,/ }; do points+=("$s,$s,$s"); done
    code=${FAKE_EXIT:-0}
fi
for ((r = 0; r < random; r++)); do points+=("$((100 + r)),200,300"); done
((help)) && exit 0
run=()
for n in ${steps//,/ }; do
    if [[ " ${FAKE_SKIP:-} " == *" $n "* ]]; then
        printf '%s: rung %02d (fake) needs compute capability 9.0; device 0 (NVIDIA A100) is 8.0 (skipped)\n' "${0##*/}" "$n" >&2
    else
        run+=("$n")
    fi
done
((${#run[@]} > 0)) || exit 77
if [[ -n $anchors ]]; then : >>"$anchors"; fi
for p in "${points[@]}"; do
    for n in "${run[@]}"; do
        [[ -s $csv ]] || echo "device,cc,step,slug,M,N,K,reps,cut_short,ms_mean,ms_median,ms_min,ms_max,gflops,gflops_median,cublas_ms_mean,cublas_gflops,ratio,rel_err,check,sm_clock_mhz,mem_clock_mhz,power_w,energy_mj,throttle,cublas_sm_clock_mhz,cublas_power_w,cublas_energy_mj,exact,err_max_u,err_rms,cublas_err_max_u,cublas_err_rms,seq_err_max_u,seq_err_rms,precision" >"$csv"
        cut=0; if [[ $budget != 3600 ]] && ((${p%%,*} >= 4096)); then cut=1; fi
        echo "NVIDIA H100 80GB HBM3,90,$n,fake,$p,10,$cut,1.0,1.0,1.0,1.0,$((n * 1000)).0,1000.0,1.0,50000.0,0.0200,1.0e-07,PASS,1980,2619,400.0,1.0,0x0,1980,420.0,1.0,PASS,2.5,1.1e-07,2.4,1.0e-07,3.0,1.2e-07,PASS" >>"$csv"
    done
    if [[ -n $anchors ]]; then
        [[ -s $anchors ]] || echo "device,cc,M,N,K,cublas_gflops,cublas_err_max_u,cublas_err_rms,tf32_gflops,tf32_ratio,tf32_err_max_u,tf32_err_rms,x3_gflops,x3_ratio,x3_err_max_u,x3_err_rms" >"$anchors"
        echo "NVIDIA H100 80GB HBM3,90,$p,50000.0,5.5,1.1e-06,110000.0,2.2000,470.0,2.6e-04,100000.0,2.0000,15.0,9.6e-06" >>"$anchors"
    fi
done
exit "$code"
SH
    chmod +x "$T/bin/ladder"
}

# env for the scripts: the fake ladder, results under $T, no real CUDA tools.
fake_env() {
    env SWEEP_POLL=0.1 STEPS_DIR="$T/steps" BIN_DIR="$T/bin" BUILD_DIR="$T/build" RESULTS_DIR="$T/results" \
        RANDOM_SHAPES="${RANDOM_SHAPES:-0}" \
        CUDA_HOME="$T/no-cuda" CUOBJDUMP="$T/no-such-cuobjdump" NCU="$T/no-such-ncu" \
        SANITIZER="$T/no-such-sanitizer" "$@"
}

# rows_of CSV STEP: the data rows of rung STEP.
rows_of() {
    awk -F, -v s="$2" 'NR > 1 && $3 == s' "$1" | wc -l
}

# ladder_calls: the timing calls of bin/ladder in calls.log (not the shape set's --help check).
ladder_calls() {
    grep -c -- '^ladder .*--csv' "$T/calls.log" || true
}

# The default plan: one process per point set (slow, ladder, sweep, shapes), nothing cut short.
test_sweep() {
    local out rc dir=$T/results/$GPU_SLUG csv=$T/results/$GPU_SLUG/bench.csv n_default
    n_default=$(awk '{ sub(/#.*/, "") } NF { n++ } END { print n }' "$ROOT/shapes/default.txt")
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" "$ROOT/scripts/sweep.sh"
    check_exit "sweep: runs the ladder" 0 "$rc"
    check "sweep: the CSV header is the harness's" test "$(head -n 1 "$csv")" == "$(head -n 1 "$FIX/bench.csv")"
    check "sweep: 5 + 2 x 6 + 30 points" test "$(($(wc -l <"$csv") - 1))" == 47
    check "sweep: rung 01 apart, up to 4096" test "$(awk -F, '$3 == 1 { m = $5 } END { print m }' "$csv")" == 4096
    check "sweep: rung 02 at the powers of two" test "$(rows_of "$csv" 2)" == 6
    check "sweep: the last rung every 256 and off the grid" test "$(rows_of "$csv" 3)" == 36
    check "sweep: 1088 among them" test "$(awk -F, '$3 == 3 && $5 == 1088' "$csv" | wc -l)" == 1
    check "sweep: no size twice" test "$(awk -F, 'NR > 1 { print $3, $5 }' "$csv" | sort | uniq -d | wc -l)" == 0
    check "sweep: one process a point set" test "$(ladder_calls)" == 4
    check_file_contains "sweep: the slow set" "$T/calls.log" "ladder --steps 1 --no-check --quiet --device 0 --budget 3600 --csv"
    check_file_contains "sweep: the ladder set" "$T/calls.log" "ladder --steps 2,3 --no-check"
    check_file_contains "sweep: its sizes" "$T/calls.log" "--sizes 256,512,1024,2048,4096,8192 --power 0.05"
    check_file_contains "sweep: the shape set on the last rung" "$T/calls.log" \
        "ladder --steps 3 --no-check --quiet --device 0 --budget 3600 --csv"
    check "sweep: shapes.csv, a row per shape" test "$(rows_of "$dir/shapes.csv" 3)" == "$n_default"
    check "sweep: the set copied beside it" cmp -s "$dir/shapes.txt" "$ROOT/shapes/default.txt"
    check_contains "sweep: progress lines" "$out" "sweep: ladder: points 12/12"
    check_contains "sweep: each set's line" "$out" "sweep: sweep: rungs 03: ok, 30 points"
    check_file_contains "sweep: run.txt has the sets" "$dir/run.txt" "ladder: rungs 02 03: ok"
    check_file_contains "sweep: run.txt: nothing cut short" "$dir/run.txt" "  none"
    check_file_contains "sweep: run.txt names the shape set" "$dir/run.txt" "shapes: shapes/default.txt, $n_default shapes"
    check_file_contains "sweep: make plots" "$T/make.log" "make plots"
    check_file_contains "sweep: make readme-table with the CSV" "$T/make.log" "make readme-table BENCH_CSV=$csv"
    check "sweep: no work folder left behind" test -z "$(find "$T/results" -maxdepth 1 -name '.sweep.*')"

    # SIZES: every rung in one set, no sweep set; BUDGET cuts, and says where; a skipped rung
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=256,1024,4096 BUDGET=0.5 \
        FAKE_SKIP=3 SHAPES=none "$ROOT/scripts/sweep.sh"
    check_exit "sweep: SIZES" 0 "$rc"
    check "sweep: SIZES, one set" test "$(ladder_calls)" == 1
    check "sweep: 2 rungs x 3 sizes" test "$(($(wc -l <"$csv") - 1))" == 6
    check_file_contains "sweep: BUDGET given" "$T/calls.log" "--budget 0.5"
    check_contains "sweep: a skipped rung is said" "$out" "skipped 3"
    check_file_contains "sweep: cut-short points listed" "$dir/run.txt" "rung 01 at 4096"

    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 FAKE_EXIT=1 SHAPES=none "$ROOT/scripts/sweep.sh"
    check_exit "sweep: a failing set fails the sweep" 1 "$rc"
    check_contains "sweep: and says which" "$out" "ladder: rungs 01 02 03: FAILED (exit 1)"
    check "sweep: what it measured is still saved" test "$(($(wc -l <"$csv") - 1))" == 3

    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 FAKE_SKIP="1 2 3" "$ROOT/scripts/sweep.sh"
    check_exit "sweep: nothing measured" 1 "$rc"
    check_contains "sweep: says nothing was measured" "$out" "nothing was measured"

    run_capture out rc fake_env PATH="$T/nogpu:$PATH" "$ROOT/scripts/sweep.sh"
    check_exit "sweep: no GPU" 1 "$rc"
    check_contains "sweep: says it needs a GPU" "$out" "needs an NVIDIA GPU"
    check "sweep: no GPU is one line" test "$(printf '%s\n' "$out" | wc -l)" == 1

    run_capture out rc fake_env PATH="$T/gpu:$PATH" STEPS="1 7" "$ROOT/scripts/sweep.sh"
    check_exit "sweep: STEPS with an unknown rung" 1 "$rc"
    check_contains "sweep: names it" "$out" "there is no rung 7"
}

# follow's last line, without timing: sweep.sh sourced defines its functions and runs nothing.
# shellcheck disable=SC2016 # the bash -c script expands its own arguments
test_sweep_progress() {
    local out rc csv=$T/progress.csv
    printf 'header\nrow\nrow\n' >"$csv"
    run_capture out rc bash -c 'source "$1"; line() { echo "status $1"; }
        (exit 4) & CHILD_PID=$!; SWEEP_POLL=0.01 follow "$2" line' _ "$ROOT/scripts/sweep.sh" "$csv"
    check_exit "follow: returns the child's status" 4 "$rc"
    check "follow: the final rows shown exactly once" test "$out" == "sweep: status 2"
}

# Part II's rungs (from 20): the references beside them, anchors.csv; STEPS: the shape set on
# every rung it names.
test_sweep_part2() {
    local out rc dir=$T/results/$GPU_SLUG n_default
    n_default=$(awk '{ sub(/#.*/, "") } NF { n++ } END { print n }' "$ROOT/shapes/default.txt")
    printf '__global__ void sgemm_delta(int m) { (void)m; }\n' >"$T/steps/20_delta.cu"
    rm -f "$dir/anchors.csv"
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=256,1024 STEPS="2 20" "$ROOT/scripts/sweep.sh"
    check_exit "part II: a ladder with rung 20" 0 "$rc"
    check "part II: the set with --anchors" test "$(grep -c -- '^ladder --steps 2,20 .*--sizes 256,1024 .*--anchors ' "$T/calls.log")" == 1
    check "part II: anchors.csv, one header and a row per size" test "$(wc -l <"$dir/anchors.csv")" == 3
    check "part II: anchors.csv's header" test "$(head -n 1 "$dir/anchors.csv" | cut -d, -f9)" == tf32_gflops
    check "part II: STEPS: the shape set on rung 02" test "$(rows_of "$dir/shapes.csv" 2)" == "$n_default"
    check "part II: and on rung 20" test "$(rows_of "$dir/shapes.csv" 20)" == "$n_default"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=256 SHAPES=none STEPS="2 3" "$ROOT/scripts/sweep.sh"
    check_exit "part II: without it" 0 "$rc"
    check "part II: no anchors.csv left over" test ! -e "$dir/anchors.csv"
    rm -f "$T/steps/20_delta.cu"
}

# in_dir DIR COMMAND...: COMMAND run from DIR.
in_dir() {
    local dir=$1
    shift
    (cd "$dir" && "$@")
}

# The shape set: random shapes, SHAPES relative to the caller, the refusals.
test_sweep_shapes() {
    local out rc dir=$T/results/$GPU_SLUG n_default n_fix before
    n_default=$(awk '{ sub(/#.*/, "") } NF { n++ } END { print n }' "$ROOT/shapes/default.txt")
    n_fix=$(awk '{ sub(/#.*/, "") } NF { n++ } END { print n }' "$FIX/shapes.txt")
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SIZES=256 RANDOM_SHAPES=3 RANDOM_SEED=5 SWEEP_POST=0 "$ROOT/scripts/sweep.sh"
    check_exit "shapes: and random ones" 0 "$rc"
    check_file_contains "shapes: --random and --seed given" "$T/calls.log" " --random 3 --seed 5"
    check "shapes: their rows too" test "$(rows_of "$dir/shapes.csv" 3)" == "$((n_default + 3))"
    check_file_contains "shapes: run.txt names them" "$dir/run.txt" "$n_default shapes and 3 random (--random 3 --seed 5)"
    check "shapes: the set checked first" test "$(head -n 1 "$T/calls.log")" == "ladder --shapes $ROOT/shapes/default.txt --help"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SIZES=256 RANDOM_SHAPES=x "$ROOT/scripts/sweep.sh"
    check_exit "shapes: a bad RANDOM_SHAPES" 1 "$rc"
    check_contains "shapes: says so" "$out" "RANDOM_SHAPES must be 0..512"

    : >"$T/calls.log"
    run_capture out rc in_dir "$FIX" fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 SHAPES=shapes.txt "$ROOT/scripts/sweep.sh"
    check_exit "shapes: SHAPES from the caller's folder" 0 "$rc"
    check "shapes: its rows" test "$(rows_of "$dir/shapes.csv" 3)" == "$n_fix"
    check "shapes: SHAPES copied beside the CSV" cmp -s "$dir/shapes.txt" "$FIX/shapes.txt"

    before=$(cksum <"$dir/shapes.csv")
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 SHAPES=none "$ROOT/scripts/sweep.sh"
    check_exit "shapes: SHAPES=none" 0 "$rc"
    check_not_contains "shapes: SHAPES=none runs no shape set" "$(cat "$T/calls.log")" "--shapes"
    check "shapes: SHAPES=none leaves shapes.csv" test "$before" == "$(cksum <"$dir/shapes.csv")"

    # a bad shape set is refused before anything is timed, with the harness's message
    printf '1 2 3\n4 x 6\n' >"$T/bad_shapes.txt"
    before=$(cksum <"$dir/bench.csv")
    : >"$T/calls.log"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 SHAPES="$T/bad_shapes.txt" "$ROOT/scripts/sweep.sh"
    check_exit "shapes: a bad set fails the sweep" 1 "$rc"
    check_contains "shapes: with the harness's message" "$out" "SHAPES: the harness refuses the shape set: $T/bad_shapes.txt:2: bad shape"
    check "shapes: before any timing" test "$(wc -l <"$T/calls.log")" == 1
    check "shapes: bench.csv untouched" test "$before" == "$(cksum <"$dir/bench.csv")"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 SHAPES="$T/no_such_set.txt" "$ROOT/scripts/sweep.sh"
    check_exit "shapes: a missing set fails the sweep" 1 "$rc"
    check_contains "shapes: and says so" "$out" "SHAPES: $T/no_such_set.txt is not a readable file"

    # the shape set failing fails the sweep, and keeps bench.csv
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SWEEP_POST=0 SIZES=512 FAKE_SHAPES_EXIT=3 "$ROOT/scripts/sweep.sh"
    check_exit "shapes: a failing shape run fails the sweep" 1 "$rc"
    check_contains "shapes: and says which" "$out" "shapes: rungs 03: FAILED (exit 3)"
    check "shapes: bench.csv is still written" test "$(rows_of "$dir/bench.csv" 3)" == 1


    # the harness itself (built by make test): a bad shape file is a usage error, exit 2,
    # refused before it looks for a GPU
    if [[ -x $ROOT/bin/step01 ]]; then
        run_capture out rc "$ROOT/bin/step01" --no-check --shapes "$T/bad_shapes.txt"
        check_exit "harness: a bad shape file exits 2" 2 "$rc"
        check_contains "harness: naming file and line" "$out" "$T/bad_shapes.txt:2: N 'x' is not an integer in 1..65536"
        run_capture out rc "$ROOT/bin/step01" --shapes "$T/no_such_set.txt"
        check_exit "harness: a missing shape file exits 2" 2 "$rc"
        check_contains "harness: says it cannot open it" "$out" "--shapes $T/no_such_set.txt: cannot open: No such file or directory"
        run_capture out rc "$ROOT/bin/step01" --shapes "$ROOT/shapes/default.txt" --help
        check_exit "harness: reads the default set" 0 "$rc"
        check_contains "harness: --shapes in the usage" "$out" "--shapes FILE"
    else
        echo "skip: the harness on bad shape files (no bin/step01: make step=1)"
    fi
}

# tests/gpu_tests.sh with a stand-in nvidia-smi and stand-in binaries: exit 77 from a rung is
# a skip only for a GPU below its compute capability; "no CUDA device" on a machine whose
# nvidia-smi lists a GPU, CUDA failing to start, or no rung running at all is a failure.
test_gpu_tests() {
    local out rc g=$T/gpu_tests n
    mkdir -p "$g/bin" "$g/contract" "$g/tools"
    # a rung: FAKE_GPU_<name>, else FAKE_GPU, picks what it does (the harness's messages)
    cat >"$g/fake_rung" <<'SH'
#!/usr/bin/env bash
name=${0##*/} var=FAKE_GPU_${0##*/}
case ${!var:-${FAKE_GPU:-ok}} in
nodev) echo "$0: no CUDA device: cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device is detected)" >&2; exit 77 ;;
below_cc) echo "$0: rung ${name#step} (fake) needs compute capability 9.0; device 0 (NVIDIA A100-SXM4-80GB) is 8.0" >&2; exit 77 ;;
old_driver) echo "$0: CUDA did not start: the driver is older than the runtime (driver: CUDA 12.2, runtime: CUDA 13.0; update the driver or build with an older toolkit): cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)" >&2; exit 3 ;;
esac
if [[ " $* " == *" --check "* ]]; then echo "check matrix: 273 cases, 0 failed"; fi
SH
    # a launch-contract test: FAKE_CONTRACT=nodev finds no device (tests/gpu_contract.c's line)
    cat >"$g/fake_contract" <<'SH'
#!/usr/bin/env bash
if [[ ${FAKE_CONTRACT:-ok} == nodev ]]; then echo "skip $1 $2x$3x$4: no CUDA device (no CUDA-capable device is detected)"; exit 77; fi
if [[ $1 == devices && ${FAKE_DEVICES:-two} == one ]]; then echo "skip $1 $2x$3x$4: fewer than two CUDA devices of compute capability 5.0 or more (1)"; exit 77; fi
if [[ $1 == paths ]]; then
  case ${FAKE_PATHS:-ok} in
  never) echo "FAIL paths: never ran: stream-k (SMs=132; shapes tried: 18048x256x128 (for stream-k): whole-small)"; exit 1 ;;
  one) echo "ok paths: one path" ;;
  *) echo "ok paths: whole-large@16896x256x128 stream-k@18048x256x128" ;;
  esac
  exit 0
fi
echo "ok $1 $2x$3x$4: bit-identical"
SH
    printf '#!/usr/bin/env bash
echo "========= ERROR SUMMARY: 0 errors"
' >"$g/tools/compute-sanitizer"
    chmod +x "$g/fake_rung" "$g/fake_contract" "$g/tools/compute-sanitizer"
    for n in 01 14; do
        ln -s ../fake_rung "$g/bin/step$n"
        ln -s ../fake_contract "$g/contract/contract_$n"
    done
    gpu_env() {
        env GPU_TEST_LOGS="$g/logs" GPU_CONTRACT_DIR="$g/contract" GPU_TEST_JOBS=2 "$@"
    }
    # the same with the stand-in nvidia-smi that lists a GPU first on PATH
    with_gpu() {
        gpu_env PATH="$T/gpu:$g/tools:$PATH" "$@"
    }

    run_capture out rc gpu_env PATH="$T/nogpu:$g/tools:$PATH" "$ROOT/tests/gpu_tests.sh" "$g/bin/step01"
    check_exit "gpu_tests: nvidia-smi lists no GPU: a visible skip" 77 "$rc"
    check_contains "gpu_tests: says why it skips" "$out" "SKIP: no GPU here"

    run_capture out rc with_gpu FAKE_GPU=nodev "$ROOT/tests/gpu_tests.sh" "$g/bin/step01" "$g/bin/step14"
    check_exit "gpu_tests: a listed GPU that every rung cannot see fails" 1 "$rc"
    check_contains "gpu_tests: names the rung" "$out" "FAIL step01: no CUDA device, but nvidia-smi lists a GPU (exit 77)"
    check_contains "gpu_tests: with the rung's message" "$out" "cudaErrorNoDevice"
    check_contains "gpu_tests: and every rung" "$out" "FAIL step14: no CUDA device"
    check_contains "gpu_tests: no rung ran" "$out" "FAIL: nvidia-smi lists a GPU, but no rung ran"
    check_not_contains "gpu_tests: no skip" "$out" "skip step"

    run_capture out rc with_gpu FAKE_GPU=old_driver "$ROOT/tests/gpu_tests.sh" "$g/bin/step01"
    check_exit "gpu_tests: a driver older than the runtime fails" 1 "$rc"
    check_contains "gpu_tests: shows the versions" "$out" "driver: CUDA 12.2, runtime: CUDA 13.0"

    run_capture out rc with_gpu FAKE_GPU_step14=below_cc "$ROOT/tests/gpu_tests.sh" "$g/bin/step01" "$g/bin/step14"
    check_exit "gpu_tests: a rung below the GPU's compute capability is a skip" 0 "$rc"
    check_contains "gpu_tests: the skip says why" "$out" "skip step14: $g/bin/step14: rung 14 (fake) needs compute capability 9.0"
    check_contains "gpu_tests: the other rung ran" "$out" "ok   step01 check matrix: check matrix: 273 cases, 0 failed"
    check_contains "gpu_tests: its contract ran" "$out" "ok   step01 contract capture: 256x256x4096 1000x1000x999"
    check_contains "gpu_tests: and its paths" "$out" "ok   step01 contract paths: whole-large@16896x256x128 stream-k@18048x256x128"
    check_contains "gpu_tests: the summary counts it" "$out" "GPU tests: 2 binaries, 1 ran, 0 with failures"
    check_contains "gpu_tests: says where the time went" "$out" "time step01: check "
    check_contains "gpu_tests: a thread on each GPU where there are several" "$out" "ok   step01 contract devices: 256x256x4096 1000x1000x999"

    run_capture out rc with_gpu FAKE_DEVICES=one "$ROOT/tests/gpu_tests.sh" "$g/bin/step01"
    check_exit "gpu_tests: one GPU: the devices test is a skip" 0 "$rc"
    check_contains "gpu_tests: the skip says why" "$out" "skip step01 contract devices: fewer than two CUDA devices of compute capability 5.0 or more (1)"
    check "gpu_tests: said once, not at every shape" test "$(grep -c "contract devices" <<<"$out")" = 1
    check_contains "gpu_tests: the other modes ran" "$out" "ok   step01 contract threads: 256x256x4096 1000x1000x999"
    check_not_contains "gpu_tests: nothing failed" "$out" "FAIL"

    run_capture out rc with_gpu FAKE_GPU=below_cc "$ROOT/tests/gpu_tests.sh" "$g/bin/step14"
    check_exit "gpu_tests: every rung skipped is no pass" 1 "$rc"
    check_contains "gpu_tests: says no rung ran" "$out" "FAIL: nvidia-smi lists a GPU, but no rung ran"

    run_capture out rc with_gpu FAKE_CONTRACT=nodev "$ROOT/tests/gpu_tests.sh" "$g/bin/step01"
    check_exit "gpu_tests: a contract test that finds no device fails" 1 "$rc"
    check_contains "gpu_tests: names it" "$out" "FAIL step01 contract capture 256x256x4096: no CUDA device, but nvidia-smi lists a GPU"

    run_capture out rc with_gpu FAKE_PATHS=never "$ROOT/tests/gpu_tests.sh" "$g/bin/step14"
    check_exit "gpu_tests: a launch path that never ran fails" 1 "$rc"
    check_contains "gpu_tests: names the path" "$out" "FAIL step14 contract paths (exit 1): never ran: stream-k (SMs=132;"
    # a workspace rung's cold capture on random floats, at its own shapes (in the parallel jobs'
    # shells too: the list is exported)
    check_contains "gpu_tests: a workspace rung's capture-random" "$out" \
        "ok   step14 contract capture-random: 256x256x4096 1024x1024x1024 2560x2560x256 2048x2048x512 1000x1000x999"
    run_capture out rc with_gpu FAKE_PATHS=one "$ROOT/tests/gpu_tests.sh" "$g/bin/step01"
    check_exit "gpu_tests: a rung of one path passes" 0 "$rc"
    check_contains "gpu_tests: says so" "$out" "ok   step01 contract paths: one path"

    # the phrase gpu_tests.sh reads is the one the harness prints (harness/gpu_startup.h)
    check_file_contains "gpu_tests: the harness's below-capability phrase" "$ROOT/harness/gpu_startup.h" \
        '#define GPU_BELOW_CC_TEXT  "needs compute capability"'
    check_file_contains "gpu_tests: matches that phrase" "$ROOT/tests/gpu_tests.sh" "grep -q 'needs compute capability'"
    check_file_contains "gpu_tests: the contract test's one-GPU phrase" "$ROOT/tests/gpu_contract.c" "fewer than two CUDA devices"
    check_file_contains "gpu_tests: is the one it reads" "$ROOT/tests/gpu_tests.sh" 'grep -q "fewer than two CUDA devices" "$log"'
}

test_inspect_host() {
    local out rc
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" diff 1
    check_exit "diff 1: fine" 0 "$rc"
    check_contains "diff 1: there is no previous rung" "$out" "no previous rung"
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" diff 02
    check_exit "diff 2" 0 "$rc"
    check_contains "diff 2: git diff of 01 -> 02" "$out" "02_beta.cu"
    check_contains "diff 2: shows the new kernel" "$out" "+sgemm_beta(int m)"
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" diff 5
    check_exit "diff 5: no such rung" 1 "$rc"
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" diff x
    check_exit "a bad rung number" 1 "$rc"
    check_contains "a bad rung number is named" "$out" "'x' is not a rung number"
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" frobnicate 1
    check_exit "an unknown verb is a usage error" 2 "$rc"

    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" regs 3
    check_exit "regs 3" 0 "$rc"
    check_contains "regs: kernel, arch, registers, smem" "$out" "sgemm_tile                         sm_90     96      8192"
    check_contains "regs: spills flagged" "$out" "<- spills"
    check_contains "regs: ptxas warnings kept" "$out" "ptxas warning"

    run_capture out rc fake_env CUOBJDUMP="$T/cuobjdump" "$ROOT/scripts/inspect.sh" sass 3
    check_exit "sass 3" 0 "$rc"
    check_contains "sass: main loop start marked" "$out" "main loop starts (target of the backward branch at /*00d0*/)"
    check_contains "sass: main loop end marked" "$out" "main loop ends"
    check_contains "sass: main loop summary" "$out" "main loop: listing lines 19-29 (/*0030*/../*00d0*/), 11 instructions, FFMA 4"
    check_contains "sass: spills warned" "$out" "WARNING: local-memory loads/stores"
    check_not_contains "sass: encodings hidden" "$out" "0x000fe20000000800"
    run_capture out rc fake_env "$ROOT/scripts/inspect.sh" sass 3
    check_exit "sass: no cuobjdump" 1 "$rc"
    check_contains "sass: says cuobjdump is missing" "$out" "cuobjdump not found"
    run_capture out rc fake_env CUOBJDUMP="$T/cuobjdump" "$ROOT/scripts/inspect.sh" sass 2
    check_exit "sass: rung not built" 1 "$rc"
    check_contains "sass: says to build it" "$out" "make step=2"

    if command -v "${NVCC:-nvcc}" >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
        run_capture out rc fake_env CUDA_HOME=/usr/local/cuda "$ROOT/scripts/inspect.sh" ptx 1
        check_exit "ptx 1" 0 "$rc"
        check_contains "ptx: the kernel's entry" "$out" ".entry _Z11sgemm_alphai"
    else
        echo "skip: ptx (no nvcc)"
    fi
}

test_inspect_gpu() {
    local out rc verb
    for verb in profile sanitize; do
        run_capture out rc fake_env PATH="$T/nogpu:$PATH" "$ROOT/scripts/inspect.sh" "$verb" 2
        check_exit "$verb: no GPU" 1 "$rc"
        check_contains "$verb: says it needs a GPU" "$out" "needs an NVIDIA GPU"
        check "$verb: in one line" test "$(printf '%s\n' "$out" | wc -l)" == 1
    done
    run_capture out rc fake_env PATH="$T/gpu:$PATH" "$ROOT/scripts/inspect.sh" profile 2
    check_exit "profile: no ncu" 1 "$rc"
    check_contains "profile: says ncu is missing" "$out" "ncu (Nsight Compute) not found"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" "$ROOT/scripts/inspect.sh" sanitize 2
    check_exit "sanitize: no compute-sanitizer" 1 "$rc"
    check_contains "sanitize: says compute-sanitizer is missing" "$out" "compute-sanitizer not found"

    run_capture out rc fake_env PATH="$T/gpu:$PATH" NCU="$T/ncu" "$ROOT/scripts/inspect.sh" profile 2
    check_exit "profile 2 (stand-in ncu)" 0 "$rc"
    check_file_contains "profile: clocks not locked" "$T/ncu.args" "--clock-control none"
    check_file_contains "profile: the rung's kernels only" "$T/ncu.args" "-k regex:^(sgemm_beta)\$"
    check_file_contains "profile: the timing command" "$T/ncu.args" "--no-check --sizes 4096 --reps 3"
    check_file_contains "profile: bank-conflict metric" "$T/ncu.args" "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
    check_file_contains "profile: the tensor pipe this GPU has" "$T/ncu.args" "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
    check "profile: not the one it lacks" test "$(grep -c gmma "$T/ncu.args")" == 0
    check "profile: raw CSV kept" test -s "$T/results/$GPU_SLUG/profile/step02.csv"
    check_contains "profile: prints the table" "$out" "| 02 beta | \`sgemm_blocktiling_2d\` | 5.297 |"
    check_file_contains "profile: PROFILE.md written" "$T/results/$GPU_SLUG/PROFILE.md" "| 02 beta |"

    run_capture out rc fake_env PATH="$T/gpu:$PATH" NCU="$T/ncu" "$ROOT/scripts/inspect.sh" profile cublas
    [[ $rc == 0 ]] || echo "$out"
    check_exit "profile cublas" 0 "$rc"
    check_file_contains "profile cublas: cuBLAS kernel names" "$T/ncu.args" "-k regex:gemm|xmma|cutlass"
    check "profile cublas: the rung's own kernels dropped" test "$(grep -c sgemm_blocktiling_2d "$T/results/$GPU_SLUG/profile/cublas.csv")" == 0
    check_file_contains "profile cublas: cuBLAS row in PROFILE.md" "$T/results/$GPU_SLUG/PROFILE.md" "| cuBLAS | \`sm90_xmma_gemm"

    run_capture out rc fake_env PATH="$T/gpu:$PATH" SANITIZER="$T/compute-sanitizer" "$ROOT/scripts/inspect.sh" sanitize 2
    check_exit "sanitize 2 (stand-in, clean)" 0 "$rc"
    check "sanitize: four tools" test "$(grep -c -- '--tool' "$T/sanitizer.args")" == 4
    check_file_contains "sanitize: odd shapes, no timing" "$T/sanitizer.args" "--no-check --no-time --mnk 67,45,33 --mnk 130,131,17"
    run_capture out rc fake_env PATH="$T/gpu:$PATH" SANITIZER="$T/compute-sanitizer" FAKE_SAN_FAIL=racecheck "$ROOT/scripts/inspect.sh" sanitize 2
    check_exit "sanitize: a racecheck error fails" 1 "$rc"
    check_contains "sanitize: names the tool" "$out" "racecheck: ERRORS"
}

test_profile_table() {
    local out rc
    run_capture out rc env STEPS_DIR="$T/steps" "$ROOT/scripts/profile_table.sh" --stdout "$FIX/profile/cublas.csv" "$FIX/profile/step05.csv"
    check_exit "profile_table: fixtures" 0 "$rc"
    check_contains "profile_table: header" "$out" "| rung | kernel | time (ms) |"
    check_contains "profile_table: rung row" "$out" "| 05 | \`sgemm_blocktiling_2d\` | 5.297 | 9.9 | 1.5 | 88.4 | 4.00 | 4.00 | 0 | 16.78M | 4.00 | 24.9 | 61.2 | 0.0 | 128 | mio_throttle 0.95, short_scoreboard 0.64, barrier 0.41 |"
    check_contains "profile_table: launches averaged" "$out" "| 2.800 |"
    check "profile_table: cuBLAS last" test "$(printf '%s\n' "$out" | tail -n 1 | cut -c1-8)" == "| cuBLAS"
    run_capture out rc "$ROOT/scripts/profile_table.sh" --stdout "$FIX/bench.csv"
    check_exit "profile_table: refuses a non-ncu CSV" 1 "$rc"
    check_contains "profile_table: says why" "$out" "not an ncu --csv report"
}

test_defects() {
    local out rc
    run_capture out rc "$ROOT/tests/defects.sh" --dry-run
    check_exit "defects: every planted defect applies to the tree" 0 "$rc"
    check "defects: one line a patch" test "$(printf '%s\n' "$out" | grep -c '^ok ')" == \
        "$(find "$ROOT/tests/defects" -name '*.patch' | wc -l)"
    check "defects: at least the seven of the list" test "$(printf '%s\n' "$out" | grep -c '^ok ')" -ge 7
    # a patch that no longer applies (its context gone) fails the dry run, and is named
    sed 's/cp_async_wait(STAGES - 2);/cp_async_wait(STAGES - 7);/' \
        "$ROOT/tests/defects/05_missing_cp_async_wait.patch" > "$T/stale.patch"
    run_capture out rc "$ROOT/tests/defects.sh" --dry-run "$T/stale.patch"
    check_exit "defects: a stale patch fails" 1 "$rc"
    check_contains "defects: and is named" "$out" "stale: the patch no longer applies"
    # without a GPU the real run is a visible skip
    run_capture out rc env PATH="$T/nogpu:$PATH" "$ROOT/tests/defects.sh"
    check_exit "defects: no GPU, a skip" 77 "$rc"
}

main() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/test_tools.XXXXXX")
    trap cleanup EXIT
    make_fakes
    make_fake_ladder
    test_sweep
    test_sweep_progress
    test_sweep_shapes
    test_sweep_part2
    test_inspect_host
    test_inspect_gpu
    test_profile_table
    test_gpu_tests
    test_defects
    finish
}

main "$@"
