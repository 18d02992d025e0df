#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# fuzz.sh - builds the libFuzzer targets (tests/fuzz/fuzz_*.c) with clang,
# ASan and UBSan, and runs each for a while on a copy of its seed corpus.
#
#   scripts/fuzz.sh [--merge] [--regen] [SECONDS]
#
#   SECONDS     per target (default: $FUZZ_SECONDS, else 30)
#   --merge     afterwards, merge inputs that found new coverage into
#               tests/fuzz/corpus/<target> (otherwise the repository's
#               corpus never changes)
#   --regen     first rewrite the seed files from tests/fuzz/gen_corpus.c:
#                 cc -std=c11 -D_GNU_SOURCE -Ilib tests/fuzz/gen_corpus.c \
#                    lib/rtp.c -o /tmp/gen_corpus && /tmp/gen_corpus tests/fuzz/corpus
#               (crash-* and merged files are left alone)
#
# Environment: FUZZ_BUILD_DIR (default build/fuzz in the source tree), CC (clang),
# FUZZ_TARGETS (default "rtp rtcp depay recvstream zrtp zrtp_ep").
#
# Any crash, leak, timeout or out-of-memory fails the run. The input is kept
# as tests/fuzz/corpus/<target>/crash-<hash> so that the corpus replay tests
# (meson test --suite fuzz, in every build without -Dfuzzers) fail until it
# is fixed; reproduce with  <build>/tests/fuzz/fuzz_<target> <file>. Known
# crash-* inputs are replayed first (the run fails while any still fails)
# and left out of the fuzzing corpus; once fixed, drop their crash- prefix
# to keep them as ordinary seeds.
#
# Requires clang and the libFuzzer runtime of its version (Debian:
# libclang-rt-N-dev and libfuzzer-N-dev for clang N, which
# scripts/install-deps.sh installs: 14 on Debian 12, 19 on Debian 13).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-30}
merge=0
regen=0
for arg in "$@"; do
  case $arg in
    --merge) merge=1 ;;
    --regen) regen=1 ;;
    -h|--help) sed -n '4,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *[!0-9]*|'') echo "fuzz.sh: unknown argument: $arg" >&2; exit 2 ;;
    *) seconds=$arg ;;
  esac
done
build=${FUZZ_BUILD_DIR:-$src/build/fuzz}
targets=${FUZZ_TARGETS:-rtp rtcp depay recvstream zrtp zrtp_ep}
CC=${CC:-clang}
case $($CC --version 2>/dev/null | head -n 1) in
  *clang*) ;;
  *) echo "fuzz.sh: CC=$CC is not clang; libFuzzer needs clang" >&2; exit 2 ;;
esac

if [ "$regen" = 1 ]; then
  gen=$(mktemp)
  ${HOSTCC:-cc} -std=c11 -D_GNU_SOURCE -I"$src/lib" "$src/tests/fuzz/gen_corpus.c" \
    "$src/lib/rtp.c" -o "$gen"
  "$gen" "$src/tests/fuzz/corpus"
  rm -f "$gen"
  echo "fuzz.sh: seed corpus regenerated"
fi

# -Dfuzzers=enabled also instruments lib/ for coverage (see meson.build).
# An existing directory is reconfigured: it must follow this tree (new
# targets, the libsrtp2 that scripts/build-libsrtp2.sh provides).
reconf=""
[ -f "$build/build.ninja" ] && reconf=--reconfigure
CC=$CC meson setup $reconf "$build" "$src" -Dfuzzers=enabled -Dplugin=disabled \
  -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
bins=""
for t in $targets; do
  bins="$bins tests/fuzz/fuzz_$t"
done
# shellcheck disable=SC2086
ninja -C "$build" $bins

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}

failed=0
for t in $targets; do
  bin="$build/tests/fuzz/fuzz_$t"
  corpus="$src/tests/fuzz/corpus/$t"
  work=$(mktemp -d)
  mkdir "$work/corpus" "$work/artifacts"
  # Known crashes are replayed, not fuzzed from: one still failing would
  # stop the fuzzer at once.
  for f in "$corpus"/crash-*; do
    [ -f "$f" ] || continue
    if "$bin" "$f" >"$work/known.log" 2>&1; then
      echo "fuzz.sh: fuzz_$t: $(basename "$f") no longer fails"
    else
      echo "fuzz.sh: fuzz_$t: $(basename "$f") STILL FAILS"
      grep -E '^ *#[0-9]+ .* in |ERROR|SUMMARY' "$work/known.log" | head -n 12
      failed=1
    fi
  done
  find "$corpus" -maxdepth 1 -type f ! -name 'crash-*' -exec cp {} "$work/corpus/" \;
  echo "== fuzz_$t: $seconds s on a copy of $(ls "$work/corpus" | wc -l) inputs"
  rc=0
  "$bin" -max_total_time="$seconds" -max_len=4000 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" \
    >"$work/log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$work/log" || true
  found=0
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] || continue
    found=1
    base=$(basename "$f")
    kind=${base%%-*}
    hash=$(sha1sum "$f" | cut -c1-8)
    name=crash-$hash
    [ "$kind" = crash ] || name=crash-$kind-$hash
    cp "$f" "$corpus/$name"
    echo "fuzz.sh: fuzz_$t: $kind, input kept as tests/fuzz/corpus/$t/$name:"
    od -An -tx1 -v "$f" | head -n 64
  done
  if [ "$rc" != 0 ] || [ "$found" = 1 ]; then
    echo "fuzz.sh: fuzz_$t FAILED (exit $rc); log follows"
    grep -v -E '^#[0-9]+' "$work/log" | tail -n 60
    failed=1
  elif [ "$merge" = 1 ]; then
    before=$(ls "$corpus" | wc -l)
    "$bin" -merge=1 -max_len=4000 "$corpus" "$work/corpus" >"$work/merge.log" 2>&1
    echo "fuzz.sh: fuzz_$t: merged $(($(ls "$corpus" | wc -l) - before)) new inputs"
  fi
  rm -rf "$work"
done

if [ "$failed" = 1 ]; then
  echo "fuzz.sh: FAILED"
  exit 1
fi
echo "fuzz.sh: all targets ran without a crash"
