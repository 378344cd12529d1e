# shellcheck shell=bash
# assert.sh - a few checks for the shell tests (source it).  Each check prints
# "ok: WHAT" or "FAIL: WHAT" and counts; finish prints "N passed, M failed" and
# returns non-zero on any failure.

PASSED=0
FAILED=0

pass() {
    PASSED=$((PASSED + 1))
    echo "ok: $1"
}

fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL: $1"
    if [[ -n ${2:-} ]]; then
        printf '%s\n' "$2" | head -n 15 | sed 's/^/    /'
    fi
}

# check WHAT COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@" >/dev/null 2>&1; then pass "$what"; else fail "$what"; fi
}

# check_contains WHAT HAYSTACK NEEDLE: passes when NEEDLE is a substring of HAYSTACK.
check_contains() {
    if [[ $2 == *"$3"* ]]; then pass "$1"; else fail "$1 (no '$3')" "$2"; fi
}

# check_not_contains WHAT HAYSTACK NEEDLE
check_not_contains() {
    if [[ $2 != *"$3"* ]]; then pass "$1"; else fail "$1 (unexpected '$3')" "$2"; fi
}

# check_file_contains WHAT FILE NEEDLE (fixed string)
check_file_contains() {
    if [[ -f $2 ]] && grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1 (no '$3' in $2)"; fi
}

# check_exit WHAT WANT GOT: passes when the exit statuses match ("nonzero" matches any but 0).
check_exit() {
    local what=$1 want=$2 got=$3
    if [[ $want == nonzero && $got != 0 ]] || [[ $want == "$got" ]]; then
        pass "$what"
    else
        fail "$what (exit $got, expected $want)"
    fi
}

# run_capture VAR_OUT VAR_RC COMMAND...: stdout+stderr into VAR_OUT, status into VAR_RC.
run_capture() {
    local -n _out=$1 _rc=$2
    shift 2
    _rc=0
    _out=$("$@" 2>&1) || _rc=$?
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    ((FAILED == 0))
}
