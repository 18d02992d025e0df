#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A/B of two builds of the plugin on the fast path: does a change cost
anything measurable?

Runs uvgrtpsink -> uvgrtpsrc on loopback at full rate (uvgrtp-bench send
--fps 0) with each build's plugin in turn, alternating A, B, A, B, ... so
that the machine's drift (other load, frequency, caches) falls on both
alike, and reports per build the median and spread of goodput (intact
bytes received per second), the sender's and the receiver's CPU time per
access unit. Same benchmark program, same stream; only GST_PLUGIN_PATH
differs.

Usage: bench/ab.py --a build/ab-before/gst --b build/release/gst
       [--bench build/release/bench/uvgrtp-bench] [--pairs 8] [--seconds 3]
       [--codec h265] [--props 'uvgrtpsink properties for both'] [--srtp cm|gcm]

Make the A build from a worktree of the commit before the change, e.g.
  git worktree add /tmp/ab-before <commit> && meson setup /tmp/ab-before/build \\
    --buildtype=release && ninja -C /tmp/ab-before/build gst/libgstuvgrtp.so
Run on an otherwise idle machine.
"""
import argparse
import os
import statistics
import subprocess

from benchutil import wait_ready

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def result(out, role):
    for line in out.splitlines():
        if line.startswith("RESULT role=" + role):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    return None


def run_pair(args, plugin_dir, port, path="uvgrtp"):
    """One run of path (uvgrtp, or stock: rtph26Xpay ! udpsink -> udpsrc !
    rtph26Xdepay) with the plugin in plugin_dir; args: bench, codec,
    seconds, props."""
    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = plugin_dir
    env["GST_REGISTRY"] = os.path.join(plugin_dir, "ab-registry.bin")
    env.setdefault("GST_DEBUG", "0")
    common = ["--path", path, "--codec", args.codec, "--buffer-size", str(128 << 20),
              "--mtu", "1400", "--srtp", getattr(args, "srtp", "none")]
    recv = subprocess.Popen([args.bench, "recv", "--port", str(port), "--bind", "127.0.0.1"] + common,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    wait_ready(recv)
    cmd = [args.bench, "send", "--host", "127.0.0.1", "--port", str(port), "--fps", "0",
           "--seconds", str(args.seconds)] + common
    if args.props and path == "uvgrtp":
        cmd += ["--sink-props", args.props]
    send = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.seconds + 120)
    out, _ = recv.communicate("stop\n", timeout=60)
    s, r = result(send.stdout, "send"), result(out, "recv")
    if not s or not r or float(r["seconds"]) <= 0:
        raise RuntimeError("a run failed: %s" % (send.stderr[-300:],))
    aus_s, aus_r = int(s["aus"]), int(r["aus"])
    return {
        "gbps": int(r["ok_bytes"]) * 8 / float(r["seconds"]) / 1e9,
        "send_us_au": 1e6 * float(s["cpu"]) / max(1, aus_s),
        "recv_us_au": 1e6 * float(r["cpu"]) / max(1, aus_r),
        "lost": aus_s - int(r["ok"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="plugin directory of build A (before)")
    ap.add_argument("--b", required=True, help="plugin directory of build B (after)")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "release", "bench", "uvgrtp-bench"))
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--codec", default="h265")
    ap.add_argument("--props", default="")
    ap.add_argument("--srtp", default="none", help="none, cm or gcm: SRTP on both ends")
    ap.add_argument("--port", type=int, default=5204)
    args = ap.parse_args()
    runs = {"A": [], "B": []}
    for i in range(args.pairs):
        for tag, d in (("A", args.a), ("B", args.b)) if i % 2 == 0 else (("B", args.b), ("A", args.a)):
            r = run_pair(args, d, args.port)
            runs[tag].append(r)
            print("pair %d %s: %.2f Gbit/s, sender %.0f us/AU, receiver %.0f us/AU, %d lost" % (
                i + 1, tag, r["gbps"], r["send_us_au"], r["recv_us_au"], r["lost"]), flush=True)
    for tag in ("A", "B"):
        rs = runs[tag]
        def col(k):
            v = [r[k] for r in rs]
            return statistics.median(v), min(v), max(v)
        g, s, r = col("gbps"), col("send_us_au"), col("recv_us_au")
        print("%s (%s): goodput median %.2f Gbit/s (%.2f .. %.2f), sender %.0f us/AU (%.0f .. %.0f), "
              "receiver %.0f us/AU (%.0f .. %.0f)" % (tag, args.a if tag == "A" else args.b,
                                                    *g, *s, *r))


if __name__ == "__main__":
    main()
