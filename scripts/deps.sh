#!/usr/bin/env bash
# deps.sh: makes sure cmocka (the host tests' framework) is there.
#   scripts/deps.sh           use the system's, else .deps/, else install it from Debian (root)
#   scripts/deps.sh --vendor  unpack Debian's cmocka packages into .deps/ (for a machine
#                             with no package registry, e.g. a lent GPU: carry .deps there)
set -euo pipefail
cd "$(dirname "$0")/.."

have_cmocka() {
  [ -f /usr/include/cmocka.h ] || [ -f .deps/usr/include/cmocka.h ]
}

vendor() {
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download libcmocka0 libcmocka-dev >/dev/null)
  mkdir -p .deps
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" .deps; done
  rm -rf "$tmp"
  # the -dev package's libcmocka.so is a link to the runtime library beside it
  echo "cmocka unpacked into .deps/ ($(ls .deps/usr/lib/*/libcmocka.so.* | head -n 1))"
}

if [ "${1:-}" = "--vendor" ]; then
  vendor
  exit 0
fi
have_cmocka && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "cmocka is missing: installing libcmocka-dev from Debian's packages" >&2
  if ! apt-get install -y -qq libcmocka-dev >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq libcmocka-dev >/dev/null
  fi
  have_cmocka && exit 0
fi
echo "error: the host tests need cmocka. Install it with:" >&2
echo "    sudo apt-get install -y libcmocka-dev" >&2
echo "or, on a machine without a package registry, unpack it beside the repo with" >&2
echo "    scripts/deps.sh --vendor   (run where apt-get works, then copy .deps/ over)" >&2
exit 1
