#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Pacing through a real bottleneck (issue: big pictures without burst loss).

For each frame rate and each bottleneck (a multiple of the stream's mean
bitrate, with a queue of --queue-ms at that rate; scripts/bottleneck.sh makes
it from three network namespaces and a tbf qdisc), one live 4K H.265 stream
from the benchmark's generator (intra pictures several times the mean) goes
from the sender's namespace to the receiver's through:
  stock     rtph265pay ! udpsink / udpsrc ! rtph265depay (no pacer exists)
  uvgrtp    uvgrtpsink / uvgrtpsrc, unpaced (the default)
  paced     uvgrtpsink pacing-rate=--pace x the bottleneck / uvgrtpsrc
  factor    uvgrtpsink pacing-factor=--factor (a multiple of the measured
            bitrate, no knowledge of the link) / uvgrtpsrc
and it reports access units lost (intra pictures among them) and one-way
latency from the time each access unit was due at the sender (as a live
encoder delivers it) to the time it left the receiver's depayloader:
p50, p99, max. Needs root (network namespaces).

Usage: bench/pacing.py --builddir build/release [--seconds 10] [--fps 30,60]
       [--factors 1.5,2,3] [--queue-ms 20] [--out build/bench/pacing]
       [--docs docs/benchmarks.md]
"""
import argparse
import json
import os
import subprocess
import sys

from benchutil import gst_env, wait_ready, read_times, pct, pyplot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "ubpace"
PORT = 5004


def bottleneck(*args):
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "bottleneck.sh")] + [str(a) for a in args],
                   check=True, capture_output=True, text=True)


def tbf_drops():
    out = subprocess.run(["bash", os.path.join(ROOT, "scripts", "bottleneck.sh"), "stats", NS],
                         capture_output=True, text=True).stdout
    for tok in out.replace(",", " ").replace(")", " ").split("dropped")[1:2]:
        return int(tok.split()[0])
    return -1


def mean_bitrate(bench, env, fps):
    """Mean bitrate of the generator's stream at fps: its bytes over one
    intra period, as the sender pushes them."""
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pacing-gen-%d.h265" % os.getpid())
    subprocess.run([bench, "gen", "--codec", "h265", "--frames", "64", "--out", out],
                   check=True, env=env, capture_output=True)
    size = os.path.getsize(out)
    os.unlink(out)
    return size * 8 * fps / 64


def run_one(args, env, fps, rate, path, props, tag):
    bench = os.path.join(args.builddir, "bench", "uvgrtp-bench")
    st, rt = os.path.join(args.out, tag + ".send"), os.path.join(args.out, tag + ".recv")
    elem = "stock" if path == "stock" else "uvgrtp"
    recv = subprocess.Popen(["ip", "netns", "exec", NS + "-rcv", bench, "recv", "--path", elem,
                             "--codec", "h265", "--port", str(PORT), "--bind", "10.77.2.2",
                             "--buffer-size", str(32 << 20), "--times", rt],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    wait_ready(recv)
    drops0 = tbf_drops()
    cmd = ["ip", "netns", "exec", NS + "-snd", bench, "send", "--path", elem, "--codec", "h265",
           "--host", "10.77.2.2", "--port", str(PORT), "--fps", str(fps),
           "--seconds", str(args.seconds), "--times", st]
    if props:
        cmd += ["--sink-props", props]
    send = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.seconds + 120)
    recv.stdin.write("stop\n")
    recv.stdin.flush()
    out, _ = recv.communicate(timeout=60)
    drops = tbf_drops() - drops0
    sent, got = read_times(st, True), read_times(rt, False)
    lat = [(got[i] - sent[i][0]) * 1e3 for i in got if i in sent]
    lost = [i for i in sent if i not in got]
    stats = {}
    for line in send.stdout.splitlines():
        if line.startswith("STATS send"):
            stats["sink"] = line.split(" ", 2)[2]
    row = {
        "fps": fps, "bottleneck": rate, "path": path, "props": props,
        "sent": len(sent), "intra_sent": sum(1 for v in sent.values() if v[1]),
        "lost": len(lost), "intra_lost": sum(1 for i in lost if sent[i][1]),
        "lat_p50_ms": pct(lat, 0.5), "lat_p99_ms": pct(lat, 0.99),
        "lat_max_ms": max(lat) if lat else float("nan"), "tbf_drops": drops,
        "send_ok": send.returncode == 0,
        # the aim: p99 within the largest intra picture's time at the
        # bottleneck rate plus a frame interval
        "aim_ms": max((v[2] for v in sent.values() if v[1]), default=0) * 8e3 / rate + 1e3 / fps,
    }
    if send.returncode != 0:
        row["send_err"] = send.stderr[-400:]
    return row


def plot(rows, out):
    plt = pyplot()
    if plt is None:
        return None
    fpss = sorted({r["fps"] for r in rows})
    paths = ["stock", "uvgrtp", "paced", "factor"]
    colors = {"stock": "C1", "uvgrtp": "C0", "paced": "C2", "factor": "C4"}
    fig, axes = plt.subplots(2, len(fpss), figsize=(6 * len(fpss), 7), squeeze=False)
    for c, fps in enumerate(fpss):
        mult = sorted({r["mult"] for r in rows if r["fps"] == fps})
        w = 0.8 / len(paths)
        for k, p in enumerate(paths):
            rs = {r["mult"]: r for r in rows if r["fps"] == fps and r["path"] == p}
            xs = [i + (k - 1.5) * w for i in range(len(mult))]
            axes[0][c].bar(xs, [100.0 * rs[m]["lost"] / max(1, rs[m]["sent"]) if m in rs else 0
                                for m in mult], w, label=p, color=colors[p])
            axes[1][c].bar(xs, [rs[m]["lat_p99_ms"] if m in rs else 0 for m in mult], w,
                           label=p, color=colors[p])
        for ax in (axes[0][c], axes[1][c]):
            ax.set_xticks(range(len(mult)))
            ax.set_xticklabels(["%gx" % m for m in mult])
            ax.set_xlabel("bottleneck (x the stream's mean bitrate), %d fps" % fps)
        axes[0][c].set_ylabel("access units lost (%)")
        axes[1][c].set_ylabel("latency p99 (ms, lost units excluded)")
        axes[0][c].legend()
    fig.tight_layout()
    png = os.path.join(out, "pacing.png")
    fig.savefig(png, dpi=90)
    return png


def table(rows, args):
    lines = ["| fps | bottleneck | path | AUs lost (intra) | latency p50 / p99 / max (ms) | "
             "aim: p99 within (ms) | drops at the bottleneck |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %gx (%.0f Mbit/s) | %s | %d of %d (%d of %d) | %.1f / %.1f / %.1f | %.1f %s | %d |" % (
            r["fps"], r["mult"], r["bottleneck"] / 1e6, r["path"] + (" `%s`" % r["props"] if r["props"] else ""),
            r["lost"], r["sent"], r["intra_lost"], r["intra_sent"], r["lat_p50_ms"],
            r["lat_p99_ms"], r["lat_max_ms"], r["aim_ms"],
            "met" if r["lost"] == 0 and r["lat_p99_ms"] <= r["aim_ms"] else "not met", r["tbf_drops"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--fps", default="30,60")
    ap.add_argument("--factors", default="1.5,2,3")
    ap.add_argument("--queue-ms", type=int, default=20)
    ap.add_argument("--pace", type=float, default=0.9,
                    help="paced path: pacing-rate as this share of the bottleneck")
    ap.add_argument("--factor", type=float, default=1.4,
                    help="factor path: pacing-factor (of the measured bitrate)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "pacing"))
    ap.add_argument("--docs", default=None, help="replace the pacing results in this Markdown file")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("pacing.py: needs root (network namespaces)")
    os.makedirs(args.out, exist_ok=True)
    env = gst_env(args.builddir, args.out)
    bench = os.path.join(args.builddir, "bench", "uvgrtp-bench")
    rows = []
    try:
        for fps in [int(x) for x in args.fps.split(",")]:
            mean = mean_bitrate(bench, env, fps)
            for mult in [float(x) for x in args.factors.split(",")]:
                rate = int(mean * mult)
                bottleneck("up", NS, rate, args.queue_ms)
                for path, props in (("stock", ""), ("uvgrtp", ""),
                                    ("paced", "pacing-rate=%d" % int(rate * args.pace)),
                                    ("factor", "pacing-factor=%g" % args.factor)):
                    tag = "%dfps-%gx-%s" % (fps, mult, path)
                    r = run_one(args, env, fps, rate, path, props, tag)
                    r["mult"], r["mean_bitrate"] = mult, mean
                    rows.append(r)
                    print("%-22s lost %4d of %4d (intra %2d of %2d)  p50 %7.1f  p99 %7.1f  max %7.1f ms"
                          " (aim %.1f)  tbf drops %d" % (tag, r["lost"], r["sent"], r["intra_lost"],
                                                         r["intra_sent"], r["lat_p50_ms"], r["lat_p99_ms"],
                                                         r["lat_max_ms"], r["aim_ms"], r["tbf_drops"]), flush=True)
    finally:
        bottleneck("down", NS)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    png = plot(rows, args.out)
    md = table(rows, args)
    print(md)
    if args.docs:
        begin, end = "<!-- pacing:begin -->", "<!-- pacing:end -->"
        with open(args.docs) as f:
            doc = f.read()
        if begin in doc and end in doc:
            means = sorted({(r["fps"], r["mean_bitrate"]) for r in rows})
            body = "%s\n%s\n\nMean bitrate of the stream: %s; %g s per run; queue %d ms at the " \
                   "bottleneck rate. Command: `scripts/bench.sh --pacing`.\n\n%s" % (
                       begin, md, ", ".join("%.0f Mbit/s at %d fps" % (m / 1e6, f) for f, m in means),
                       args.seconds, args.queue_ms, end)
            doc = doc[:doc.index(begin)] + body + doc[doc.index(end) + len(end):]
            with open(args.docs, "w") as f:
                f.write(doc)
            if png:
                dst = os.path.join(os.path.dirname(args.docs), "benchmarks", "pacing.png")
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with open(png, "rb") as a, open(dst, "wb") as b:
                    b.write(a.read())


if __name__ == "__main__":
    main()
