# shellcheck shell=bash
# bench_csv.sh - shared by scripts/plots.sh, readme_table.sh and sweep.sh (source it).
# The CSV schema is fixed by the harness (harness/report.c); these helpers
# refuse anything else with one clear line, so no script draws or tabulates
# an empty or misread file.

BENCH_CSV_HEADER='device,cc,step,slug,M,N,K,reps,cut_short,ms_mean,ms_median,ms_min,ms_max,gflops,gflops_median,cublas_ms_mean,cublas_gflops,ratio,rel_err,check,sm_clock_mhz,mem_clock_mhz,power_w,energy_mj,throttle,cublas_sm_clock_mhz,cublas_power_w,cublas_energy_mj,exact,err_max_u,err_rms,cublas_err_max_u,cublas_err_rms,seq_err_max_u,seq_err_rms,precision'
# The anchors CSV (harness --anchors, harness/report.c), as README.md documents it.
ANCHORS_CSV_HEADER='device,cc,M,N,K,cublas_gflops,cublas_err_max_u,cublas_err_rms,tf32_gflops,tf32_ratio,tf32_err_max_u,tf32_err_rms,x3_gflops,x3_ratio,x3_err_max_u,x3_err_rms'
BENCH_CSV_FIELDS=36

# bench_csv_check FILE: 0 if FILE is a well-formed bench CSV with at least one
# data row; otherwise one line on stderr saying what is wrong, and 1.
bench_csv_check() {
    local csv=$1
    if [[ ! -e $csv ]]; then
        echo "error: $csv: no such file (run 'make all-bench' on a GPU machine first)" >&2
        return 1
    fi
    if [[ ! -r $csv || -d $csv ]]; then
        echo "error: $csv: not a readable file" >&2
        return 1
    fi
    if [[ ! -s $csv ]]; then
        echo "error: $csv: empty file, no header and no data rows" >&2
        return 1
    fi
    awk -F, -v want="$BENCH_CSV_HEADER" -v nf="$BENCH_CSV_FIELDS" -v file="$csv" '
        function bad(msg) { printf "error: %s:%d: %s\n", file, NR, msg > "/dev/stderr"; failed = 1; exit 1 }
        function num(x) { return x ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
        function tel(x) { return x == "" || num(x) || tolower(x) ~ /^-?nan$/ }
        function err(x) { return num(x) || tolower(x) ~ /^(inf|nan)$/ }
        { sub(/\r$/, "") }
        NR == 1 {
            if ($0 != want)
                bad("header does not match the harness schema (wrong or old CSV?)\n  expected: " want "\n  found:    " $0)
            next
        }
        /^[ \t]*$/ { next }
        NF != nf { bad(sprintf("%d fields, expected %d", NF, nf)) }
        $3 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/ || $7 !~ /^[0-9]+$/ || $8 !~ /^[0-9]+$/ {
            bad("step, M, N, K and reps must be integers")
        }
        $9 !~ /^[01]$/ { bad("cut_short must be 0 or 1, found \"" $9 "\"") }
        $4 !~ /^[A-Za-z0-9_.-]+$/ { bad("slug \"" $4 "\" is not a plain word") }
        !(num($10) && num($14) && num($16) && num($17) && num($18)) {
            bad("ms_mean, gflops, cublas_ms_mean, cublas_gflops and ratio must be numbers")
        }
        $20 != "PASS" && $20 != "FAIL" { bad("check must be PASS or FAIL, found \"" $20 "\"") }
        !(tel($21) && tel($22) && tel($23) && tel($24) && tel($26) && tel($27) && tel($28)) {
            bad("telemetry columns must be numbers or empty")
        }
        $25 != "" && $25 !~ /^0x[0-9a-fA-F]+$/ { bad("throttle must be 0x hex or empty, found \"" $25 "\"") }
        $29 != "PASS" && $29 != "FAIL" { bad("exact must be PASS or FAIL, found \"" $29 "\"") }
        $36 != "PASS" && $36 != "FAIL" { bad("precision must be PASS or FAIL, found \"" $36 "\"") }
        !(err($30) && err($31) && err($32) && err($33) && err($34) && err($35)) {
            bad("the error columns (err_max_u .. seq_err_rms) must be numbers or inf")
        }
        { rows++ }
        END {
            if (failed) exit 1
            if (rows == 0) { printf "error: %s: header only, no data rows\n", file > "/dev/stderr"; exit 1 }
        }' "$csv"
}

# bench_slug NAME: the results/ folder name of a GPU: lowercase, every run of
# characters other than a-z0-9 turned into one '-', no '-' at either end.
bench_slug() {
    printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9][^a-z0-9]*/-/g' -e 's/^-//' -e 's/-$//'
}

# bench_device CSV: the device name of the first data row.
bench_device() {
    awk -F, 'NR == 2 { print $1; exit }' "$1"
}

# bench_meta DIR KEY: the value of "KEY: value" in DIR/run.txt (written by sweep.sh; an older
# sweep's DIR/sweep.log where there is no run.txt), if any.
bench_meta() {
    local log=$1/run.txt
    [[ -r $log ]] || log=$1/sweep.log
    [[ -r $log ]] || return 0
    awk -v key="$2" 'index($0, key ": ") == 1 { v = substr($0, length(key) + 3) } END { if (v != "") print v }' "$log"
}

# bench_cuda_version: "13.0" from nvcc --version, or nothing.
bench_cuda_version() {
    local nvcc=${NVCC:-nvcc}
    command -v "$nvcc" >/dev/null 2>&1 || return 0
    "$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p' | head -n 1
}

# bench_title_meta KEY ENVVALUE DIR FALLBACK: a title field (cuda, date, driver):
# the environment's value wins, then DIR/run.txt, then FALLBACK.
bench_title_meta() {
    local key=$1 env_value=$2 dir=$3 fallback=$4 v
    if [[ -n $env_value ]]; then
        printf '%s\n' "$env_value"
        return
    fi
    v=$(bench_meta "$dir" "$key")
    printf '%s\n' "${v:-$fallback}"
}
