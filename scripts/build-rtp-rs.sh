#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds gst-plugins-rs's RTP plugin (crate gst-plugin-rtp, elements rtpsend
# and rtprecv among others) with cargo, for the interoperability test
# tests/gst/test_rtp_rs.c, which skips when the plugin is not there.
#
# Usage: scripts/build-rtp-rs.sh [OUTDIR]
#   OUTDIR defaults to build/deps/gst-plugin-rtp in the source tree and
#   receives libgstrsrtp.so; cargo's project and target directory go to
#   OUTDIR.work. The crate comes from cargo's registry (network needed the
#   first time; the crate is MPL-2.0 and is built, never copied, here).
# The version is pinned below: 0.15.x asks GStreamer 1.20 API of the system
# (built and tested here against 1.22) and Rust 1.92 of the toolchain.
# Idempotent: a finished build whose stamp matches this script, the crate
# version and the installed GStreamer is kept without any network access.
# Exit status 0 always, unless called with --strict: without cargo, the
# network or a new enough Rust, it says why and leaves OUTDIR without the
# plugin (the test then skips). With --strict those cases exit 1.
set -euo pipefail

crate=gst-plugin-rtp
version=0.15.4

strict=0
args=()
for a in "$@"; do
  case $a in
    --strict) strict=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
out=${args[0]:-$root/build/deps/gst-plugin-rtp}
work=$out.work

skip() {
  echo "build-rtp-rs: $* -- not building $crate; the rtpsend/rtprecv interop test will skip" >&2
  [ "$strict" = 1 ] && exit 1
  exit 0
}

# cargo is often installed per user by rustup, outside PATH for scripts.
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
  PATH=${CARGO_HOME:-$HOME/.cargo}/bin:$PATH
fi
command -v cargo >/dev/null 2>&1 || skip "cargo not found"
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config not found"
for p in gstreamer-1.0 gstreamer-base-1.0 gstreamer-rtp-1.0 gstreamer-net-1.0 \
         gstreamer-video-1.0 gstreamer-audio-1.0; do
  pkg-config --atleast-version=1.20 "$p" 2>/dev/null || skip "$p >= 1.20 development files not found"
done

recipe="$(sha256sum "$0" | cut -d' ' -f1) $crate-$version gst-$(pkg-config --modversion gstreamer-1.0)"
ready() {
  [ -f "$out/libgstrsrtp.so" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$recipe" ]
}
if ready; then
  echo "build-rtp-rs: up to date in $out ($crate $version)"
  exit 0
fi

mkdir -p "$work"
exec 9>"$work/.lock"
flock 9
if ready; then
  echo "build-rtp-rs: up to date in $out ($crate $version)"
  exit 0
fi

# A project of our own that depends on the crate; cargo builds a dependency
# with the crate types it declares, and gst-plugin-rtp declares a cdylib.
# Resolver 3 with the toolchain's version as rust-version picks, for every
# dependency, the newest release that this rustc can build.
rustv=$(rustc --version 2>/dev/null | awk '{print $2}' | sed 's/-.*//')
[ -n "$rustv" ] || skip "rustc not found"
cat >"$work/Cargo.toml" <<EOF
[package]
name = "uvgrtp-interop-deps"
version = "0.0.0"
edition = "2021"
rust-version = "$rustv"
resolver = "3"
publish = false

[lib]
path = "lib.rs"

[dependencies]
$crate = "=$version"
EOF
echo "// Empty: this project only makes cargo build $crate." >"$work/lib.rs"

echo "build-rtp-rs: building $crate $version with $(cargo --version) (a few minutes the first time)"
start=$(date +%s)
rm -f "$work/Cargo.lock"
if ! cargo build --release --manifest-path "$work/Cargo.toml" --target-dir "$work/target" \
     -p "$crate" >"$work/build.log" 2>&1; then
  tail -n 30 "$work/build.log" >&2
  skip "cargo build failed (full log: $work/build.log)"
fi
so=$(find "$work/target/release" -maxdepth 2 -name libgstrsrtp.so -newer "$work/Cargo.toml" | head -n 1)
[ -n "$so" ] || so=$(find "$work/target/release" -maxdepth 2 -name libgstrsrtp.so | head -n 1)
[ -n "$so" ] || skip "cargo built no libgstrsrtp.so (log: $work/build.log)"

mkdir -p "$out"
cp -f "$so" "$out/libgstrsrtp.so.tmp"
mv -f "$out/libgstrsrtp.so.tmp" "$out/libgstrsrtp.so"
echo "$crate $version" >"$out/.version"
echo "$recipe" >"$out/.stamp"
echo "build-rtp-rs: $out/libgstrsrtp.so ready ($crate $version, $(( $(date +%s) - start )) s)"
