# SPDX-License-Identifier: BSD-2-Clause
"""What the measurement scripts (ab.py, pacing.py, recovery.py, congestion.py)
share: the environment for GStreamer, the receiver's READY handshake, the
per-access-unit time files uvgrtp-bench writes with --times, a percentile,
and matplotlib when it is there."""
import os
import select
import time


def wait_ready(proc, timeout=30):
    """Waits for a `uvgrtp-bench recv` to print READY; kills it and raises
    if it does not within timeout seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([proc.stdout], [], [], 1)
        if r and proc.stdout.readline().startswith("READY"):
            return
    proc.kill()
    raise RuntimeError("receiver not ready")


def read_times(path, sender):
    """index -> (due, bytes, key) from a sender's --times file, index ->
    time from a receiver's."""
    t = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < (4 if sender else 2):
                continue        # a line cut short by a process that was stopped
            t[int(p[0])] = (float(p[1]), int(p[2]), int(p[3])) if sender else float(p[1])
    return t


def pct(v, q):
    """The q-quantile (0..1) of v, nearest rank; NaN when v is empty."""
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (and says so) without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return None
    return plt


def gst_env(builddir, out, *extra_plugin_dirs):
    """The environment for GStreamer programs of a run: our plugins (and
    extra_plugin_dirs) on the plugin path, a registry of the run's own in
    out, GST_DEBUG 0 unless set."""
    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = ":".join((os.path.join(builddir, "gst"),) + extra_plugin_dirs)
    env["GST_REGISTRY"] = os.path.join(out, "registry.bin")
    env.setdefault("GST_DEBUG", "0")
    return env
