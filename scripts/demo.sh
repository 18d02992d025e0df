#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs a live loopback
# stream through uvgrtpsink and uvgrtpsrc, printing what it achieved; then
# a 4K-class stream at full rate through our path and the stock path side
# by side (bench/side_by_side.py, a few seconds; the full benchmark is
# scripts/bench.sh). Extra arguments go to examples/uvgrtp-loopback (see
# --help).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# libsrtp2 on OpenSSL for lib/ (meson picks it up); without it, the system's.
bash scripts/build-libsrtp2.sh || echo "demo.sh: private libsrtp2 not built: SRTP uses the system libsrtp2" >&2
if [ -f build/release/build.ninja ]; then
  meson setup --reconfigure build/release --buildtype=release >/dev/null
else
  meson setup build/release --buildtype=release >/dev/null
fi
ninja -C build/release >/dev/null

export GST_PLUGIN_PATH="$PWD/build/release/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
build/release/examples/uvgrtp-loopback "$@"
echo
echo "A 4K-class H.265 stream (about 165 Mbit/s at 60 fps) as fast as each path takes it, loopback:"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" bench/side_by_side.py --gst build/release/gst --bench build/release/bench/uvgrtp-bench
