#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs a live loopback
# stream through uvgrtpsink and uvgrtpsrc, printing what it achieved.
# Extra arguments go to examples/uvgrtp-loopback (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
[ -f build/release/build.ninja ] || meson setup build/release --buildtype=release >/dev/null
ninja -C build/release >/dev/null

export GST_PLUGIN_PATH="$PWD/build/release/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
exec build/release/examples/uvgrtp-loopback "$@"
