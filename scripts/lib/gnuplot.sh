# shellcheck shell=bash
# gnuplot.sh - ensure_gnuplot: gnuplot is there, installed from Debian's packages when
# this runs as root.  Returns 0 when gnuplot can run, else prints how to get it and
# returns 1.  Sourced by scripts/plots.sh and tests/test_plots.sh.

ensure_gnuplot() {
    command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 && return 0
    if ((EUID == 0)) && command -v apt-get >/dev/null 2>&1; then
        echo "gnuplot is missing: installing gnuplot-nox from Debian's packages" >&2
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox >/dev/null 2>&1; then
            apt-get update -qq >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox >/dev/null 2>&1 || true
        fi
        command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 && return 0
    fi
    echo "gnuplot is missing and could not be installed here: apt-get install -y gnuplot-nox" \
        "(or copy results/<gpu>/bench.csv to a machine that has it and run make plots)" >&2
    return 1
}
