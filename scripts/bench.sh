#!/usr/bin/env bash
# One command for the benchmark: installs what is needed, makes a release
# build in build/release, then runs bench/run.py (uvgrtpsink/uvgrtpsrc against
# the stock rtph265pay/udpsink path and the raw UDP ceiling, on loopback and,
# as root, across a veth pair between two network namespaces it creates).
# Results: build/bench/results.csv, build/bench/*.png, docs/benchmarks.md.
# Usage: scripts/bench.sh [--quick] [run.py options...]   (--help for all)
#        scripts/bench.sh --pacing [bench/pacing.py options...]: 4K through a
#        real bottleneck (scripts/bottleneck.sh), paced and unpaced, against
#        the stock path; results into docs/benchmarks.md
#        scripts/bench.sh --recovery [bench/recovery.py options...]: 4K through
#        the relay with loss and a 20 ms round trip, recovery on and off,
#        against rtpbin with rtprtxsend/rtprtxreceive; into docs/benchmarks.md
#        scripts/bench.sh --congestion [bench/congestion.py options...]: RFC
#        8867's cases 5.1, 5.2, 5.3 (feedback congested) and 5.6 (against
#        TCP) on a real bottleneck with a 100 ms round trip, uvgrtpsink's congestion control against rtpgccbwe
#        (scripts/build-rtp-rs.sh, skipped without it) and a fixed bitrate;
#        into docs/benchmarks.md
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/install-deps.sh
# libsrtp2 on OpenSSL for lib/ (meson picks it up); without it, the system's.
bash scripts/build-libsrtp2.sh || echo "bench.sh: private libsrtp2 not built: SRTP runs on the system libsrtp2" >&2

builddir=build/release
if [ -f "$builddir/build.ninja" ]; then
  meson setup --reconfigure "$builddir" --buildtype=release >/dev/null
else
  meson setup "$builddir" --buildtype=release >/dev/null
fi
ninja -C "$builddir" -j2 bench/rawudp bench/uvgrtp-bench
# libsrtp2's own SRTP cost, on lib/'s libsrtp2 and on the system's (a target
# is absent when lib/ has no SRTP or the system no libsrtp2)
for t in bench/srtp-cost bench/srtp-cost-system; do
  ninja -C "$builddir" -j2 "$t" >/dev/null 2>&1 || echo "bench.sh: $t not built" >&2
done
# The elements may be mid-change: without them the uvgrtp runs are marked pending.
if ! ninja -C "$builddir" -j2 gst/libgstuvgrtp.so; then
  echo "bench.sh: the uvgrtp plugin did not build; uvgrtp runs will be marked pending" >&2
fi

# Debian's interpreter: python3-matplotlib is installed for it.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ "${1:-}" = "--recovery" ]; then
  shift
  ninja -C "$builddir" -j2 bench/urtp-relay
  exec "$py" "$root/bench/recovery.py" --builddir "$root/$builddir" \
    --docs "$root/docs/benchmarks.md" "$@"
fi
if [ "${1:-}" = "--congestion" ]; then
  shift
  ninja -C "$builddir" -j2 bench/urtp-relay bench/uvgrtp-ccbench
  # rtpgccbwe for the comparison: a Rust build, minutes the first time
  bash scripts/build-rtp-rs.sh || true
  exec "$py" "$root/bench/congestion.py" --builddir "$root/$builddir" \
    --docs "$root/docs/benchmarks.md" "$@"
fi
if [ "${1:-}" = "--pacing" ]; then
  shift
  exec "$py" "$root/bench/pacing.py" --builddir "$root/$builddir" \
    --docs "$root/docs/benchmarks.md" "$@"
fi
BENCH_SH=1 exec "$py" "$root/bench/run.py" --builddir "$root/$builddir" "$@"
