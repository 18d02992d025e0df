#!/usr/bin/env bash
# Installs everything gst-uvgrtp needs to build, test and benchmark on Debian 12.
# Idempotent: packages already present are skipped by apt; safe to run on every build.
set -euo pipefail

packages=(
  # build
  build-essential meson ninja-build pkg-config clang lld
  # sanitizer and fuzzer runtimes for clang
  libclang-rt-14-dev libfuzzer-14-dev
  # GStreamer and the stock elements the tests interoperate with
  libglib2.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  python3-gi python3-gst-1.0 gir1.2-gstreamer-1.0
  # crypto
  libsrtp2-dev libssl-dev libbzrtp-dev
  # network namespaces for impairment tests and the veth benchmark
  iproute2
  # benchmark plots (bench/run.py)
  python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
