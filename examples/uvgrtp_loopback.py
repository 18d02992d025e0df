#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Embedding uvgrtpsink and uvgrtpsrc in a Python (PyGObject) application.

Sends an H.264 test pattern through uvgrtpsink to uvgrtpsrc on loopback,
decodes it, and prints the frame count and both elements' statistics.

    GST_PLUGIN_PATH=build/gst python3 examples/uvgrtp_loopback.py [frames]
"""
import socket
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    Gst.init(None)
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    port = free_udp_port()

    rx = Gst.parse_launch(
        f"uvgrtpsrc name=net address=127.0.0.1 port={port} encoding-name=H264 "
        "! h264parse ! avdec_h264 ! fakesink name=out sync=false")
    tx = Gst.parse_launch(
        f"videotestsrc is-live=true num-buffers={frames} "
        "! video/x-raw,width=640,height=360,framerate=30/1 "
        "! x264enc tune=zerolatency speed-preset=ultrafast "
        "! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au "
        f"! uvgrtpsink name=net host=127.0.0.1 port={port}")

    decoded = 0

    def on_buffer(pad, info):
        nonlocal decoded
        decoded += 1
        return Gst.PadProbeReturn.OK

    rx.get_by_name("out").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, on_buffer)

    rx.set_state(Gst.State.PLAYING)
    tx.set_state(Gst.State.PLAYING)
    msg = tx.get_bus().timed_pop_filtered(
        (frames // 30 + 30) * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if msg is None or msg.type == Gst.MessageType.ERROR:
        print("sender failed:", msg.parse_error()[0].message if msg else "timeout")
        return 1

    # Let the last frames through the decoder.
    loop = GLib.MainLoop()
    GLib.timeout_add(500, loop.quit)
    loop.run()

    print(f"decoded {decoded} of {frames} frames")
    print("sender:  ", tx.get_by_name("net").get_property("stats").to_string())
    print("receiver:", rx.get_by_name("net").get_property("stats").to_string())
    tx.set_state(Gst.State.NULL)
    rx.set_state(Gst.State.NULL)
    return 0 if decoded == frames else 1


if __name__ == "__main__":
    sys.exit(main())
