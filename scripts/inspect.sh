#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# inspect.sh - look inside one rung (make step=N diff|sass|ptx|regs|profile|sanitize).
#
# usage: scripts/inspect.sh VERB N        (N: 1..99 or 01..99; profile also takes "cublas")
#   diff      git diff --no-index of steps/(N-1)_*.cu -> steps/NN_*.cu: the one idea of rung N
#   sass      cuobjdump -sass of build/steps/NN_*.o for ARCH, with the main loop marked
#             (the backward branch whose body holds the most FFMA) and a per-kernel count
#             of FFMA, shared/global loads and stores, barriers and local-memory (spill) traffic
#   ptx       nvcc -ptx of the rung for ARCH, into build/steps/NN_<slug>.<arch>.ptx, printed
#   regs      the ptxas -v report (build/steps/NN_*.log) as a table: kernel, arch, registers,
#             smem, barriers, stack frame, spill stores/loads
#   profile   [GPU] ncu --clock-control none on bin/stepNN --no-check --sizes 4096 --reps 3,
#             a small metric set, the rung's kernels only (cublas: cuBLAS's kernels);
#             raw CSV into results/<gpu>/profile/, results/<gpu>/PROFILE.md rebuilt
#   sanitize  [GPU] compute-sanitizer memcheck, racecheck, synccheck and initcheck on
#             bin/stepNN --no-check --no-time --mnk 67,45,33 --mnk 130,131,17
# Environment (defaults in brackets):
#   NVCC [nvcc]  NVCCFLAGS [-O3 -std=c++17] (-gencode/-arch/-Xptxas are dropped for ptx)
#   ARCH [the highest sm_XY in GENCODE, else sm_90]  CUOBJDUMP [cuobjdump]  NCU [ncu]
#   SANITIZER [compute-sanitizer]  CUDA_HOME [/usr/local/cuda] (tools are also looked for
#   in $CUDA_HOME/bin)  BIN_DIR or BIN [bin]  BUILD_DIR [$BUILD/steps, BUILD=build]
#   STEPS_DIR [steps]  RESULTS_DIR [results]  DEVICE [0]
#   SASS_RAW=1 keeps the instruction encodings; DIFF_OPTS (extra git diff options);
#   PROFILE_SIZE [4096]  NCU_SKIP [1] NCU_COUNT [1] (launches of the kernel skipped /
#   profiled); CUBLAS_FROM [the highest bin/stepNN] (the binary whose cuBLAS is profiled);
#   SANITIZE_TOOLS [memcheck racecheck synccheck initcheck]; SANITIZE_RUNG_ONLY=1 checks
#   the rung's kernels only (default: every kernel in the process, cuBLAS's too, so that
#   a filter that matches nothing can never pass as clean).
# Exit: 0; 1 with one line on stderr (no GPU, tool missing or not permitted, rung not
# built, a sanitizer error); 2 usage.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
cd "$ROOT"
# shellcheck source=lib/bench_csv.sh
source "$ROOT/scripts/lib/bench_csv.sh"

readonly CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# ARCH: given, else the highest code=sm_XY in GENCODE (the Makefile's), else sm_90.
default_arch() {
    local a
    a=$(printf '%s\n' "${GENCODE:-}" | grep -o 'code=sm_[0-9]*' | sed 's/code=sm_//' | sort -n | tail -n 1 || true)
    echo "sm_${a:-90}"
}
ARCH=${ARCH:-$(default_arch)}
readonly ARCH
readonly BIN_DIR=${BIN_DIR:-${BIN:-bin}}
readonly BUILD_DIR=${BUILD_DIR:-${BUILD:-build}/steps}
readonly STEPS_DIR=${STEPS_DIR:-steps}
readonly RESULTS_DIR=${RESULTS_DIR:-results}
readonly DEVICE=${DEVICE:-0}
# Nsight Compute metrics (names as in the Nsight Compute metrics reference):
readonly NCU_METRICS="gpu__time_duration.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__t_sector_hit_rate.pct,\
lts__t_sector_hit_rate.pct,\
l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio,\
l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
smsp__sass_inst_executed_op_shared_ld.sum,\
smsp__sass_inst_executed_op_shared_st.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,\
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,\
launch__registers_per_thread,\
smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio"
# The tensor pipe (mma.sync, and wgmma on sm_90), asked for only where this GPU's ncu knows it:
# a metric the GPU lacks would fail the whole ncu run.
readonly NCU_TENSOR_METRIC="sm__pipe_tensor_op_hmma_cycles_active"

VERB=""
die() {
    echo "inspect.sh${VERB:+ $VERB}: $*" >&2
    exit 1
}

usage() {
    sed -n '3,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# find_tool NAME DEFAULT: the path of a CUDA tool: $NAME from the environment, PATH,
# or $CUDA_HOME/bin; nothing if none.
find_tool() {
    local want=$1
    if command -v "$want" >/dev/null 2>&1; then
        command -v "$want"
    elif [[ -x $CUDA_HOME/bin/$want ]]; then
        echo "$CUDA_HOME/bin/$want"
    fi
}

# require_gpu: one line and exit 1 unless nvidia-smi finds a GPU.
require_gpu() {
    command -v nvidia-smi >/dev/null 2>&1 ||
        die "needs an NVIDIA GPU: nvidia-smi not found (run this on a GPU machine)"
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' ||
        die "needs an NVIDIA GPU: nvidia-smi finds none (run this on a GPU machine)"
}

# require_counters: ncu needs the GPU performance counters, which the driver keeps
# for root unless NVreg_RestrictProfilingToAdminUsers=0.
require_counters() {
    local params=/proc/driver/nvidia/params
    if ((EUID != 0)) && [[ -r $params ]] && grep -q '^RmProfilingAdminOnly: 1' "$params"; then
        die "ncu lacks permission for the GPU performance counters (ERR_NVGPUCTRPERM): run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0"
    fi
}

# rung_number ARG: 1..99 from "5" or "05"; dies otherwise.
rung_number() {
    if [[ ! $1 =~ ^[0-9]{1,2}$ ]] || ((10#$1 < 1)); then
        die "'$1' is not a rung number (1..99)"
    fi
    echo "$((10#$1))"
}

# first_file DIR N EXT: DIR/NN_<slug>.EXT, or nothing when there is none.
first_file() {
    local f
    for f in "$1"/"$(printf '%02d' "$2")"_*."$3"; do
        if [[ -f $f ]]; then
            echo "$f"
            return
        fi
    done
}

# rung_file N: steps/NN_<slug>.cu; dies when there is none.
rung_file() {
    local f
    f=$(first_file "$STEPS_DIR" "$1" cu)
    [[ -n $f ]] || die "no $STEPS_DIR/$(printf '%02d' "$1")_*.cu"
    echo "$f"
}

# build_file N EXT: build/steps/NN_<slug>.EXT; dies when it is not built.
build_file() {
    local f
    f=$(first_file "$BUILD_DIR" "$1" "$2")
    [[ -n $f ]] || die "no $BUILD_DIR/$(printf '%02d' "$1")_*.$2: build the rung first (make step=$1)"
    echo "$f"
}

# rung_binary N: bin/stepNN; dies when it is not built.
rung_binary() {
    local bin
    bin=$(printf '%s/step%02d' "$BIN_DIR" "$1")
    [[ -x $bin ]] || die "$bin is not built (make step=$1)"
    echo "$bin"
}

# rung_kernels N: the __global__ function names in the rung's source and the common/ headers it
# includes (scripts/rung_body.sh), one per line (comments dropped; the declaration may span
# lines and carry __launch_bounds__).
rung_kernels() {
    local src
    src=$(rung_file "$1")
    "$ROOT/scripts/rung_body.sh" "$src" | awk '
        {
            line = $0
            if (in_comment) { if ((e = index(line, "*/")) == 0) next; line = substr(line, e + 2); in_comment = 0 }
            while ((s = index(line, "/*")) > 0) {
                e = index(substr(line, s + 2), "*/")
                if (e == 0) { line = substr(line, 1, s - 1); in_comment = 1; break }
                line = substr(line, 1, s - 1) " " substr(line, s + e + 3)
            }
            sub(/\/\/.*/, "", line)
            code = code " " line
        }
        END {
            while ((i = index(code, "__global__")) > 0) {
                code = substr(code, i + 10); rest = code
                gsub(/__launch_bounds__[ \t]*\([^)]*\)/, " ", rest)
                if (match(rest, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
                    name = substr(rest, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name); print name
                }
            }
        }' | sort -u
}

# ---- diff --------------------------------------------------------------------

do_diff() {
    local n=$1 prev cur rc=0
    if ((n == 1)); then
        echo "rung 01 is the first rung: there is no previous rung to diff against."
        return 0
    fi
    prev=$(rung_file "$((n - 1))")
    cur=$(rung_file "$n")
    # shellcheck disable=SC2086
    git diff --no-index ${DIFF_OPTS:-} -- "$prev" "$cur" || rc=$?
    # 1: the files differ; 141: a reader such as head closed the pipe early
    ((rc <= 1 || rc == 141)) || die "git diff failed ($rc)"
}

# ---- sass ----------------------------------------------------------------------

# mark_sass: cuobjdump -sass on stdin -> the listing with the main loop of each
# kernel marked, and a summary of each kernel at its end.
mark_sass() {
    local raw=${SASS_RAW:-0} listing
    listing=$(mktemp "${TMPDIR:-/tmp}/sass.XXXXXX")
    cat >"$listing"
    awk -v raw="$raw" -v offset=1 '
        function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
            for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
            return v }
        function op(line,   t) { t = line; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", t); sub(/^@!?U?P[T0-9]+[ \t]+/, "", t)
            split(t, w, /[ \t;]+/); return w[1] }
        # pass 1: instructions per function, backward branches
        FNR == NR {
            if ($0 ~ /Function : /) { f++; fname[f] = $NF; next }
            if (match($0, /\/\*[0-9a-f]+\*\//) && f) {
                a = hex(substr($0, RSTART + 2, RLENGTH - 4)); o = op($0)
                n = ++ninst[f]; addr[f, n] = a; opc[f, n] = o
                if (o ~ /^BRA/ && match($0, /BRA[.A-Z]* 0x[0-9a-f]+/)) {
                    t = substr($0, RSTART, RLENGTH); sub(/.* /, "", t); t = hex(t)
                    if (t < a) { nb = ++nback[f]; bfrom[f, nb] = a; bto[f, nb] = t }
                }
            }
            next
        }
        FNR == 1 {
            # choose, per function, the backward branch whose body has the most FFMA
            for (g = 1; g <= f; g++) {
                best = 0; bestn = -1
                for (b = 1; b <= nback[g]; b++) {
                    c = 0
                    for (i = 1; i <= ninst[g]; i++)
                        if (addr[g, i] >= bto[g, b] && addr[g, i] <= bfrom[g, b] && opc[g, i] ~ /^FFMA/) c++
                    span = bfrom[g, b] - bto[g, b]
                    if (c > bestn || (c == bestn && span < bestspan)) { best = b; bestn = c; bestspan = span }
                }
                if (best && bestn > 0) { lo[g] = bto[g, best]; hi[g] = bfrom[g, best] }
                else { lo[g] = -1; hi[g] = -1 }
            }
            f = 0; out = offset
        }
        function count1(g, k, o) {
            if (o ~ /^FFMA/) cnt[g, k, "FFMA"]++
            else if (o ~ /^LDGSTS/) cnt[g, k, "LDGSTS"]++
            else if (o ~ /^LDS(\.|$)/) cnt[g, k, (o ~ /\.128/) ? "LDS.128" : "LDS"]++
            else if (o ~ /^LDG(\.|$)/) cnt[g, k, (o ~ /\.128/) ? "LDG.128" : "LDG"]++
            else if (o ~ /^STS(\.|$)/) cnt[g, k, "STS"]++
            else if (o ~ /^STG(\.|$)/) cnt[g, k, "STG"]++
            else if (o ~ /^BAR(\.|$)/) cnt[g, k, "BAR"]++
            else if (o ~ /^(LDL|STL)/) cnt[g, k, "LDL/STL"]++
            cnt[g, k, "inst"]++
        }
        function count(g, inloop, o) { count1(g, "all", o); if (inloop) count1(g, "loop", o) }
        function summary(g,   s, k, i, names) {
            split("FFMA LDS LDS.128 LDG LDG.128 LDGSTS STS STG BAR LDL/STL", names, " ")
            s = ""
            for (i = 1; i <= 10; i++) {
                k = names[i]
                if (cnt[g, "all", k] + 0) s = s sprintf(" %s %d", k, cnt[g, "all", k])
            }
            print "//   whole kernel: " cnt[g, "all", "inst"] " instructions," s
            if (cnt[g, "all", "LDL/STL"] + 0) print "//   WARNING: local-memory loads/stores (LDL/STL): register spills or a local array"
            if (lo[g] < 0) { print "//   main loop: none found (no backward branch around an FFMA)"; return }
            s = ""
            for (i = 1; i <= 10; i++) {
                k = names[i]
                if (cnt[g, "loop", k] + 0) s = s sprintf(" %s %d", k, cnt[g, "loop", k])
            }
            printf "//   main loop: listing lines %d-%d (/*%04x*/../*%04x*/), %d instructions,%s\n", \
                loopstart[g], loopend[g], lo[g], hi[g], cnt[g, "loop", "inst"], s
        }
        # pass 2: print, marking the loop, summarise each function at its end
        {
            if ($0 ~ /Function : /) {
                if (f) summary(f)
                f++; print; out++; next
            }
            isinst = match($0, /\/\*[0-9a-f]+\*\//)
            if (!raw) {
                if (!isinst && $0 ~ /^[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/) next
                sub(/[ \t]*\/\* 0x[0-9a-f]+ \*\/[ \t]*$/, "")
            }
            if (isinst && f) {
                a = hex(substr($0, RSTART + 2, RLENGTH - 4))
                inloop = (a >= lo[f] && a <= hi[f])
                if (a == lo[f]) {
                    print "        // ======== main loop starts (target of the backward branch at " sprintf("/*%04x*/", hi[f]) ") ========"
                    out++; loopstart[f] = out + 1
                }
                count(f, inloop, op($0))
                print; out++
                if (a == hi[f]) {
                    loopend[f] = out
                    print "        // ======== main loop ends ========"; out++
                }
                next
            }
            print; out++
        }
        END { if (f) summary(f) }' "$listing" "$listing"
    rm -f "$listing"
}

do_sass() {
    local n=$1 obj cuobjdump
    obj=$(build_file "$n" o)
    cuobjdump=$(find_tool "${CUOBJDUMP:-cuobjdump}")
    [[ -n $cuobjdump ]] || die "cuobjdump not found on PATH or in $CUDA_HOME/bin (set CUOBJDUMP=/path/to/cuobjdump)"
    local listing
    listing=$("$cuobjdump" -sass -arch "$ARCH" "$obj") || die "cuobjdump failed on $obj"
    if ! grep -q 'Function : ' <<<"$listing"; then
        die "$obj has no $ARCH code; set ARCH to one of: $("$cuobjdump" -lelf "$obj" 2>/dev/null | grep -o 'sm_[0-9]*[a-z]*' | sort -u | tr '\n' ' ')"
    fi
    echo "// $obj, $ARCH (cuobjdump -sass; encodings hidden unless SASS_RAW=1)"
    mark_sass <<<"$listing"
}

# ---- ptx -----------------------------------------------------------------------

# nvcc_flags: NVCCFLAGS, one per line, without what picks architectures or passes ptxas
# options (the Makefile's flags carry -gencode pairs, which -ptx refuses).
nvcc_flags() {
    local words f skip=0
    read -ra words <<<"${NVCCFLAGS:--O3 -std=c++17}"
    for f in "${words[@]}"; do
        if ((skip)); then
            skip=0
            continue
        fi
        case $f in
        -gencode | -arch | -code | -Xptxas | --generate-code | --gpu-architecture | --gpu-code) skip=1 ;;
        -gencode=* | -arch=* | -code=* | -Xptxas=* | --generate-code=* | --gpu-architecture=* | --gpu-code=*) ;;
        *) printf '%s\n' "$f" ;;
        esac
    done
}

do_ptx() {
    local n=$1 src slug out nvcc
    src=$(rung_file "$n")
    slug=${src##*/}
    slug=${slug%.cu}
    nvcc=$(find_tool "${NVCC:-nvcc}")
    [[ -n $nvcc ]] || die "nvcc not found on PATH or in $CUDA_HOME/bin (set NVCC)"
    mkdir -p "$BUILD_DIR"
    out=$BUILD_DIR/$slug.$ARCH.ptx
    local flags
    mapfile -t flags < <(nvcc_flags)
    "$nvcc" "${flags[@]}" -arch="compute_${ARCH#sm_}" -ptx "$src" -o "$out" ||
        die "nvcc -ptx failed on $src"
    echo "// $out" >&2
    cat "$out"
}

# ---- regs ----------------------------------------------------------------------

# regs_table: a ptxas -v report on stdin -> one row per kernel and arch.
regs_table() {
    local demangle=cat
    command -v c++filt >/dev/null 2>&1 && demangle=c++filt
    awk '
        /Compiling entry function/ {
            match($0, /function .[^ ]+. for .sm_[0-9a-z]+./)
            s = substr($0, RSTART, RLENGTH); split(s, w, /[ \047]+/)
            name = w[2]; arch = w[4]; key = name " " arch
            if (!(key in seen)) { seen[key] = 1; order[++n] = key }
            next
        }
        /bytes stack frame/ && n {
            match($0, /[0-9]+ bytes stack frame/); st[key] = substr($0, RSTART, RLENGTH) + 0
            match($0, /[0-9]+ bytes spill stores/); ss[key] = substr($0, RSTART, RLENGTH) + 0
            match($0, /[0-9]+ bytes spill loads/); sl[key] = substr($0, RSTART, RLENGTH) + 0
            next
        }
        /Used [0-9]+ registers/ && n {
            match($0, /Used [0-9]+ registers/); r = substr($0, RSTART + 5, RLENGTH - 5); reg[key] = r + 0
            sm[key] = 0; if (match($0, /[0-9]+ bytes smem/)) sm[key] = substr($0, RSTART, RLENGTH) + 0
            bar[key] = 0; if (match($0, /used [0-9]+ barriers/)) bar[key] = substr($0, RSTART + 5, RLENGTH - 5) + 0
            next
        }
        /ptxas (warning|error)/ { warn[++nw] = $0 }
        END {
            for (i = 1; i <= n; i++) {
                split(order[i], w, " ")
                printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", w[1], w[2], reg[order[i]], sm[order[i]], bar[order[i]], st[order[i]], ss[order[i]], sl[order[i]]
            }
            for (i = 1; i <= nw; i++) print "#" warn[i]
        }' | $demangle | awk -F'\t' '
        BEGIN { printf "%-34s %-6s %5s %9s %8s %10s %11s %11s\n", "kernel", "arch", "regs", "smem (B)*", "barriers", "stack (B)", "spill st (B)", "spill ld (B)" }
        /^#/ { warn[++nw] = substr($0, 2); next }
        { k = $1; sub(/\(.*/, "", k); rows++
          printf "%-34s %-6s %5d %9d %8d %10d %11d %11d%s\n", k, $2, $3, $4, $5, $6, $7, $8, ($7 + $8 > 0 ? "   <- spills" : "") }
        END { print "* static shared memory; dynamic shared memory is set at launch"; for (i = 1; i <= nw; i++) print warn[i]; if (!rows) { print "no entry functions in this report" > "/dev/stderr"; exit 1 } }'
}

do_regs() {
    local n=$1 log src nvcc tmp
    if log=$(build_file "$n" log 2>/dev/null); then
        echo "// $log"
        regs_table <"$log"
        return
    fi
    # No build log: compile the rung for ARCH alone and read ptxas's report.
    src=$(rung_file "$n")
    nvcc=$(find_tool "${NVCC:-nvcc}")
    [[ -n $nvcc ]] || die "no build log and no nvcc to make one (make step=$n)"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/regs.XXXXXX")
    echo "// no $BUILD_DIR/$(printf '%02d' "$n")_*.log: compiled $src for $ARCH"
    local flags
    mapfile -t flags < <(nvcc_flags)
    if ! "$nvcc" "${flags[@]}" -gencode "arch=compute_${ARCH#sm_},code=$ARCH" \
        -Xptxas -v -c "$src" -o "$tmp/rung.o" 2>"$tmp/ptxas.log"; then
        cat "$tmp/ptxas.log" >&2
        rm -rf "$tmp"
        die "nvcc failed on $src"
    fi
    regs_table <"$tmp/ptxas.log"
    rm -rf "$tmp"
}

# ---- profile -------------------------------------------------------------------

# gpu_slug: results/<gpu> folder name of DEVICE.
gpu_slug() {
    local name
    name=$(nvidia-smi -i "$DEVICE" --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
    [[ -n $name ]] || die "nvidia-smi cannot name device $DEVICE"
    bench_slug "$name"
}

do_profile() {
    local what=$1 n bin regex label ncu out_dir raw log rc=0 exclude="" kernels
    require_gpu
    ncu=$(find_tool "${NCU:-ncu}")
    [[ -n $ncu ]] || die "ncu (Nsight Compute) not found on PATH or in $CUDA_HOME/bin (set NCU=/path/to/ncu)"
    require_counters
    if [[ $what == cublas ]]; then
        bin=${CUBLAS_FROM:-}
        if [[ -z $bin ]]; then
            local f
            for f in "$BIN_DIR"/step[0-9][0-9]; do
                if [[ -x $f ]]; then bin=$f; fi # the glob is sorted: the last is the highest
            done
        fi
        [[ -n $bin && -x $bin ]] || die "no $BIN_DIR/stepNN to run cuBLAS from (make all)"
        n=$((10#${bin##*step}))
        regex='gemm|xmma|cutlass'                        # cuBLAS SGEMM kernel names
        exclude=$(rung_kernels "$n")                    # ... but not the rung's own
        exclude=${exclude//$'\n'/|}
        label=cublas
    else
        n=$(rung_number "$what")
        bin=$(rung_binary "$n")
        kernels=$(rung_kernels "$n" | paste -sd'|' -)
        regex="^($kernels)\$"
        [[ $regex != '^()$' ]] || die "no __global__ kernel found in $(rung_file "$n")"
        label=$(printf 'step%02d' "$n")
    fi
    out_dir=$RESULTS_DIR/$(gpu_slug)/profile
    mkdir -p "$out_dir"
    local metrics=$NCU_METRICS known
    known=$("$ncu" --devices "$DEVICE" --query-metrics 2>/dev/null || true)
    if grep -q "^$NCU_TENSOR_METRIC[[:space:]]" <<<"$known"; then
        metrics+=",$NCU_TENSOR_METRIC.avg.pct_of_peak_sustained_active"
    fi
    raw=$out_dir/$label.csv
    log=$(mktemp "${TMPDIR:-/tmp}/ncu.XXXXXX")
    echo "profiling $label: $bin --no-check --sizes ${PROFILE_SIZE:-4096} --reps 3 (kernels: $regex${exclude:+, not $exclude})" >&2
    "$ncu" --clock-control none --print-units base --csv --log-file "$log" \
        --metrics "$metrics" -k "regex:$regex" \
        --launch-skip "${NCU_SKIP:-1}" --launch-count "$([[ $label == cublas ]] && echo 8 || echo "${NCU_COUNT:-1}")" \
        "$bin" --device "$DEVICE" --no-check --sizes "${PROFILE_SIZE:-4096}" --reps 3 --power 0 >/dev/null || rc=$?
    if grep -q 'ERR_NVGPUCTRPERM' "$log"; then
        rm -f "$log"
        die "ncu lacks permission for the GPU performance counters (ERR_NVGPUCTRPERM): run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0"
    fi
    if ((rc == 77)); then
        rm -f "$log"
        die "$bin exits 77: no GPU, or the GPU is below the rung's compute capability"
    fi
    # Keep the CSV part (ncu's own ==PROF== lines dropped); for cuBLAS drop the rung's kernels.
    awk -v exclude="${exclude:-^\$}" -F'"' '
        /^"ID"/ { hdr = 1; print; for (i = 2; i <= NF; i += 2) if ($i == "Kernel Name") kcol = i; next }
        hdr && /^"/ { name = $kcol; sub(/\(.*/, "", name); sub(/^void /, "", name); sub(/<.*/, "", name); if (name !~ ("^(" exclude ")$")) print }' "$log" >"$raw"
    if [[ $(wc -l <"$raw") -lt 2 ]]; then
        sed 's/^/    /' "$log" | tail -n 15 >&2
        rm -f "$log"
        die "ncu measured no matching kernel (exit $rc); see above"
    fi
    rm -f "$log"
    echo "raw metrics: $raw" >&2
    "$ROOT/scripts/profile_table.sh" --stdout "$raw"
    "$ROOT/scripts/profile_table.sh" -o "$out_dir/../PROFILE.md" "$out_dir"/*.csv
}

# ---- sanitize ------------------------------------------------------------------

do_sanitize() {
    local n bin sanitizer tool rc failed=0 filter=() kernels
    n=$(rung_number "$1")
    require_gpu
    sanitizer=$(find_tool "${SANITIZER:-compute-sanitizer}")
    [[ -n $sanitizer ]] || die "compute-sanitizer not found on PATH or in $CUDA_HOME/bin (set SANITIZER=/path/to/compute-sanitizer)"
    bin=$(rung_binary "$n")
    if [[ ${SANITIZE_RUNG_ONLY:-0} == 1 ]]; then
        # compute-sanitizer matches the regex against mangled names: unanchored on purpose
        kernels=$(rung_kernels "$n" | paste -sd'|' -)
        filter=(--kernel-name "regex:$kernels")
    fi
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
        local extra=()
        [[ $tool == memcheck ]] && extra=(--leak-check full)
        echo "== compute-sanitizer --tool $tool: $bin --no-check --no-time --mnk 67,45,33 --mnk 130,131,17" >&2
        rc=0
        "$sanitizer" --tool "$tool" "${extra[@]}" "${filter[@]}" --error-exitcode 99 \
            "$bin" --device "$DEVICE" --no-check --no-time --mnk 67,45,33 --mnk 130,131,17 || rc=$?
        case $rc in
        0) echo "== $tool: clean" >&2 ;;
        77) die "$bin exits 77: no GPU, or the GPU is below the rung's compute capability" ;;
        99) echo "== $tool: ERRORS (see above)" >&2; failed=1 ;;
        *) echo "== $tool: the rung exited $rc under the sanitizer" >&2; failed=1 ;;
        esac
    done
    ((failed == 0)) || die "rung $(printf '%02d' "$n") is not clean"
}

main() {
    local n
    (($# == 2)) || usage
    VERB=$1
    case $VERB in
    diff | sass | ptx | regs)
        n=$(rung_number "$2")
        "do_$VERB" "$n"
        ;;
    profile) do_profile "$2" ;;
    sanitize) do_sanitize "$2" ;;
    *) usage ;;
    esac
}

main "$@"
