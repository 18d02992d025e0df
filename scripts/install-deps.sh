#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages gst-uvgrtp needs to build, test and benchmark,
# on the running release (tested on Debian 12 and 13).
#
# Package names that carry a toolchain version (clang's sanitizer and
# libFuzzer runtimes) are chosen for the clang that is installed, or, when
# none is, for the one the release's `clang` package depends on. Everything
# else has the same name on every supported release.
#
# Idempotent and offline when everything is present (no apt-get update then).
# Exit status: 0 when every required package is installed; 1 otherwise, with
# the packages that could not be installed and why on stderr. Optional
# packages that cannot be installed are reported as warnings together with
# what goes without them.
# Usage: scripts/install-deps.sh [--list]   (--list: print the names chosen, install nothing)
set -euo pipefail

say() { echo "install-deps: $*" >&2; }

list_only=0
case "${1:-}" in
  --list) list_only=1 ;;
  '') ;;
  *) say "unknown argument: $1 (usage: install-deps.sh [--list])"; exit 2 ;;
esac

export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
  [ "$updated" = 1 ] && return 0
  updated=1
  say "apt-get update"
  if ! apt-get update -qq >&2; then
    say "apt-get update reported errors; going on with the package lists there are"
  fi
}

release=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-${ID:-unknown}}") || echo unknown)

# ---- the clang version the runtimes must match ----
# The clang on PATH is the one scripts/test.sh and scripts/fuzz.sh run, so
# its runtimes are the ones needed; without one, the release's default.
clang_major() {
  if command -v clang >/dev/null 2>&1; then
    clang --version 2>/dev/null | sed -n -E '1s/.*clang version ([0-9]+)\..*/\1/p'
    return
  fi
  # `clang` is a dependency package: Depends: clang-N
  apt-cache depends clang 2>/dev/null | sed -n -E 's/^ *Depends: clang-([0-9]+)$/\1/p' | head -n1
}
llvm=$(clang_major || true)
if [ -z "$llvm" ] && [ "$list_only" = 0 ] && [ "$(id -u)" -eq 0 ]; then
  apt_update
  llvm=$(clang_major || true)
fi

required=(
  # build
  build-essential meson ninja-build pkg-config clang
  # GStreamer and the stock elements the tests interoperate with
  libglib2.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0
  # crypto: OpenSSL for ZRTP and the private libsrtp2, libsrtp2 as the fallback
  libsrtp2-dev libssl-dev
  # network namespaces for impairment tests and the veth benchmark
  iproute2
)
# Optional, each with what is lost without it.
declare -A optional_why=(
  [libbzrtp-dev]="the bzrtp ZRTP interop tests are not built"
  [python3-matplotlib]="scripts/bench.sh makes no plots"
  [iperf3]="scripts/bench.sh --congestion skips RFC 8867 5.6 (against TCP)"
)
optional=(libbzrtp-dev python3-matplotlib iperf3)
if [ -n "$llvm" ]; then
  # ASan/UBSan runtimes and libFuzzer for this clang (Debian 12: -14, 13: -19)
  required+=("libclang-rt-$llvm-dev" "libfuzzer-$llvm-dev")
else
  say "cannot tell which clang version to pair the sanitizer and libFuzzer runtimes with" \
    "(no clang installed and apt knows no clang package); they are left out"
fi

if [ "$list_only" = 1 ]; then
  printf '%s\n' "${required[@]}" "${optional[@]}"
  exit 0
fi

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
# A package apt can install: it has a candidate version.
available() {
  local cand
  cand=$(apt-cache policy "$1" 2>/dev/null | sed -n -E 's/^ *Candidate: //p')
  [ -n "$cand" ] && [ "$cand" != "(none)" ]
}

missing_req=() missing_opt=()
for p in "${required[@]}"; do installed "$p" || missing_req+=("$p"); done
for p in "${optional[@]}"; do installed "$p" || missing_opt+=("$p"); done
if [ "${#missing_req[@]}" -eq 0 ] && [ "${#missing_opt[@]}" -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  say "need root to install: ${missing_req[*]} ${missing_opt[*]}"
  exit 1
fi

apt_update
want=() unavailable_req=() unavailable_opt=()
for p in "${missing_req[@]}"; do
  if available "$p"; then want+=("$p"); else unavailable_req+=("$p"); fi
done
for p in "${missing_opt[@]}"; do
  if available "$p"; then want+=("$p"); else unavailable_opt+=("$p"); fi
done

failed=()
if [ "${#want[@]}" -gt 0 ]; then
  say "installing: ${want[*]}"
  if ! apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null; then
    # One at a time, to tell which ones cannot be installed.
    say "apt-get install failed as a whole; trying each package alone"
    for p in "${want[@]}"; do
      installed "$p" && continue
      apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 || failed+=("$p")
    done
  fi
fi

status=0
for p in "${unavailable_opt[@]}"; do
  say "warning: optional $p is not available on $release: ${optional_why[$p]}"
done
for p in "${failed[@]}"; do
  if [ -n "${optional_why[$p]+x}" ]; then
    say "warning: optional $p could not be installed: ${optional_why[$p]}"
  else
    say "error: $p could not be installed (see apt-get install $p)"
    status=1
  fi
done
for p in "${unavailable_req[@]}"; do
  say "error: $p is not available on $release (no candidate in apt's package lists)"
  status=1
done
if [ "$status" != 0 ]; then
  say "required packages are missing; see above"
fi
exit $status
