#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Our path and the stock path, side by side, in a few seconds: a 4K-class
H.265 stream (bench/augen.h: 3840x2160's frame sizes, about 165 Mbit/s at
60 fps) pushed as fast as each path takes it on loopback, uvgrtpsink ->
uvgrtpsrc, then rtph265pay ! udpsink -> udpsrc ! rtph265depay; each
printed as goodput (intact access units received per second), the CPU time
per access unit of each side, and what was lost. scripts/demo.sh runs it;
the full benchmark is scripts/bench.sh.

Usage: bench/side_by_side.py --gst build/release/gst
       [--bench build/release/bench/uvgrtp-bench] [--seconds 3]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab import ROOT, run_pair  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gst", default=os.path.join(ROOT, "build", "release", "gst"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "uvgrtp-bench"))
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--port", type=int, default=5264)
    args = ap.parse_args()
    args.codec, args.props = "h265", ""
    res = {}
    for path, name in (("uvgrtp", "uvgrtpsink -> uvgrtpsrc"),
                       ("stock", "rtph265pay ! udpsink -> udpsrc ! rtph265depay")):
        r = res[path] = run_pair(args, args.gst, args.port, path)
        print("  %-46s %6.2f Gbit/s intact, sender %5.0f us/AU, receiver %5.0f us/AU, "
              "%d AUs lost (the sender outran the receiver)" % (
                  name, r["gbps"], r["send_us_au"], r["recv_us_au"], r["lost"]), flush=True)
    u, s = res["uvgrtp"], res["stock"]
    if s["gbps"] > 0:
        print("  uvgrtp moves %.1fx the stock path's goodput, at %.1fx less sender CPU per access unit"
              % (u["gbps"] / s["gbps"], s["send_us_au"] / max(u["send_us_au"], 1e-9)))


if __name__ == "__main__":
    main()
