# SPDX-License-Identifier: BSD-2-Clause
"""What the Python tests share: GStreamer from Python, TAP output, Annex-B
splitting, and FFmpeg 8 (from PyPI, through scripts/fetch-ffmpeg.sh).

Import this before anything from gi: import_gst() re-executes the test
under Debian's python3 when the python3 first on PATH (a pyenv or venv one)
has no PyGObject, and exits 77 (meson's skip) when none has.
"""

import os
import re
import subprocess
import sys

USR_PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
FETCH = os.path.join(HERE, "..", "..", "scripts", "fetch-ffmpeg.sh")

# A sanitizer build runs the interpreter with the sanitizer runtime
# preloaded; FFmpeg, pip and bash need none of it.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def import_gst():
    """Returns the Gst module (GstApp loaded too), or exits as above."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        gi.require_version("GstApp", "1.0")
        from gi.repository import Gst, GstApp  # noqa: F401  (typed appsrc/appsink)
    except (ImportError, ValueError):
        if (os.path.realpath(sys.executable) != os.path.realpath(USR_PYTHON)
                and os.access(USR_PYTHON, os.X_OK)
                and not os.environ.get("PYTAP_REEXEC")):
            os.environ["PYTAP_REEXEC"] = "1"
            os.execv(USR_PYTHON, [USR_PYTHON] + sys.argv)
        print("1..0 # SKIP PyGObject with GStreamer 1.0 unavailable")
        sys.exit(77)
    return Gst


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, name))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, name))
            if diag:
                for line in str(diag).splitlines():
                    print("#   " + line)
        sys.stdout.flush()
        return cond

    def eq(self, got, want, name):
        return self.ok(got == want, name, "got:  %r\nwant: %r" % (got, want))

    def diag(self, msg):
        print("# " + msg)
        sys.stdout.flush()

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed or self.n == 0 else 0


def split_nals(data):
    """NAL units of an Annex-B stream, start codes of any length removed.
    A NAL unit never ends in a zero byte (rbsp_trailing_bits or
    cabac_zero_word 0x0003), so zeros before a start code belong to it."""
    starts = [m.start() for m in re.finditer(b"\x00\x00\x01", data)]
    nals = []
    for i, p in enumerate(starts):
        s = p + 3
        e = starts[i + 1] if i + 1 < len(starts) else len(data)
        while e > s and data[e - 1] == 0:
            e -= 1
        nals.append(data[s:e])
    return nals


def annexb4(nals):
    return b"".join(b"\x00\x00\x00\x01" + n for n in nals)


def find_ffmpeg():
    """Path of an FFmpeg 8 binary ($FFMPEG8, else fetched), or None."""
    env = os.environ.get("FFMPEG8")
    if env:
        return env if os.access(env, os.X_OK) else None
    try:
        r = subprocess.run(["bash", FETCH], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=600, check=False,
                           env=CHILD_ENV)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace"))
        return None
    path = r.stdout.decode().strip().splitlines()[-1]
    return path if os.access(path, os.X_OK) else None


def wait_msg(Gst, pipe, types, timeout_s):
    """The next bus message of the given types or an error: (msg, error
    text or None); (None, None) on a timeout."""
    bus = pipe.get_bus()
    msg = bus.timed_pop_filtered(int(timeout_s * Gst.SECOND),
                                 types | Gst.MessageType.ERROR)
    if msg and msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        return msg, "%s (%s)" % (err.message, dbg)
    return msg, None
