#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The two minimal examples (built from the installed urtp.h and urtp.pc by
# check-install.sh) on loopback: against each other, from GStreamer's stock
# payloader, and to its stock depayloader. A real x265 stream is sent; what
# arrives must decode to exactly as many pictures as were sent.
# Usage: minimal-interop.sh DIR (holding urtp-minimal-send and -recv)
set -euo pipefail

dir=$1
frames=45
fail() { echo "minimal-interop: $*" >&2; exit 1; }
for e in x265enc h265parse rtph265pay rtph265depay avdec_h265; do
  if ! gst-inspect-1.0 --exists "$e" 2>/dev/null; then
    echo "# minimal-interop: skipped, no $e"
    exit 0
  fi
done

work=$(mktemp -d /tmp/urtp-minimal.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
gst-launch-1.0 -q videotestsrc num-buffers=$frames ! \
  video/x-raw,width=320,height=240,framerate=30/1 ! \
  x265enc speed-preset=ultrafast key-int-max=15 log-level=none ! \
  video/x-h265,stream-format=byte-stream,alignment=au ! filesink location="$work/in.h265" ||
  fail "x265enc did not make the test stream"

# pictures in an Annex-B H.265 file, decoded
decoded() {
  rm -f "$work/yuv"
  gst-launch-1.0 -q filesrc location="$1" ! h265parse ! avdec_h265 ! videoconvert ! \
    video/x-raw,format=I420,width=320,height=240 ! filesink location="$work/yuv" >/dev/null 2>&1 ||
    true
  echo $(( $(stat -c %s "$work/yuv" 2>/dev/null || echo 0) / (320 * 240 * 3 / 2) ))
}
# waits until something listens on UDP port $1
bound() {
  for _ in $(seq 100); do
    ss -Hlun "sport = :$1" | grep -q . && return 0
    sleep 0.05
  done
  fail "nothing bound port $1"
}
check() {   # name file
  local n
  n=$(decoded "$2")
  [ "$n" -eq "$frames" ] || fail "$1: $n of $frames pictures decoded"
  echo "# minimal-interop: $1: $n of $frames pictures decoded"
}
port=$(( 20000 + ($$ % 20000) / 2 * 2 ))

# urtp-minimal-send -> urtp-minimal-recv
"$dir/urtp-minimal-recv" "$port" "$work/a.h265" "$frames" & pids+=($!)
bound "$port"
"$dir/urtp-minimal-send" "$work/in.h265" 127.0.0.1 "$port" || fail "urtp-minimal-send failed"
wait "${pids[-1]}" || fail "urtp-minimal-recv failed"
check "urtp-minimal-send -> urtp-minimal-recv" "$work/a.h265"

# rtph265pay ! udpsink -> urtp-minimal-recv
"$dir/urtp-minimal-recv" "$port" "$work/b.h265" "$frames" & pids+=($!)
bound "$port"
gst-launch-1.0 -q filesrc location="$work/in.h265" ! h265parse ! \
  video/x-h265,stream-format=byte-stream,alignment=au ! rtph265pay pt=96 config-interval=-1 ! \
  udpsink host=127.0.0.1 port="$port" || fail "rtph265pay ! udpsink failed"
wait "${pids[-1]}" || fail "urtp-minimal-recv (from rtph265pay) failed"
check "rtph265pay ! udpsink -> urtp-minimal-recv" "$work/b.h265"

# urtp-minimal-send -> udpsrc ! rtph265depay (stopped with EOS once sent)
gst-launch-1.0 -q -e udpsrc port="$port" \
  caps="application/x-rtp,media=video,clock-rate=90000,encoding-name=H265,payload=96" ! \
  rtph265depay ! h265parse ! video/x-h265,stream-format=byte-stream,alignment=au ! \
  filesink location="$work/c.h265" & pids+=($!)
bound "$port"
"$dir/urtp-minimal-send" "$work/in.h265" 127.0.0.1 "$port" || fail "urtp-minimal-send failed"
sleep 0.5
kill -INT "${pids[-1]}"
wait "${pids[-1]}" || fail "udpsrc ! rtph265depay failed"
check "urtp-minimal-send -> udpsrc ! rtph265depay" "$work/c.h265"
