#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Many receiving streams in one process: what each costs.

One gst-launch-1.0 runs N `uvgrtpsrc ! fakesink` branches; one uvgrtpsink
fans a real x264 stream (1280x720, 30 fps, about 8 Mbit/s, made once) out
to all N ports. After a warm-up, over a window: the receiving process's
CPU time and resident memory (VmRSS, and VmHWM, its peak), and the kernel's
receive buffers of its sockets as `ss -m` reports them (rb: the limit, r:
what is queued). Prints one line per N.

  python3 bench/scale.py --plugin-path build/release/gst --streams 1 64 256
  ... --buffer-size 33554432    # the element's old default, for comparison
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

CLIP = os.path.join(tempfile.gettempdir(), "uvgrtp-scale-720p-8M.mkv")


def make_clip(env):
    if os.path.exists(CLIP):
        return
    subprocess.run(
        ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=600", "pattern=snow", "!",
         "video/x-raw,width=1280,height=720,framerate=30/1", "!",
         "x264enc", "bitrate=8000", "pass=cbr", "speed-preset=ultrafast",
         "tune=zerolatency", "key-int-max=60", "!", "h264parse", "!",
         "matroskamux", "!", "filesink", "location=" + CLIP], check=True, env=env)


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def proc_mem(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) * 1024
    return out


def socket_mem(ports):
    """Sum of rb (receive buffer limit) and r (queued) over the ports."""
    out = subprocess.run(["ss", "-u", "-a", "-n", "-m"], capture_output=True,
                         text=True).stdout
    rb = r = 0
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r":(\d+)\s", line)
        if not m or int(m.group(1)) not in ports or i + 1 >= len(lines):
            continue
        sk = re.search(r"skmem:\(r(\d+),rb(\d+)", lines[i + 1])
        if sk:
            r += int(sk.group(1))
            rb += int(sk.group(2))
    return rb, r


def run(n, args, env):
    base = args.base_port
    ports = list(range(base, base + 2 * n, 2))
    rx_desc = []
    for p in ports:
        rx_desc += ["uvgrtpsrc", f"port={p}", "address=127.0.0.1", "encoding-name=H264",
                    "rtcp=false"]
        if args.buffer_size is not None:
            rx_desc.append(f"buffer-size={args.buffer_size}")
        rx_desc += ["!", "fakesink", "sync=false", "async=false"]
    rx = subprocess.Popen(["gst-launch-1.0", "-q"] + rx_desc, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1 + n / 100)
    clients = ",".join(f"127.0.0.1:{p}" for p in ports)
    tx = subprocess.Popen(
        ["gst-launch-1.0", "-q", "filesrc", "location=" + CLIP, "!", "matroskademux", "!",
         "h264parse", "!", "uvgrtpsink", "clients=" + clients, "rtcp=false"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(args.warmup)
    c0, t0 = proc_stat(rx.pid), time.monotonic()
    time.sleep(args.seconds)
    c1, t1 = proc_stat(rx.pid), time.monotonic()
    mem = proc_mem(rx.pid)
    rb, r = socket_mem(set(ports))
    tx.kill()
    rx.kill()
    tx.wait()
    rx.wait()
    cpu = (c1 - c0) / (t1 - t0) * 100
    print(f"streams {n:4d}: cpu {cpu:6.1f}% ({cpu / n:5.2f}% each), "
          f"rss {mem['VmRSS'] / 2**20:7.1f} MiB ({mem['VmRSS'] / n / 2**20:5.2f} each), "
          f"peak {mem['VmHWM'] / 2**20:7.1f} MiB, kernel rb {rb / n / 2**20:5.1f} MiB each, "
          f"queued {r / 2**20:6.1f} MiB", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin-path", required=True)
    ap.add_argument("--streams", type=int, nargs="+", default=[1, 64, 256])
    ap.add_argument("--buffer-size", type=int)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--base-port", type=int, default=21000)
    args = ap.parse_args()
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.abspath(args.plugin_path))
    make_clip(env)
    for n in args.streams:
        run(n, args, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
