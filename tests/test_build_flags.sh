#!/usr/bin/env bash
# test_build_flags.sh - the Makefile's flags, architectures and stamps, and the build test
# (tests/check_build.sh), without compiling anything: dry runs (make -n) of this tree, and a
# copy of it built in a second by stand-in compilers (nvcc, gcc) and a stand-in nvidia-smi.
#   - NVCCFLAGS / CFLAGS on the command line add to the flags the build needs, never drop them
#   - a change of flags (or of the stamp that records them) rebuilds what that compiler built
#   - nvidia-smi's compute_cap counts only when it is a number; the no-GPU build adds PTX for
#     its newest architecture (checked with the real nvcc --dryrun when there is one)
#   - the build test fails when a rung lacks a kernel build for an architecture
#   - make host-tests builds the rungs first; make gpu-tests runs every binary in bin/
#   - make help and README name the same architectures
# usage: tests/test_build_flags.sh   Ends with "N passed, M failed".
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT
# shellcheck source=tests/lib/assert.sh
source "$ROOT/tests/lib/assert.sh"

T=""
cleanup() {
    if [[ -n $T ]]; then rm -rf "$T"; fi
}

# mk DIR ARGS...: make in DIR, free of what a calling make or the environment passes down.
mk() {
    local dir=$1
    shift
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u ARCH -u NVCCFLAGS -u CFLAGS \
        -u LDLIBS -u NVCC -u CC -u step LC_ALL=C make --no-print-directory -C "$dir" "$@"
}

# fake: make in the copy, with the stand-in compilers and the nvidia-smi under $T/smi.
fake() {
    PATH="$T/smi:$PATH" mk "$T/repo" NVCC="$T/tools/nvcc" CC="$T/tools/gcc" "$@"
}

# nvcc_lines TEXT / cc_lines TEXT: the compile lines of a dry run.
nvcc_lines() { grep -E 'scripts/logged.sh \S+ \S*nvcc .* -c ' <<<"$1" || true; }
cc_lines() { grep -E 'scripts/logged.sh \S+ \S*gcc .* -c ' <<<"$1" || true; }

# every_line_has WHAT LINES NEEDLE...: passes when LINES is not empty and each line holds
# every NEEDLE (as a separate word or words).
every_line_has() {
    local what=$1 lines=$2 needle line
    shift 2
    if [[ -z $lines ]]; then
        fail "$what (no compile lines)"
        return
    fi
    for needle in "$@"; do
        while IFS= read -r line; do
            if [[ " $line " != *" $needle "* ]]; then
                fail "$what (a line without '$needle')" "$line"
                return
            fi
        done <<<"$lines"
    done
    pass "$what"
}

count_lines() { if [[ -z $1 ]]; then echo 0; else wc -l <<<"$1" | tr -d ' '; fi; }

setup() {
    mkdir -p "$T/repo" "$T/tools" "$T/smi"
    tar -C "$ROOT" -cf - Makefile README.md steps common harness scripts tests | tar -C "$T/repo" -xf -
    # the GPU tests, a stand-in that lists the binaries it is given
    printf '#!/usr/bin/env bash\necho "gpu_tests.sh got: $*"\n' >"$T/repo/tests/gpu_tests.sh"
    # nvcc: --list-gpu-code as CUDA 13's; a compile writes its output and, with -Xptxas -v, a
    # ptxas report per code=sm_XY (FAKE_SKIP_ARCH leaves one architecture out for sources
    # matching FAKE_SKIP_SRC)
    cat >"$T/tools/nvcc" <<'SH'
#!/usr/bin/env bash
out="" src="" verbose=0 prev="" archs=()
for a in "$@"; do
    case $a in
    --list-gpu-code) printf '%s\n' sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_110 sm_103 sm_120 sm_121; exit 0 ;;
    *.cu) src=$a ;;
    arch=compute_*,code=sm_*) archs+=("${a##*code=}") ;;
    -v) [[ $prev == -Xptxas ]] && verbose=1 ;;
    esac
    [[ $prev == -o ]] && out=$a
    prev=$a
done
[[ -n $out ]] && : >"$out" && [[ -z $src ]] && chmod +x "$out"
if [[ -n $src && $verbose == 1 ]]; then
    for arch in "${archs[@]}"; do
        if [[ -n ${FAKE_SKIP_ARCH:-} && $arch == "$FAKE_SKIP_ARCH" && $src == *"${FAKE_SKIP_SRC:-}"* ]]; then continue; fi
        echo "ptxas info    : Compiling entry function '_Z6kernelv' for '$arch'"
        echo "ptxas info    : Function properties for _Z6kernelv"
        echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    done
fi
exit 0
SH
    # gcc: writes its output
    cat >"$T/tools/gcc" <<'SH'
#!/usr/bin/env bash
prev=""
for a in "$@"; do [[ $prev == -o ]] && : >"$a"; prev=$a; done
exit 0
SH
    # nvidia-smi: prints $T/smi/answer and exits with $T/smi/status (no GPU: no file, exit 6)
    cat >"$T/smi/nvidia-smi" <<SH
#!/usr/bin/env bash
if [[ -f "$T/smi/answer" ]]; then cat "$T/smi/answer"; exit "\$(cat "$T/smi/status")"; fi
echo "No devices were found"
exit 6
SH
    chmod +x "$T/tools/nvcc" "$T/tools/gcc" "$T/smi/nvidia-smi"
}

# smi ANSWER STATUS: what the stand-in nvidia-smi prints next ("" and no file: no GPU).
smi() {
    if [[ $# -eq 0 ]]; then
        rm -f "$T/smi/answer" "$T/smi/status"
    else
        printf '%s\n' "$1" >"$T/smi/answer"
        echo "$2" >"$T/smi/status"
    fi
}

# ---- this tree, dry runs with -B (every command printed, nothing built)
test_flags_stick() {
    local out rc nv cc
    run_capture out rc mk "$ROOT" -n -B NVCCFLAGS=-O3 CFLAGS=-O0 all
    check_exit "make NVCCFLAGS=-O3 CFLAGS=-O0 -n -B all" 0 "$rc"
    nv=$(nvcc_lines "$out")
    cc=$(cc_lines "$out")
    every_line_has "NVCCFLAGS=-O3: nvcc lines keep -gencode, -Xptxas -v, -warn-spills" "$nv" \
        -O3 -gencode "-Xptxas -v" "-Xptxas -warn-spills" -std=c++17
    check_not_contains "NVCCFLAGS=-O3: the default -lineinfo gives way" "$nv" "-lineinfo"
    every_line_has "CFLAGS=-O0: gcc lines keep -std=c11 and the warnings" "$cc" -O0 -std=c11 -Wall -Wextra -Wpedantic
    check_not_contains "CFLAGS=-O0: the default -O2 gives way" "$cc" " -O2 "
    check "every rung compiled" test "$(grep -c 'logged.sh build/steps/' <<<"$nv")" -eq "$(ls "$ROOT"/steps/[0-9][0-9]_*.cu | wc -l)"
    # nor by setting the Makefile's own variables
    run_capture out rc mk "$ROOT" -n -B GENCODE= ARCH_LIST= NVCC_REQUIRED= CC_REQUIRED= ALL_NVCCFLAGS=-O0 ALL_CFLAGS=-O0 all
    every_line_has "GENCODE=, NVCC_REQUIRED=, ALL_NVCCFLAGS=...: nvcc lines unchanged" "$(nvcc_lines "$out")" \
        -gencode "-Xptxas -v" "-Xptxas -warn-spills" -std=c++17
    every_line_has "CC_REQUIRED=, ALL_CFLAGS=...: gcc lines unchanged" "$(cc_lines "$out")" -std=c11 -Wall -Wextra -Wpedantic
    # from the environment, too
    run_capture out rc env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES NVCCFLAGS=-G CFLAGS=-O1 \
        make --no-print-directory -C "$ROOT" -n -B all
    every_line_has "NVCCFLAGS in the environment: added, not replacing" "$(nvcc_lines "$out")" -G -gencode "-Xptxas -warn-spills"
    every_line_has "CFLAGS in the environment: added, not replacing" "$(cc_lines "$out")" -O1 -std=c11 -Wall
}

# ---- the copy, built by the stand-ins
test_stamps() {
    local out rc nv cc rungs
    rungs=$(ls "$T"/repo/steps/[0-9][0-9]_*.cu | wc -l)
    smi
    run_capture out rc fake -n host-tests
    check_exit "host-tests on a clean tree: dry run" 0 "$rc"
    check "host-tests on a clean tree: builds the rungs first" test "$(nvcc_lines "$out" | grep -c 'build/steps/')" -eq "$rungs"
    check "host-tests on a clean tree: runs the tests after" test "$(grep -n 'run_tests.sh' <<<"$out" | cut -d: -f1)" \
        -gt "$(grep -n 'build/steps/' <<<"$out" | tail -n 1 | cut -d: -f1)"

    run_capture out rc fake all
    check_exit "stand-in build of all" 0 "$rc"
    check "bin/stepNN for every rung" test "$(ls "$T"/repo/bin/step* | wc -l)" -eq "$rungs"
    check "and bin/ladder" test -x "$T/repo/bin/ladder"
    check_file_contains "build/flags/nvcc.txt: the whole nvcc line" "$T/repo/build/flags/nvcc.txt" "-Xptxas -v -Xptxas -warn-spills"
    check_file_contains "build/flags/cc.txt: the whole gcc line" "$T/repo/build/flags/cc.txt" "-std=c11 -Wall -Wextra"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test passes on the stand-in build" 0 "$rc"
    check_contains "build test: rungs x architectures" "$out" "$rungs rungs x 5 architectures (sm_75 sm_80 sm_86 sm_89 sm_90a)"

    run_capture out rc fake -n all
    check_contains "unchanged flags: nothing to rebuild" "$out" "Nothing to be done for 'all'"
    run_capture out rc fake -q all
    check_exit "unchanged flags: make -q says up to date" 0 "$rc"

    run_capture out rc fake -n NVCCFLAGS=-O1 all
    nv=$(nvcc_lines "$out")
    check "NVCCFLAGS=-O1: every rung rebuilt" test "$(grep -c 'build/steps/' <<<"$nv")" -eq "$rungs"
    check "NVCCFLAGS=-O1: and every binary relinked" test "$(grep -c 'LINK  bin/step' <<<"$out")" -eq "$rungs"
    every_line_has "NVCCFLAGS=-O1: with the flags the build needs" "$nv" -O1 -gencode "-Xptxas -v" "-Xptxas -warn-spills"
    check "NVCCFLAGS=-O1: the C objects stay" test "$(count_lines "$(cc_lines "$out")")" -eq 0

    run_capture out rc fake -n CFLAGS=-O0 all
    cc=$(cc_lines "$out")
    check "CFLAGS=-O0: the harness rebuilt" test "$(grep -c 'build/harness/' <<<"$cc")" -gt "$rungs"
    every_line_has "CFLAGS=-O0: with -std=c11 and the warnings" "$cc" -O0 -std=c11 -Wall -Wextra -Wpedantic
    check "CFLAGS=-O0: the rungs stay" test "$(count_lines "$(nvcc_lines "$out")")" -eq 0

    run_capture out rc fake -n ARCH=sm_80 all
    nv=$(nvcc_lines "$out")
    check "ARCH=sm_80: every rung rebuilt" test "$(grep -c 'build/steps/' <<<"$nv")" -eq "$rungs"
    every_line_has "ARCH=sm_80: for sm_80 alone" "$nv" "-gencode arch=compute_80,code=sm_80"
    check_not_contains "ARCH=sm_80: no other architecture" "$nv" "sm_90"

    # a stamp that no longer matches (edited, or left by another build) rebuilds everything
    echo "compile: an older nvcc line" >"$T/repo/build/flags/nvcc.txt"
    run_capture out rc fake -n all
    check "stamp changed: every rung rebuilt" test "$(grep -c 'build/steps/' <<<"$(nvcc_lines "$out")")" -eq "$rungs"
    check_contains "stamp changed: the stamp rewritten" "$out" "build/flags/nvcc.txt"
    rm "$T/repo/build/flags/cc.txt"
    run_capture out rc fake -n all
    check "stamp missing: the harness rebuilt" test "$(grep -c 'build/harness/' <<<"$(cc_lines "$out")")" -gt "$rungs"
    run_capture out rc fake all
    check_exit "stand-in build again" 0 "$rc"
    run_capture out rc fake -n all
    check_contains "after it, nothing to rebuild" "$out" "Nothing to be done for 'all'"
    # the defaults given on the command line are the same compile line: no rebuild
    run_capture out rc fake -n all NVCCFLAGS="-O3 -lineinfo"
    check_contains "the default flags spelled out: the same line, nothing to rebuild" "$out" "Nothing to be done for 'all'"
}

test_check_build_fails() {
    local out rc log
    log=$(ls "$T"/repo/build/steps/05_*.log)
    # a rung built without one architecture's kernels
    touch "$T"/repo/steps/05_*.cu
    FAKE_SKIP_ARCH=sm_86 FAKE_SKIP_SRC=steps/05_ fake all >/dev/null 2>&1
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: a rung without sm_86 kernels fails" 1 "$rc"
    check_contains "build test: says which rung and architecture" "$out" "steps/$(basename "${log%.log}").cu: no kernel build for sm_86"
    # a log of ptxas without -v (no report at all)
    : >"$log"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: an empty rung log fails" 1 "$rc"
    check_contains "build test: no kernel build for any architecture" "$out" "no kernel build for sm_75 sm_80 sm_86 sm_89 sm_90"
    # a log missing
    rm "$log"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: a missing rung log fails" 1 "$rc"
    check_contains "build test: says so" "$out" "has no build log"
    touch "$T"/repo/steps/05_*.cu
    fake all >/dev/null 2>&1
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: rebuilt, it passes again" 0 "$rc"
    # logs older than the flags they were supposedly built with
    touch -d '+1 minute' "$T/repo/build/flags/nvcc.txt"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: logs older than the stamp fail" 1 "$rc"
    check_contains "build test: built with other flags" "$out" "was built with other flags"
    # a stamp without architectures, or without the flags the report needs
    echo "compile: nvcc -O3 -Xptxas -v | link: nvcc" >"$T/repo/build/flags/nvcc.txt"
    touch -d '-1 minute' "$T/repo/build/flags/nvcc.txt"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: a stamp without -gencode fails" 1 "$rc"
    check_contains "build test: names no architecture" "$out" "names no architecture"
    check_contains "build test: lacks -warn-spills" "$out" "lacks -Xptxas -warn-spills"
    fake all >/dev/null 2>&1
    # a warning in any compile log
    echo "harness/args.c:1:1: warning: something" >>"$T/repo/build/harness/args.log"
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: a warning fails" 1 "$rc"
    fake -B all >/dev/null 2>&1
    run_capture out rc "$T/repo/tests/check_build.sh"
    check_exit "build test: clean again" 0 "$rc"
}

# gencode_of [VAR=VALUE...]: the -gencode values of the first rung's line in `make -n -B all`.
gencode_of() {
    local out
    out=$(fake -n -B "$@" all 2>&1 || true)
    nvcc_lines "$out" | grep 'build/steps/01_' | grep -oE 'arch=compute_[0-9a-z]+,code=[a-z]+_[0-9a-z]+' | tr '\n' ' ' || true
}

test_architectures() {
    local spread="arch=compute_75,code=sm_75 arch=compute_80,code=sm_80 arch=compute_86,code=sm_86 arch=compute_89,code=sm_89 arch=compute_90a,code=sm_90a arch=compute_90,code=compute_90 "
    smi
    check "no GPU: the spread, and PTX for compute_90" test "$(gencode_of)" == "$spread"
    smi "9.0" 0
    check "nvidia-smi 9.0: sm_90a alone (Hopper's wgmma)" test "$(gencode_of)" == "arch=compute_90a,code=sm_90a "
    smi " 8.6 " 0
    check "nvidia-smi ' 8.6 ': sm_86 alone" test "$(gencode_of)" == "arch=compute_86,code=sm_86 "
    smi "12.0" 0
    check "nvidia-smi 12.0: sm_120 alone" test "$(gencode_of)" == "arch=compute_120,code=sm_120 "
    smi "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." 9
    check "nvidia-smi failing with a message: the spread" test "$(gencode_of)" == "$spread"
    smi "[N/A]" 0
    check "nvidia-smi [N/A]: the spread" test "$(gencode_of)" == "$spread"
    smi "Field \"compute_cap\" is not a valid field to query." 2
    check "nvidia-smi without compute_cap: the spread" test "$(gencode_of)" == "$spread"
    smi "9.0" 0
    check "ARCH=sm_89 beats nvidia-smi" test "$(gencode_of ARCH=sm_89)" == "arch=compute_89,code=sm_89 "
    smi
}

# The real nvcc: the no-GPU build embeds PTX for its newest architecture; make help names the
# architectures README names.
test_real_nvcc() {
    local nvcc out rc line words help archs a newest para
    nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
    if ! [[ -x $nvcc ]] && ! nvcc=$(command -v nvcc); then
        echo "skip: the PTX and make help checks (no nvcc)"
        return
    fi
    help=$(PATH="$T/smi:$PATH" mk "$ROOT" help)
    archs=$(grep -A1 'without a GPU' <<<"$help" | tail -n 1 | grep -oE 'sm_[0-9]+a?' | tr '\n' ' ' || true)
    newest=$(grep -oE 'PTX for compute_[0-9]+' <<<"$help" | grep -oE '[0-9]+$' || true)
    check "make help: the no-GPU architectures of this nvcc" test -n "$archs"
    # the newest cubin may be architecture-specific (sm_90a); its PTX is the plain one
    check "make help: PTX for the newest of them" test "sm_$newest " == "$(tr ' ' '\n' <<<"$archs" | grep . | tail -n 1 | sed 's/a$//') "
    para=$(awk '/^Architectures:/ { p = 1 } p && /^$/ { exit } p' "$ROOT/README.md" | tr '\n' ' ')
    for a in $archs; do
        check_contains "README's Architectures names $a" "$para" "$a"
    done
    check_contains "README's Architectures names PTX for compute_$newest" "$para" "PTX for compute_$newest"

    # nvcc --dryrun on the first rung's compile line, as make prints it without a GPU
    out=$(PATH="$T/smi:$PATH" mk "$ROOT" -n -B NVCC="$nvcc" all 2>&1)
    line=$(nvcc_lines "$out" | grep 'build/steps/01_' | head -n 1 || true)
    read -ra words <<<"$line"
    # words: scripts/logged.sh LOG NVCC FLAGS... -c SRC -o OBJ
    run_capture out rc bash -c 'cd "$1" && shift && "$@"' _ "$ROOT" "${words[2]}" --dryrun "${words[@]:3:${#words[@]}-5}" -o "$T/dry.o"
    check_exit "nvcc --dryrun of the first rung" 0 "$rc"
    check_contains "the fatbinary holds PTX for compute_$newest" "$out" "kind=ptx,sm=$newest,"
    for a in $archs; do
        check_contains "the fatbinary holds SASS for $a" "$out" "kind=elf,sm=${a#sm_},"
    done
}

test_gpu_tests_bins() {
    local out rc n
    : >"$T/repo/bin/step11-global-split"
    chmod +x "$T/repo/bin/step11-global-split"
    run_capture out rc fake gpu-tests
    check_exit "make gpu-tests (stand-in GPU tests)" 0 "$rc"
    for n in "$T"/repo/bin/step*; do
        check_contains "make gpu-tests runs bin/$(basename "$n")" "$out" " bin/$(basename "$n")"
    done
}

main() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/test_build_flags.XXXXXX")
    trap cleanup EXIT
    setup
    test_flags_stick
    test_stamps
    test_check_build_fails
    test_architectures
    test_real_nvcc
    test_gpu_tests_bins
    finish
}

main "$@"
