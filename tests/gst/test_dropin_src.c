/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dropin_src - uvgrtpsrc where a pipeline or an application had
 * udpsrc ! (rtpjitterbuffer !) depayloader, on real loopback sockets:
 *
 *  1. RTCP ports that hurt no neighbour: two receivers on consecutive
 *     ports, started in either order, each sent to from eight source
 *     ports in turn. Every datagram reaches the element it was sent to,
 *     or the receiver that cannot have its port fails at start naming
 *     `port`; the one that cannot have its RTCP port warns naming
 *     rtcp-port, rtcp-mux and rtcp, and RTCP meant for that port, read on
 *     its neighbour's RTP port, is counted there and changes nothing.
 *  2. rtpjitterbuffer's do-lost as a depayloader turns it into gaps: live
 *     Opus with one packet in 20 dropped, decoded by opusdec plc=true, is
 *     as long as what was sent, in one run of timestamps; without do-lost
 *     it is shorter by the packets lost.
 *  3. drop-msg for a packet after its gap was given up; latency changed
 *     while playing (latency message, query); drop-on-latency dropping
 *     what waited in the socket, every packet accounted for.
 *  4. udpsrc's surface: the URI handler, a group joined source-specifically
 *     on multicast-iface (a stranger's packets never arrive), the sender's
 *     address as GstNetAddressMeta, skip-first-bytes, bad input named.
 *  5. IPv6 multicast in a network namespace of its own: a group joined on
 *     a veth, any source, one source only, all but one (MLDv2).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <net/if.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>
#include <gst/net/gstnetaddressmeta.h>

#include "rtcputil.h"

#define PT 96
#define FLOWS 8
#define PER_FLOW 20

/* A receiver of Opus on 127.0.0.1:port, its buffers in appsink "out". */
static GstElement *
opus_receiver (gint port)
{
  return launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=OPUS ! appsink name=out sync=false", port);
}

/* Sends n RTP packets of ssrc (40 bytes of payload each), numbered on from
 * *seq, each after `prefix` bytes of another protocol, from fd to dst;
 * closes fd. */
static void
send_numbered (int fd, const struct sockaddr *dst, socklen_t dst_len,
    guint prefix, guint32 ssrc, guint16 * seq, guint n)
{
  guint8 pkt[8 + 12 + 40], *rtp = pkt + prefix;
  gsize len = prefix + 12 + 40;

  fail_unless (prefix <= 8);
  memset (pkt, 0x5a, sizeof pkt);
  for (guint i = 0; i < n; i++, (*seq)++) {
    rtp[0] = 0x80;
    rtp[1] = PT;
    GST_WRITE_UINT16_BE (rtp + 2, *seq);
    GST_WRITE_UINT32_BE (rtp + 4, (guint32) * seq * 960);
    GST_WRITE_UINT32_BE (rtp + 8, ssrc);
    fail_unless (sendto (fd, pkt, len, 0, dst, dst_len) == (gssize) len);
  }
  close (fd);
}

/* Sends `n` RTP packets of one source, each after `prefix` bytes of
 * another protocol, from a new socket (a new source port) bound to `from`
 * (NULL: any) to to:port (a group: out through lo), numbered on from
 * *seq. */
static void
send_packets (const gchar * from, const gchar * to, gint port, guint32 ssrc,
    guint16 * seq, guint n, guint prefix)
{
  struct sockaddr_in dst = {.sin_family = AF_INET,
    .sin_port = htons ((guint16) port)
  };
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  fail_unless (fd >= 0);
  fail_unless (inet_pton (AF_INET, to, &dst.sin_addr) == 1);
  if (from) {
    struct sockaddr_in a = {.sin_family = AF_INET };
    fail_unless (inet_pton (AF_INET, from, &a.sin_addr) == 1);
    fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  }
  if (IN_MULTICAST (ntohl (dst.sin_addr.s_addr))) {
    struct ip_mreqn m = {.imr_ifindex = (int) if_nametoindex ("lo") };
    fail_unless (setsockopt (fd, IPPROTO_IP, IP_MULTICAST_IF, &m,
            sizeof m) == 0);
  }
  send_numbered (fd, (struct sockaddr *) &dst, sizeof dst, prefix, ssrc, seq,
      n);
}

static void
send_flow (gint port, guint32 ssrc, guint16 * seq, guint n)
{
  send_packets (NULL, "127.0.0.1", port, ssrc, seq, n, 0);
}

/* A sender report of `ssrc` to 127.0.0.1:port, as a sender whose
 * receiver is on port - 1 sends it. */
static void
send_sr (gint port, guint32 ssrc)
{
  struct sockaddr_in to = {.sin_family = AF_INET,
    .sin_port = htons ((guint16) port),
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  guint8 sr[28] = { 0x80, 200, 0, 6 };
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  GST_WRITE_UINT32_BE (sr + 4, ssrc);
  fail_unless (fd >= 0);
  fail_unless (sendto (fd, sr, sizeof sr, 0, (struct sockaddr *) &to,
          sizeof to) == sizeof sr);
  close (fd);
}

/* Pulls buffers from "out" until `n` came or a second passed without one. */
static guint
pull_count (GstElement * p, guint n)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
  GstSample *s;
  guint got = 0;

  while (got < n && (s = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              GST_SECOND))) {
    gst_sample_unref (s);
    got++;
  }
  gst_object_unref (out);
  return got;
}

/* The first warning or error on p's bus within `timeout`, or NULL. */
static GstMessage *
pop_problem (GstElement * p, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);

  gst_object_unref (bus);
  return m;
}

/* Both on consecutive ports, `upper_first` saying which starts first. */
static void
run_consecutive (gboolean upper_first)
{
  gint base = free_ports (3);
  GstElement *lower = opus_receiver (base), *upper = opus_receiver (base + 1);
  GstElement *starts = upper_first ? upper : lower;
  GstElement *then = upper_first ? lower : upper;
  GstStateChangeReturn ret;
  GstMessage *m;
  GstStructure *st;
  GError *err = NULL;
  gchar *dbg = NULL;
  guint16 seq[2] = { 100, 5000 };

  play (starts);
  ret = gst_element_set_state (then, GST_STATE_PLAYING);
  /* the lower one cannot have base + 1 for RTCP: it warns and runs; or the
   * upper one cannot have its RTP port: it fails */
  fail_unless ((ret == GST_STATE_CHANGE_FAILURE) == !upper_first);
  m = pop_problem (then, 5 * GST_SECOND);

  /* eight flows each, from eight source ports in turn: all arrive */
  for (guint f = 0; f < FLOWS; f++) {
    send_flow (base, 0x1000, &seq[0], PER_FLOW);
    if (upper_first)
      send_flow (base + 1, 0x2000, &seq[1], PER_FLOW);
  }
  fail_unless_equals_int (pull_count (lower, FLOWS * PER_FLOW),
      FLOWS * PER_FLOW);
  st = stats_of (lower, "src");
  fail_unless_equals_uint64 (u64 (st, "packets"), FLOWS * PER_FLOW);
  gst_structure_free (st);
  if (upper_first) {
    guint got = pull_count (upper, FLOWS * PER_FLOW);
    if (got != FLOWS * PER_FLOW) {
      st = stats_of (upper, "src");
      gchar *t = gst_structure_to_string (st);
      g_printerr ("%s\n", t);
      g_free (t);
      gst_structure_free (st);
    }
    fail_unless_equals_int (got, FLOWS * PER_FLOW);
  }

  fail_unless (m != NULL, "no warning or error");
  if (upper_first) {
    fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING);
    gst_message_parse_warning (m, &err, &dbg);
    fail_unless (strstr (err->message, "No RTCP") &&
        strstr (err->message, "'rtcp-port'") &&
        strstr (err->message, "'rtcp-mux=true'") &&
        strstr (err->message, "'rtcp=false'"), "%s", err->message);
  } else {
    fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    gst_message_parse_error (m, &err, &dbg);
    fail_unless (strstr (err->message, "'port'"), "%s", err->message);
    fail_unless (dbg && strstr (dbg, "'rtcp-port'"), "%s", GST_STR_NULL (dbg));
  }
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (m);

  if (upper_first) {
    /* the lower stream's sender reports its RTCP to base + 1 */
    send_sr (base + 1, 0x1000);
    send_sr (base + 1, 0x1000);
    for (guint i = 0; i < 100; i++) {
      st = stats_of (upper, "src");
      if (u64 (st, "malformed") == 2)
        break;
      gst_structure_free (st);
      st = NULL;
      g_usleep (20000);
    }
    fail_unless (st != NULL, "the reports were not counted");
    fail_unless_equals_uint64 (u64 (st, "packets"), FLOWS * PER_FLOW);
    fail_unless_equals_uint64 (u64 (st, "foreign"), 0);
    gst_structure_free (st);
  }
  stop (lower);
  stop (upper);
}

GST_START_TEST (test_rtcp_ports_upper_first)
{
  run_consecutive (TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rtcp_ports_lower_first)
{
  run_consecutive (FALSE);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* loss downstream: what rtpjitterbuffer do-lost and a depayloader give */

#define OPUS_PACKETS 60
#define OPUS_DROP_EVERY 20      /* 5 % */

typedef struct
{
  guint sent, dropped;          /* packets: offered, of which dropped */
} Dropper;

static GstPadProbeReturn
drop_every (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Dropper *d = user;

  if (d->sent++ % OPUS_DROP_EVERY != OPUS_DROP_EVERY / 2)
    return GST_PAD_PROBE_OK;
  d->dropped++;
  return GST_PAD_PROBE_DROP;
}

typedef struct
{
  guint lost, gaps;
  GstClockTime lost_duration;
} LostSeen;

static GstPadProbeReturn
on_src_event (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  LostSeen *seen = user;
  GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);
  const GstStructure *s = gst_event_get_structure (ev);
  guint64 d = 0;

  if (GST_EVENT_TYPE (ev) == GST_EVENT_GAP)
    seen->gaps++;
  if (s && gst_structure_has_name (s, "GstRTPPacketLost")) {
    fail_unless (gst_structure_get_uint64 (s, "duration", &d));
    fail_unless (gst_structure_has_field_typed (s, "seqnum", G_TYPE_UINT));
    fail_unless (gst_structure_has_field_typed (s, "timestamp",
            G_TYPE_UINT64));
    seen->lost++;
    seen->lost_duration += d;
  }
  return GST_PAD_PROBE_OK;
}

/* Live Opus, one packet in 20 dropped on its way, decoded by opusdec
 * plc=true: with do-lost the decoded audio is as long as what was sent,
 * in one continuous run of timestamps; without, a frame shorter per loss. */
static void
run_opus_loss (gboolean do_lost)
{
  gint port = free_ports (2);
  GstElement *rx, *tx, *udp, *src, *out;
  GstPad *pad;
  GstSample *sample;
  Dropper drop = { 0 };
  guint64 samples = 0;
  gboolean at_start = TRUE;
  GstClockTime next = GST_CLOCK_TIME_NONE;
  LostSeen seen = { 0 };
  GstStructure *st;

  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=OPUS do-lost=%d ! opusdec plc=true ! "
      "audio/x-raw,format=S16LE,channels=1 ! appsink name=out sync=false",
      port, do_lost);
  src = gst_bin_get_by_name (GST_BIN (rx), "src");
  pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
      on_src_event, &seen, NULL);
  gst_object_unref (pad);
  play (rx);
  tx = launchf ("audiotestsrc is-live=true num-buffers=%d "
      "samplesperbuffer=960 wave=sine ! audio/x-raw,rate=48000,channels=1 ! "
      "opusenc frame-size=20 ! rtpopuspay pt=96 ! "
      "udpsink name=udp host=127.0.0.1 port=%d", OPUS_PACKETS, port);
  udp = gst_bin_get_by_name (GST_BIN (tx), "udp");
  pad = gst_element_get_static_pad (udp, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      drop_every, &drop, NULL);
  gst_object_unref (pad);
  gst_object_unref (udp);
  play (tx);

  out = gst_bin_get_by_name (GST_BIN (rx), "out");
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              (GST_CLOCK_TIME_IS_VALID (next) ? 1 : 5) * GST_SECOND))) {
    GstBuffer *b = gst_sample_get_buffer (sample);
    guint64 n = gst_buffer_get_size (b) / 2;

    /* one run: each buffer starts where the one before ended (after the
     * first, which may have come late: the timing anchors on the second) */
    if (do_lost && !at_start)
      fail_unless (GST_BUFFER_PTS (b) + GST_MSECOND >= next &&
          GST_BUFFER_PTS (b) <= next + GST_MSECOND,
          "pts %" GST_TIME_FORMAT " after one that ended at %" GST_TIME_FORMAT,
          GST_TIME_ARGS (GST_BUFFER_PTS (b)), GST_TIME_ARGS (next));
    at_start = !GST_CLOCK_TIME_IS_VALID (next);
    next = GST_BUFFER_PTS (b) + gst_util_uint64_scale (n, GST_SECOND, 48000);
    samples += n;
    gst_sample_unref (sample);
  }
  gst_object_unref (out);
  /* opusenc may flush one more packet at the end */
  fail_unless (drop.sent >= OPUS_PACKETS && drop.dropped > 0);
  st = stats_of (rx, "src");
  fail_unless_equals_uint64 (u64 (st, "packets"), drop.sent - drop.dropped);
  if (do_lost) {
    /* every packet's 960 samples: decoded or concealed */
    fail_unless_equals_uint64 (samples, drop.sent * 960);
    fail_unless_equals_int (seen.lost, drop.dropped);
    fail_unless_equals_int (seen.gaps, drop.dropped);
    fail_unless_equals_uint64 (u64 (st, "lost-events"), seen.lost);
    fail_unless (seen.lost_duration >= seen.lost * 19 * GST_MSECOND &&
        seen.lost_duration <= seen.lost * 21 * GST_MSECOND);
  } else {
    fail_unless_equals_uint64 (samples, (drop.sent - drop.dropped) * 960);
    fail_unless_equals_int (seen.lost + seen.gaps, 0);
  }
  gst_structure_free (st);
  gst_object_unref (src);
  stop (tx);
  stop (rx);
}

GST_START_TEST (test_opus_loss_concealed)
{
  run_opus_loss (TRUE);
}

GST_END_TEST;

GST_START_TEST (test_opus_loss_without_do_lost)
{
  run_opus_loss (FALSE);
}

GST_END_TEST;

/* The next drop-msg on p's bus within a second, or NULL. */
static GstStructure *
next_drop_msg (GstElement * p)
{
  GstBus *bus = gst_element_get_bus (p);
  GstStructure *s = NULL;
  GstMessage *m;

  while (!s && (m = gst_bus_timed_pop_filtered (bus, GST_SECOND,
              GST_MESSAGE_ELEMENT))) {
    if (gst_message_has_name (m, "drop-msg"))
      s = gst_structure_copy (gst_message_get_structure (m));
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  return s;
}

/* rtpjitterbuffer's drop messages for a packet after its gap was given
 * up; latency raised while playing (a latency message, the query answers
 * the new value); drop-on-latency dropping what waited in the socket
 * while downstream did not take buffers, counted exactly. */
GST_START_TEST (test_latency_and_drops)
{
  gint port = free_ports (2);
  GstElement *rx, *src;
  GstStructure *st;
  GstMessage *m;
  GstBus *bus;
  GstQuery *q;
  GstClockTime min;
  gboolean live;
  guint16 seq;
  guint v, reason_ok, pulled, sent;
  guint64 dropped;

  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=OPUS post-drop-messages=true drop-messages-interval=0 "
      "! appsink name=out sync=false max-buffers=1", port);
  src = gst_bin_get_by_name (GST_BIN (rx), "src");
  play (rx);

  /* 100..104, then 106 and 107: 105 is given up after 50 ms */
  seq = 100;
  send_flow (port, 0x77, &seq, 5);
  seq = 106;
  send_flow (port, 0x77, &seq, 2);
  fail_unless_equals_int (pull_count (rx, 7), 7);
  /* then 105 comes: too late */
  seq = 105;
  send_flow (port, 0x77, &seq, 1);
  st = next_drop_msg (rx);
  fail_unless (st != NULL, "no drop-msg");
  fail_unless_equals_string (gst_structure_get_string (st, "reason"),
      "too-late");
  fail_unless (gst_structure_get_uint (st, "seqnum", &v) && v == 105);
  fail_unless (gst_structure_get_uint (st, "num-too-late", &v) && v == 1);
  fail_unless (gst_structure_has_field_typed (st, "timestamp",
          GST_TYPE_CLOCK_TIME));
  gst_structure_free (st);

  /* latency while playing */
  bus = gst_element_get_bus (rx);
  gst_bus_set_flushing (bus, TRUE);
  gst_bus_set_flushing (bus, FALSE);
  g_object_set (src, "latency", 120, NULL);
  m = gst_bus_timed_pop_filtered (bus, GST_SECOND, GST_MESSAGE_LATENCY);
  fail_unless (m != NULL, "no latency message");
  gst_message_unref (m);
  gst_object_unref (bus);
  q = gst_query_new_latency ();
  fail_unless (gst_element_query (src, q));
  gst_query_parse_latency (q, &live, &min, NULL);
  fail_unless (live);
  fail_unless_equals_uint64 (min, 120 * GST_MSECOND);
  gst_query_unref (q);

  /* downstream takes nothing for 0.6 s: what waited past the latency is
   * dropped, the rest comes; every packet is one or the other */
  g_object_set (src, "drop-on-latency", TRUE, NULL);
  seq = 108;
  sent = 0;
  for (guint i = 0; i < 30; i++, sent++) {
    send_flow (port, 0x77, &seq, 1);
    g_usleep (20000);
  }
  pulled = pull_count (rx, sent);
  st = stats_of (rx, "src");
  dropped = u64 (st, "dropped-on-latency");
  fail_unless_equals_uint64 (pulled + dropped, sent);
  GST_INFO ("%" G_GUINT64_FORMAT " of %u dropped on latency", dropped, sent);
  fail_unless (dropped >= 10, "%" G_GUINT64_FORMAT " dropped", dropped);
  gst_structure_free (st);
  reason_ok = 0;
  while ((st = next_drop_msg (rx))) {
    reason_ok += !g_strcmp0 (gst_structure_get_string (st, "reason"),
        "drop-on-latency");
    gst_structure_free (st);
  }
  fail_unless_equals_int (reason_ok, dropped);

  gst_object_unref (src);
  stop (rx);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* udpsrc's surface */

/* The sender address on a pulled buffer of "out". */
static gchar *
pull_sender (GstElement * p, guint16 * port)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
  GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
      GST_SECOND);
  GstNetAddressMeta *meta;
  gchar *host = NULL;

  gst_object_unref (out);
  fail_unless (sample != NULL, "nothing arrived");
  meta = gst_buffer_get_net_address_meta (gst_sample_get_buffer (sample));
  if (meta) {
    GInetSocketAddress *a = G_INET_SOCKET_ADDRESS (meta->addr);

    host = g_inet_address_to_string (g_inet_socket_address_get_address (a));
    *port = g_inet_socket_address_get_port (a);
  }
  gst_sample_unref (sample);
  return host;
}

/* GstURIHandler for udp://; a group joined source-specifically
 * (multicast-source) on multicast-iface: a stranger's packets to the
 * group are not even received; GstNetAddressMeta names the sender;
 * skip-first-bytes; bad input named. */
GST_START_TEST (test_udpsrc_surface)
{
  gint port = free_ports (4);
  GstElement *rx, *src;
  GError *err = NULL;
  GstStructure *st;
  gchar *uri, *host, *text;
  guint16 seq = 10, from_port = 0;

  /* the URI both ways */
  src = gst_element_factory_make ("uvgrtpsrc", NULL);
  fail_unless (GST_IS_URI_HANDLER (src));
  fail_unless_equals_int (gst_uri_handler_get_uri_type (GST_URI_HANDLER
          (src)), GST_URI_SRC);
  fail_unless (gst_uri_handler_set_uri (GST_URI_HANDLER (src),
          "udp://239.255.77.10:6000", &err));
  g_object_get (src, "address", &host, NULL);
  fail_unless_equals_string (host, "239.255.77.10");
  g_free (host);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (src));
  fail_unless_equals_string (uri, "udp://239.255.77.10:6000");
  g_free (uri);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (src), "http://x/",
          &err));
  fail_unless (g_error_matches (err, GST_URI_ERROR,
          GST_URI_ERROR_UNSUPPORTED_PROTOCOL));
  g_clear_error (&err);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (src),
          "udp://127.0.0.1:99999", &err));
  fail_unless (g_error_matches (err, GST_URI_ERROR, GST_URI_ERROR_BAD_URI));
  g_clear_error (&err);
  gst_object_unref (src);

  /* source-specific: only 127.0.0.1's packets */
  rx = launchf ("uvgrtpsrc name=src address=239.255.77.10 port=%d "
      "multicast-iface=lo multicast-source=+127.0.0.1 encoding-name=OPUS "
      "rtcp=false ! appsink name=out sync=false", port);
  play (rx);
  send_packets ("127.0.0.2", "239.255.77.10", port, 0x99, &seq, 5, 0);
  seq = 100;
  send_packets ("127.0.0.1", "239.255.77.10", port, 0x1111, &seq, 5, 0);
  host = pull_sender (rx, &from_port);
  fail_unless_equals_string (host, "127.0.0.1");
  fail_unless (from_port != 0);
  g_free (host);
  fail_unless_equals_int (pull_count (rx, 10), 4);
  st = stats_of (rx, "src");
  /* the stranger's never reached the socket */
  fail_unless_equals_uint64 (u64 (st, "packets"), 5);
  fail_unless_equals_uint64 (u64 (st, "foreign"), 0);
  gst_structure_free (st);
  stop (rx);

  /* four bytes of another header before each packet */
  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "skip-first-bytes=4 encoding-name=OPUS ! appsink name=out "
      "sync=false", port + 2);
  play (rx);
  seq = 7;
  send_packets (NULL, "127.0.0.1", port + 2, 0x2222, &seq, 6, 4);
  fail_unless_equals_int (pull_count (rx, 6), 6);
  stop (rx);

  /* bad input names the property */
  rx = launchf ("uvgrtpsrc address=239.255.77.10 port=%d "
      "multicast-source=+nonsense encoding-name=OPUS ! fakesink", port);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  text = NULL;
  {
    GstMessage *m = pop_problem (rx, GST_SECOND);
    fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    gst_message_parse_error (m, &err, NULL);
    text = g_strdup (err->message);
    g_clear_error (&err);
    gst_message_unref (m);
  }
  fail_unless (strstr (text, "'multicast-source'"), "%s", text);
  g_free (text);
  stop (rx);
  rx = launchf ("uvgrtpsrc address=239.255.77.10 port=%d "
      "multicast-iface=lo,nosuch0 encoding-name=OPUS ! fakesink", port);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  {
    GstMessage *m = pop_problem (rx, GST_SECOND);
    fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    gst_message_parse_error (m, &err, NULL);
    fail_unless (strstr (err->message, "'multicast-iface'"), "%s",
        err->message);
    g_clear_error (&err);
    gst_message_unref (m);
  }
  stop (rx);
}

GST_END_TEST;

/* n packets from a socket bound to `from` (IPv6) to group:port out of
 * interface ifname. */
static void
send_packets6 (const gchar * from, const gchar * group, const gchar * ifname,
    gint port, guint32 ssrc, guint16 * seq, guint n)
{
  struct sockaddr_in6 a = {.sin6_family = AF_INET6 }, dst = {
  .sin6_family = AF_INET6,.sin6_port = htons ((guint16) port)};
  int fd = socket (AF_INET6, SOCK_DGRAM, 0);
  int ifindex = (int) if_nametoindex (ifname);

  fail_unless (fd >= 0 && ifindex > 0);
  fail_unless (inet_pton (AF_INET6, from, &a.sin6_addr) == 1);
  fail_unless (inet_pton (AF_INET6, group, &dst.sin6_addr) == 1);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (setsockopt (fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex,
          sizeof ifindex) == 0);
  send_numbered (fd, (struct sockaddr *) &dst, sizeof dst, 0, ssrc, seq, n);
}

/* IPv6 multicast in a network namespace of its own (check's fork mode:
 * the child has it): a veth pair, fd00::1 and fd00::2 on v0, the group
 * ff15::1:7 joined on v0 without a filter, including fd00::1 only (MLDv2
 * INCLUDE), and excluding it. Each receiver gets exactly the packets of
 * the sources it allows; the others never reach its socket (`packets`);
 * the sender's address rides on the buffers. */
GST_START_TEST (test_ipv6_multicast)
{
  static const struct
  {
    const gchar *sources;
    guint from1, from2;
  } cases[] = {
    {"", 5, 5},
    {"multicast-source=+fd00::1", 5, 0},
    {"multicast-source=-fd00::1", 0, 5},
  };
  const gchar *grp = "ff15::1:7";

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0) {
    GST_INFO ("needs check's fork mode for its network namespace: skipped");
    return;
  }
  if (unshare (CLONE_NEWNET) < 0
      || system ("ip link set lo up && ip link add v0 type veth peer name v1 "
          "&& ip link set v0 up && ip link set v1 up "
          "&& ip -6 addr add fd00::1/64 dev v0 nodad "
          "&& ip -6 addr add fd00::2/64 dev v0 nodad >/dev/null 2>&1") != 0) {
    GST_INFO ("no network namespace with veth here: skipped");
    return;
  }
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gint port = 7000 + 2 * (gint) i;
    GstElement *rx = launchf ("uvgrtpsrc name=src address=%s port=%d "
        "multicast-iface=v0 %s encoding-name=OPUS rtcp=false ! "
        "appsink name=out sync=false", grp, port, cases[i].sources);
    guint16 seq1 = 100, seq2 = 500, from_port = 0;
    GstStructure *st;
    gchar *host;

    play (rx);
    send_packets6 ("fd00::2", grp, "v0", port, 0x22, &seq2, 5);
    send_packets6 ("fd00::1", grp, "v0", port, 0x11, &seq1, 5);
    /* the source followed is the first heard from */
    host = pull_sender (rx, &from_port);
    fail_unless_equals_string (host, cases[i].from2 ? "fd00::2" : "fd00::1");
    g_free (host);
    pull_count (rx, 10);
    st = stats_of (rx, "src");
    fail_unless_equals_uint64 (u64 (st, "packets") + u64 (st, "foreign"),
        cases[i].from1 + cases[i].from2);
    gst_structure_free (st);
    stop (rx);
  }
}

GST_END_TEST;

static Suite *
dropin_src_suite (void)
{
  Suite *s = suite_create ("dropin_src");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_rtcp_ports_upper_first);
  tcase_add_test (tc, test_rtcp_ports_lower_first);
  tcase_add_test (tc, test_opus_loss_concealed);
  tcase_add_test (tc, test_opus_loss_without_do_lost);
  tcase_add_test (tc, test_latency_and_drops);
  tcase_add_test (tc, test_udpsrc_surface);
  tcase_add_test (tc, test_ipv6_multicast);
  return s;
}

GST_CHECK_MAIN (dropin_src);
