#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Congestion control on RFC 8867's test cases, measured as RFC 8868 says.

The path (scripts/bottleneck.sh, three network namespaces):

  sender (NS-snd) -> relay, 50 ms (NS-rtr) -> tbf, 300 ms drop-tail -> receiver (NS-rcv)
  receiver's RTCP -> relay, 50 ms back (NS-rtr) -> sender

The relays are the tests' own (bench/relay_cli.c, `urtp-relay`), one for
RTP and one for RTCP, each holding every datagram 50 ms; the RTCP relay
carries the receiver's reports and feedback back with the same delay. The
tbf's rate follows the case's schedule (`tc qdisc change`, the queue staying
300 ms at the new rate). Each flow is one live x264enc 720p30 stream
(bench/ccbench.c, `uvgrtp-ccbench`) through one of:

  uvgrtp   uvgrtpsink congestion-control=gcc (it sets x264enc's bitrate
           itself) -> uvgrtpsrc (transport-wide feedback)
  gccbwe   rtph264pay + rtphdrexttwcc -> rtpbin with rtpgccbwe as its aux
           sender, estimated-bitrate wired to x264enc by the program, as
           webrtcsink does -> rtpbin (TWCC feedback); needs gst-plugins-rs's
           RTP plugin (scripts/build-rtp-rs.sh), skipped without it
  fixed    uvgrtpsink at the case's base rate, no congestion control

Cases, on a base of --base bit/s: 5.1 (variable capacity, one flow: 1.0x,
2.5x at 40 s, 0.6x at 60 s, 1.0x at 80 s, 100 s in all) and 5.2 (two flows
of one kind starting together, the RFC's 4/2/3.5/1/2 Mbit/s at 0/25/50/75/
100 s over 4 Mbit/s, 125 s in all; each flow measured against half the
capacity, and fairness as the larger flow's goodput over the smaller's per
phase from 5 s in), and 5.6 (one flow and a long iperf3 TCP flow starting
together at the base rate for 120 s; the TCP packets held 50 ms each way by
urtp-tundelay, bench/tundelay.c; the flow measured against half the
capacity, and fairness as the larger of the two flows' rates over the
smaller; needs iperf3), and 5.3 (a congested feedback path: one flow each
way, the RFC's 2/1/0.5/2 Mbit/s at 0/20/40/60 s forward and 2/0.8/2 Mbit/s
at 0/35/70 s backward over 2, 100 s; a second tbf in the router towards
the sender carries the backward flow and the forward flow's feedback, and
each flow's feedback crosses the other's bottleneck).

Measured per run, in 200 ms bins: the send rate (datagrams reaching the
relay), goodput (access-unit bytes out of the receiver's depayloader), the
estimate; from those: utilisation (goodput over capacity) per phase after
convergence, the time to converge after each step (the 1 s mean of the
send rate first within 10 % of the new capacity: from below after a step
up, from above after a step down), the queue at the bottleneck (the tbf's backlog
sampled every 100 ms, in ms at its rate) p50 / p95, pictures' delay over the
least seen p50 / p95, loss at the bottleneck (the tbf's drops over
datagrams) and of pictures (sent, and never out of the depayloader or out
of it short of more than 64 of its bytes: rtph264depay passes a picture
with a hole on, uvgrtpsrc drops it), and frozen time (gaps over 100 ms
between decoded pictures, over the run's length).

Usage: bench/congestion.py --builddir build/release [--cases 5.1,5.2] [--codec h264|h265]
       [--paths uvgrtp,gccbwe,fixed] [--base 10000000] [--scale 1.0]
       (fixed is left out of the cases with two flows: 5.2, 5.3)
       [--out build/bench/congestion] [--docs docs/benchmarks.md]
Needs root (network namespaces).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from benchutil import gst_env, pct, pyplot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "ubcc"
SND, RTR_IN, RTR_OUT, RCV = "10.77.1.1", "10.77.1.254", "10.77.2.254", "10.77.2.2"
DELAY_MS = 50
QUEUE_MS = 300
START_KBIT = 2048           # rtpgccbwe's own start; ours is told the same
# case -> (capacity over time as multiples of --base, length in s, flows).
# 5.2's rates are the RFC's 4/2/3.5/1/2 Mbit/s over 4, on the same base.
CASES = {
    "5.1": ([(0, 1.0), (40, 2.5), (60, 0.6), (80, 1.0)], 100, 1),
    "5.2": ([(0, 1.0), (25, 0.5), (50, 0.875), (75, 0.25), (100, 0.5)], 125, 2),
    "5.6": ([(0, 1.0)], 120, 1),
    "5.3": ([(0, 1.0), (20, 0.5), (40, 0.25), (60, 1.0)], 100, 2),
}
# cases with a flow the other way (flow 1, from the receiver's namespace to
# the sender's) and a bottleneck of this schedule on that way back, which
# the forward flow's feedback crosses too; the RFC's 2/0.8/2 Mbit/s over 2
BACKWARD = {"5.3": [(0, 1.0), (35, 0.4), (70, 1.0)]}
# cases with a long TCP flow (iperf3, the kernel's default congestion
# control) beside the media, starting with it; its packets are held 50 ms
# each way too, by urtp-tundelay (bench/tundelay.c) in the router
TCP_CASES = {"5.6"}
TCP_PORT = 5201


def sh(*cmd, check=True):
    return subprocess.run([str(c) for c in cmd], check=check, capture_output=True, text=True)


def bottleneck(*args):
    sh("bash", os.path.join(ROOT, "scripts", "bottleneck.sh"), *args)


def tbf(rate, op="change", dev="bn-rr"):
    """The bottleneck at rate bit/s, its queue QUEUE_MS at that rate. A
    link, as RFC 8867 models it: the bucket holds two full packets or a
    millisecond at the rate (scripts/bottleneck.sh's 32 KB would let each
    picture through at the veth's speed, as a policer, not a link, does)."""
    burst = max(2 * 1514, rate // 8 // 1000)
    limit = max(burst, rate // 8 * QUEUE_MS // 1000)
    sh("ip", "netns", "exec", NS + "-rtr", "tc", "qdisc", op, "dev", dev, "root", "tbf",
       "rate", "%dbit" % rate, "burst", burst, "limit", limit)


def tbf_stats(dev="bn-rr"):
    out = sh("ip", "netns", "exec", NS + "-rtr", "tc", "-s", "-j", "qdisc", "show", "dev",
             dev).stdout
    for q in json.loads(out):
        if q.get("kind") == "tbf":
            return q.get("backlog", 0), q.get("drops", 0), q.get("packets", 0)
    return 0, 0, 0


class Sampler(threading.Thread):
    """Each tbf's backlog every 100 ms, and its rate changed on its
    schedule; links: [(dev, schedule)]."""

    def __init__(self, links, base, t0):
        super().__init__(daemon=True)
        self.links, self.base, self.t0 = links, base, t0
        self.samples = [[] for _ in links]      # per link: (t, backlog ms)
        self.stop = threading.Event()

    def run(self):
        steps = [0] * len(self.links)
        rates = [int(self.base * s[0][1]) for _, s in self.links]
        while not self.stop.is_set():
            t = time.monotonic() - self.t0
            for n, (dev, schedule) in enumerate(self.links):
                while steps[n] + 1 < len(schedule) and t >= schedule[steps[n] + 1][0]:
                    steps[n] += 1
                    rates[n] = int(self.base * schedule[steps[n]][1])
                    tbf(rates[n], dev=dev)
                backlog, _, _ = tbf_stats(dev)
                self.samples[n].append((t, backlog * 8e3 / rates[n]))
            self.stop.wait(0.1)


def tcp_delay(exe):
    """TCP through the router, both ways, held DELAY_MS by urtp-tundelay:
    policy routing sends what arrives on either veth into its TUN device,
    and what it writes back is routed on as usual."""
    r = ["ip", "netns", "exec", NS + "-rtr"]
    p = subprocess.Popen(r + [exe, "--dev", "bn-d", "--delay", str(DELAY_MS)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if not p.stdout.readline().startswith("READY"):
        raise RuntimeError("urtp-tundelay did not start")
    sh(*r, "ip", "link", "set", "bn-d", "up")
    sh(*r, "ip", "route", "add", "default", "dev", "bn-d", "table", "100")
    for dev in ("bn-rs", "bn-rr"):
        sh(*r, "ip", "rule", "add", "iif", dev, "ipproto", "tcp", "lookup", "100")
    # packets come back from the TUN with the senders' addresses
    for dev in ("all", "default", "bn-d", "bn-rs", "bn-rr"):
        sh(*r, "sysctl", "-qw", "net.ipv4.conf.%s.rp_filter=0" % dev)
    return p


def tcp_series(text, t_start, length):
    """The iperf3 server's JSON: bit/s received per second, as (t, bps)
    from t_start (the run's t0, in the same monotonic seconds)."""
    try:
        d = json.loads(text)
    except ValueError:
        return []
    return [(t_start + i["sum"]["start"], i["sum"]["bits_per_second"])
            for i in d.get("intervals", []) if i["sum"]["start"] < length]


def relay(exe, port, reverse, report, back=False):
    """One relay in the router, from the sender's side to the receiver's
    (back: the other way)."""
    near, far, out = (RTR_OUT, SND, RTR_IN) if back else (RTR_IN, RCV, RTR_OUT)
    cmd = ["ip", "netns", "exec", NS + "-rtr", exe, "--listen", "%s:%d" % (near, port),
           "--to", "%s:%d" % (far, port), "--from", "%s:%d" % (out, port),
           "--delay", str(DELAY_MS)]
    if reverse:
        cmd.append("--reverse")
    if report:
        cmd += ["--report", "200"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if not p.stdout.readline().startswith("PORT"):
        raise RuntimeError("relay did not start")
    return p


def stop_relay(p):
    p.stdin.write("stop\n")
    p.stdin.flush()
    out, _ = p.communicate(timeout=30)
    return out.splitlines()


def read_log(path):
    lines = []
    try:
        with open(path) as f:
            for line in f:
                lines.append(line.split(" ", 4) if line.startswith("S ") else line.split())
    except FileNotFoundError:
        pass
    return lines


def case_key(case, codec):
    """A case's name in the results and the docs: 5.1, or 5.1-h265."""
    return case if codec == "h264" else "%s-%s" % (case, codec)


def run_case(args, env, case, path):
    schedule, length, flows = CASES[case]
    length = int(length * args.scale)
    schedule = [(t * args.scale, m) for t, m in schedule]
    backward = [(t * args.scale, m) for t, m in BACKWARD.get(case, [])]
    base = args.base
    ccb = os.path.join(args.builddir, "bench", "uvgrtp-ccbench")
    rly = os.path.join(args.builddir, "bench", "urtp-relay")
    bottleneck("up", NS, int(base * schedule[0][1]), QUEUE_MS)
    tbf(int(base * schedule[0][1]))
    links = [("bn-rr", schedule)]
    if backward:
        tbf(int(base * backward[0][1]), "add", "bn-rs")
        links.append(("bn-rs", backward))
    tag = "%s-%s" % (case_key(case, args.codec), path)
    procs, relays, logs = [], [], []
    tcp = case in TCP_CASES
    delayer = iperf_srv = iperf_cli = None
    send_path, recv_path = {"uvgrtp": ("uvgrtp", "uvgrtp"), "gccbwe": ("gccbwe", "rtpbin"),
                            "fixed": ("fixed", "uvgrtp")}[path]
    try:
        # flow k runs the other way when it is the backward one
        back = [bool(backward) and k == 1 for k in range(flows)]
        for k in range(flows):
            port = 7000 + 10 * k
            relays.append((relay(rly, port, False, True, back[k]),
                           relay(rly, port + 1, True, False, back[k])))
            slog = os.path.join(args.out, "%s-%d-send.log" % (tag, k))
            rlog = os.path.join(args.out, "%s-%d-recv.log" % (tag, k))
            logs.append((slog, rlog))
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", NS + ("-snd" if back[k] else "-rcv"), ccb, "recv",
                 "--path", recv_path, "--port", str(port), "--feedback",
                 "%s:%d" % (RTR_IN if back[k] else RTR_OUT, port + 1), "--seconds",
                 str(length + 3), "--codec", args.codec, "--log", rlog], env=env))
        if tcp:
            delayer = tcp_delay(os.path.join(args.builddir, "bench", "urtp-tundelay"))
            iperf_srv = subprocess.Popen(
                ["ip", "netns", "exec", NS + "-rcv", "iperf3", "-s", "-1", "-J", "-p",
                 str(TCP_PORT)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(1.0)
        t0 = time.monotonic()
        sampler = Sampler(links, base, t0)
        sampler.start()
        if tcp:
            iperf_cli = subprocess.Popen(
                ["ip", "netns", "exec", NS + "-snd", "iperf3", "-c", RCV, "-p", str(TCP_PORT),
                 "-t", str(length), "-J"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            tcp_t0 = time.monotonic() - t0
        for k in range(flows):
            port = 7000 + 10 * k
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", NS + ("-rcv" if back[k] else "-snd"), ccb, "send",
                 "--path", send_path, "--host", RTR_OUT if back[k] else RTR_IN, "--port", str(port), "--seconds", str(length), "--bitrate",
                 str(base // 1000 if path == "fixed" else START_KBIT), "--codec", args.codec,
                 "--log", logs[k][0]],
                env=env))
        rcs = [p.wait(timeout=length + 60) for p in procs]
        tcp_rate = []
        if tcp:
            iperf_cli.wait(timeout=30)
            out, _ = iperf_srv.communicate(timeout=30)
            tcp_rate = tcp_series(out, tcp_t0, length)
        sampler.stop.set()
        sampler.join()
        _, drops, packets = tbf_stats()
        _, drops_back, packets_back = tbf_stats("bn-rs") if backward else (0, 0, 0)
        reports = [stop_relay(m) for m, _ in relays] + [stop_relay(r) for _, r in relays]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for m, r in relays:
            for p in (m, r):
                if p.poll() is None:
                    p.kill()
        for p in (iperf_cli, iperf_srv):
            if p and p.poll() is None:
                p.kill()
        if delayer:
            delayer.stdin.write("stop\n")
            delayer.stdin.flush()
            delayer.wait(timeout=10)
        bottleneck("down", NS)
    t0_us = t0 * 1e6
    flows_out = []
    for k in range(flows):
        # each flow against its fair share of its way's capacity (the TCP
        # flow has one too)
        sched, share = (backward, 1) if back[k] else (schedule, flows - any(back) + tcp)
        flows_out.append(analyse(read_log(logs[k][0]), read_log(logs[k][1]),
                                 reports[k], sched, base / share, length, t0_us))
        flows_out[-1]["backward"] = back[k]
    return {"case": case_key(case, args.codec), "path": path, "flows": flows_out, "rcs": rcs,
            "tcp": tcp_rate,
            "tbf_drops": drops, "tbf_packets": packets,
            "tbf_back": [drops_back, packets_back], "backward": backward,
            "queue": sampler.samples[0],
            "queue_back": sampler.samples[1] if backward else [],
            "schedule": schedule, "base": base, "length": length}


def capacity_at(schedule, base, t):
    c = schedule[0][1]
    for s, m in schedule:
        if t >= s:
            c = m
    return base * c


def analyse(send, recv, relay_lines, schedule, base, length, t0_us):
    """Per-flow series and figures; times relative to t0 in seconds."""
    bins = int(length / 0.2)
    sent_rate = [0.0] * bins
    good = [0.0] * bins
    est = [None] * bins
    enc = [None] * bins
    prev = None
    for line in relay_lines:
        p = line.split()
        if p and p[0] == "T":
            t, b = int(p[1]) / 1e9, int(p[3])
            if prev:
                i = int((t - t0_us / 1e6) / 0.2)
                if 0 <= i < bins:
                    sent_rate[i] += (b - prev[1]) * 8 / 0.2
            prev = (t, b)
    frames = {}
    for p in send:
        if p[0] == "F":
            frames[int(p[1])] = (int(p[2]), int(p[3]))
        elif p[0] == "R":
            i = int((int(p[1]) - t0_us) / 2e5)
            if 0 <= i < bins:
                enc[i], est[i] = int(p[2]) * 1000, int(p[3])
    got, delays, decoded, whole, broken = set(), [], [], [], 0
    for p in recv:
        if p[0] == "A" and p[1] != "-1":
            t = int(p[2])
            got.add(int(p[1]))
            # a picture short of a packet or more: its slices are missing
            sent = frames.get(int(p[1]))
            short = sent is not None and int(p[4]) < sent[1] - 64
            broken += short
            if not short:
                whole.append((t - t0_us) / 1e6)
            delays.append((t - int(p[3])) / 1e3)
            i = int((t - t0_us) / 2e5)
            if 0 <= i < bins:
                good[i] += int(p[4]) * 8 / 0.2
        elif p[0] == "D":
            decoded.append((int(p[1]) - t0_us) / 1e6)
    base_delay = min(delays) if delays else 0
    added = [d - base_delay for d in delays]

    def frozen_pct(times):
        """Gaps over 100 ms between pictures, from the first, over the
        run's length from then."""
        f = sum(b - a for a, b in zip(times, times[1:]) if b - a > 0.1)
        if times and times[-1] < length - 0.5:
            f += length - times[-1]
        span = length - (times[0] if times else 0)
        return 100.0 * f / span if span > 0 else float("nan")

    def mean1s(series, i):
        w = series[max(0, i - 4):i + 1]
        return sum(w) / len(w)

    phases = []
    marks = [s for s, _ in schedule] + [length]
    for n, (start, m) in enumerate(schedule):
        cap = base * m
        end = marks[n + 1]
        up = n == 0 or m > schedule[n - 1][1]
        conv = None
        for i in range(int(start / 0.2) + 4, int(end / 0.2)):
            g = mean1s(sent_rate, i)
            if (up and g >= 0.9 * cap) or (not up and g <= 1.1 * cap):
                conv = (i + 1) * 0.2 - start
                break
        after = start + (conv if conv is not None else 5.0)
        idx = range(int(after / 0.2), int(end / 0.2))
        util = sum(good[i] for i in idx) / len(idx) / cap if len(idx) else float("nan")
        phases.append({"start": start, "capacity": cap, "up": up, "converge_s": conv,
                       "utilisation": util})
    lost = [i for i in frames if i not in got]
    stats = next((p[1] for p in send if p[0] == "S"), "")
    return {
        "sent_rate": sent_rate, "goodput": good, "estimate": est, "encoder": enc,
        "phases": phases, "frames": len(frames), "frames_lost": len(lost) + broken,
        "frames_broken": broken,
        "delay_p50_ms": pct(added, 0.5), "delay_p95_ms": pct(added, 0.95),
        "base_delay_ms": base_delay, "decoded": len(decoded),
        # frozen: no new whole picture for over 100 ms (a picture decoded
        # with slices missing shows the hole, or the last picture's
        # content there: it is no new picture); and as decoded, with
        # broken ones counted as shown (rtph264depay passes them on,
        # uvgrtpsrc drops them)
        "frozen_pct": frozen_pct(sorted(whole)) if decoded else float("nan"),
        "frozen_shown_pct": frozen_pct(decoded),
        "sink_stats": stats[:2000],
    }


def phase_means(r, series):
    """Per phase of the schedule, from 5 s in: the mean of series, a list
    of 200 ms bins or of (t, value) samples."""
    marks = [t for t, _ in r["schedule"]] + [r["length"]]
    means = []
    for a, b in zip(marks, marks[1:]):
        if series and isinstance(series[0], (tuple, list)):
            v = [x for t, x in series if a + 5 <= t < b]
        else:
            v = series[int((a + 5) / 0.2):int(b / 0.2)]
        means.append(sum(v) / len(v) if v else 0.0)
    return means


def ratio(a, b):
    """The larger over the smaller (RFC 8868's fairness: within 3)."""
    return max(a, b) / min(a, b) if min(a, b) > 0 else float("inf")


def queue_figures(samples, drops, packets):
    q = [ms for t, ms in samples if t >= 2.0]
    return {"queue_p50_ms": pct(q, 0.5), "queue_p95_ms": pct(q, 0.95),
            "loss_pct": 100.0 * drops / max(1, packets + drops)}


def summary(r):
    out = queue_figures(r["queue"], r["tbf_drops"], r["tbf_packets"])
    if r.get("backward"):
        out["back"] = queue_figures(r["queue_back"], *r["tbf_back"])
    elif len(r["flows"]) > 1:
        # fairness: per phase, the larger flow's mean goodput over the
        # smaller's
        a, b = (phase_means(r, f["goodput"]) for f in r["flows"][:2])
        out["fairness"] = [ratio(x, y) for x, y in zip(a, b)]
    if r.get("tcp"):
        # against TCP: the media's mean goodput and TCP's mean rate
        media, tcp = phase_means(r, r["flows"][0]["goodput"]), phase_means(r, r["tcp"])
        out["fairness"] = [ratio(x, y) for x, y in zip(media, tcp)]
        out["tcp_mbit"] = [x / 1e6 for x in tcp]
    return out


def plot(results, out, case):
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(2, len(results), figsize=(6 * len(results), 7), squeeze=False)
    for c, r in enumerate(results):
        ax = axes[0][c]
        t = [i * 0.2 for i in range(int(r["length"] / 0.2))]
        cap = [capacity_at(r["schedule"], r["base"], x) / 1e6 for x in t]
        ax.plot(t, cap, "k-", label="capacity" + (" forward" if r.get("backward") else ""))
        if r.get("backward"):
            ax.plot(t, [capacity_at(r["backward"], r["base"], x) / 1e6 for x in t], "k--",
                    label="capacity backward")
        for k, f in enumerate(r["flows"]):
            g = [sum(f["goodput"][max(0, i - 4):i + 1]) / len(f["goodput"][max(0, i - 4):i + 1]) / 1e6
                 for i in range(len(f["goodput"]))]
            name = " backward" if f.get("backward") else " forward" if r.get("backward") \
                else " flow %d" % k if len(r["flows"]) > 1 else ""
            ax.plot(t, g, label="goodput (1 s)" + name)
            e = [x / 1e6 if x else None for x in f["estimate"]]
            if any(e) and r["path"] != "fixed":
                ax.plot(t, e, ":", label="estimate" + name)
        ax.set_title("%s %s" % (r["case"], r["path"]))
        if r.get("tcp"):
            ax.plot([t for t, _ in r["tcp"]], [b / 1e6 for _, b in r["tcp"]], "C2--",
                    label="TCP (1 s)")
        if (len(r["flows"]) > 1 and not r.get("backward")) or r.get("tcp"):
            ax.plot(t, [x / (len(r["flows"]) + bool(r.get("tcp"))) for x in cap], "k:",
                    label="fair share")
        ax.set_ylabel("Mbit/s")
        ax.legend(fontsize=7)
        qa = axes[1][c]
        qa.plot([x for x, _ in r["queue"]], [y for _, y in r["queue"]], "C3",
                label="forward")
        if r.get("queue_back"):
            qa.plot([x for x, _ in r["queue_back"]], [y for _, y in r["queue_back"]], "C4",
                    label="backward")
            qa.legend(fontsize=7)
        qa.set_ylabel("queue at the bottleneck (ms)")
        qa.set_xlabel("s")
        qa.set_ylim(0, 320)
    fig.tight_layout()
    png = os.path.join(out, "congestion-%s.png" % case)
    fig.savefig(png, dpi=80)
    return png


def fmt(v, f="%.1f"):
    return "-" if v is None or v != v else f % v


def frozen(f):
    """Frozen time; and as decoded, when broken pictures shown make it
    differ."""
    a, b = f["frozen_pct"], f.get("frozen_shown_pct", f["frozen_pct"])
    return fmt(a, "%.2f") + (" (%s shown)" % fmt(b, "%.2f") if abs(a - b) >= 0.05 else "")


def table(results):
    lines = ["| case | path | utilisation per phase after convergence (%) | converged after each "
             "step (s) | queue p50 / p95 (ms) | picture delay over the least p50 / p95 (ms) | "
             "loss at the bottleneck (%) | pictures lost or broken (%) | frozen (%; as decoded, broken ones shown) | fairness per phase |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s = summary(r)
        for k, f in enumerate(r["flows"]):
            ph = f["phases"]
            fair = " / ".join(fmt(x, "%.2f") for x in s["fairness"]) \
                if "fairness" in s and k == 0 else "-"
            if "tcp_mbit" in s:
                fair += " (TCP %s Mbit/s)" % " / ".join(fmt(x) for x in s["tcp_mbit"])
            # the queue and loss of the bottleneck this flow crosses
            q = s["back"] if f.get("backward") else s
            name = " (backward)" if f.get("backward") else " (forward)" if r.get("backward") \
                else " (flow %d)" % k if len(r["flows"]) > 1 else ""
            lines.append("| %s | %s%s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s |" % (
                r["case"], r["path"], name,
                " / ".join(fmt(100 * p["utilisation"], "%.0f") for p in ph),
                " / ".join(fmt(p["converge_s"]) for p in ph[1:]),
                fmt(q["queue_p50_ms"]), fmt(q["queue_p95_ms"]), fmt(f["delay_p50_ms"]),
                fmt(f["delay_p95_ms"]), fmt(q["loss_pct"], "%.2f"),
                fmt(100.0 * f["frames_lost"] / max(1, f["frames"]), "%.2f"),
                frozen(f), fair))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--cases", default="5.1")
    ap.add_argument("--paths", default="uvgrtp,gccbwe,fixed")
    ap.add_argument("--base", type=int, default=10000000)
    ap.add_argument("--scale", type=float, default=1.0, help="the schedule's times, scaled")
    ap.add_argument("--codec", choices=("h264", "h265"), default="h264",
                    help="x264enc or x265enc (results as case 5.x-h265)")
    ap.add_argument("--rtp-rs", default=os.path.join(ROOT, "build", "deps", "gst-plugin-rtp"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "congestion"))
    ap.add_argument("--docs", default=None, help="replace the congestion results in this Markdown file")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("congestion.py: needs root (network namespaces)")
    os.makedirs(args.out, exist_ok=True)
    env = gst_env(args.builddir, args.out, args.rtp_rs)
    have_bwe = subprocess.run(["gst-inspect-1.0", "rtpgccbwe"], env=env,
                              capture_output=True).returncode == 0
    results = []
    for case in args.cases.split(","):
        for path in args.paths.split(","):
            if path == "gccbwe" and not have_bwe:
                print("congestion.py: no rtpgccbwe (scripts/build-rtp-rs.sh): %s skipped" % path)
                continue
            if path == "fixed" and CASES[case][2] > 1:
                continue        # fairness between fixed flows says nothing
            if case in TCP_CASES and not shutil.which("iperf3"):
                print("congestion.py: no iperf3: %s skipped" % case)
                continue
            r = run_case(args, env, case, path)
            results.append(r)
            print(table([r]).splitlines()[-1], flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f)
    print(table(results))
    # per case: its table and plot into the docs' block for it
    for case in sorted({r["case"] for r in results}):
        rs = [r for r in results if r["case"] == case]
        png = plot(rs, args.out, case)
        md = table(rs)
        if not args.docs:
            continue
        begin, end = "<!-- congestion %s:begin -->" % case, "<!-- congestion %s:end -->" % case
        with open(args.docs) as f:
            doc = f.read()
        if begin not in doc or end not in doc:
            print("congestion.py: no %s ... %s in %s" % (begin, end, args.docs))
            continue
        cmd = "--cases %s" % case.split("-")[0] + (" --codec h265" if case.endswith("-h265") else "")
        body = "%s\n%s\n\nBase %g Mbit/s, schedule scaled x%g; one-way delay %d ms each way, " \
               "queue %d ms. Command: `scripts/bench.sh --congestion %s`.\n\n%s" % (
                   begin, md, args.base / 1e6, args.scale, DELAY_MS, QUEUE_MS, cmd, end)
        doc = doc[:doc.index(begin)] + body + doc[doc.index(end) + len(end):]
        with open(args.docs, "w") as f:
            f.write(doc)
        if png:
            dst = os.path.join(os.path.dirname(args.docs), "benchmarks", os.path.basename(png))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(png, "rb") as a, open(dst, "wb") as b:
                b.write(a.read())


if __name__ == "__main__":
    main()
