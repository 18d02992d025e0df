/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rtcp - RTCP of uvgrtpsink and uvgrtpsrc on loopback: with each
 * other, and with GStreamer's rtpbin both ways, in rtpbin's usual
 * pipelines (a udpsrc and a udpsink for RTCP on the rtpbin side). Each
 * side's statistics must show the other's reports: sender reports with the
 * sender's CNAME and counts at the receiver, receiver reports with a
 * round-trip time at the sender. The same with RTCP on the RTP port
 * (rtcp-mux, RFC 5761).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#define MIN_INTERVAL "300000000" /* ns: reports every few hundred ms */

static const gchar *const H264 =
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,"
    "framerate=30/1 ! x264enc tune=zerolatency speed-preset=ultrafast "
    "key-int-max=30 ! video/x-h264,stream-format=byte-stream,alignment=au";

/* uvgrtpsink -> uvgrtpsrc: each reads the other's reports. The receiver
 * replies to where the sender's reports come from (nothing configured). */
GST_START_TEST (test_ours)
{
  gint p = free_ports (6);
  guint srs, rrs;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d cname=alice@test rtcp-min-interval=" MIN_INTERVAL, H264, p);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "cname=bob@test rtcp-min-interval=" MIN_INTERVAL " ! fakesink", p);
  GstStructure *ss, *rs;
  gint lost;
  guint64 rtt;

  run_for (recv, send, 2500, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  /* each side has the other's reports (the round trip from DLSR/LSR in
   * 1/65536 s), the sender's name and counts; nothing lost */
  check_ours (ss, rs, srs, rrs, 2, "alice@test");
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless (gst_structure_get_int (ss, "packets-lost", &lost));
  fail_unless_equals_int (lost, 0);
  /* one receiver in the table: ours, with its round trip */
  {
    const GValue *arr = gst_structure_get_value (ss, "receivers");
    const GstStructure *r;
    guint rssrc = 0;
    guint64 reports = 0;

    fail_unless (arr != NULL && GST_VALUE_HOLDS_ARRAY (arr));
    fail_unless_equals_int (gst_value_array_get_size (arr), 1);
    r = gst_value_get_structure (gst_value_array_get_value (arr, 0));
    fail_unless (gst_structure_get_uint (r, "ssrc", &rssrc));
    fail_unless (gst_structure_get_uint64 (r, "reports", &reports));
    fail_unless_equals_uint64 (reports, u64 (ss, "rr-received"));
    fail_unless (gst_structure_get_uint64 (r, "round-trip-time", &rtt));
    fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND);
    GST_INFO ("receiver %08x: %" GST_PTR_FORMAT, rssrc, r);
    /* when its block arrived, on the pipeline clock: a moment ago */
    {
      GstElement *sink = gst_bin_get_by_name (GST_BIN (send), "sink");
      GstClock *clock = gst_element_get_clock (sink);
      GstClockTime now = gst_clock_get_time (clock), at = 0;

      fail_unless (gst_structure_get_uint64 (r, "last-rr-time", &at));
      fail_unless (at <= now && now - at < 3 * GST_SECOND,
          "last-rr-time %" GST_TIME_FORMAT ", clock %" GST_TIME_FORMAT,
          GST_TIME_ARGS (at), GST_TIME_ARGS (now));
      gst_object_unref (clock);
      gst_object_unref (sink);
    }
  }
  gst_structure_free (ss);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* uvgrtpsink -> udpsrc ! rtpbin, RTCP both ways (rtpbin's RTCP udpsink
 * aims at the sink's rtcp-bind-port): rtpbin has our sender reports and
 * CNAME, our sink has rtpbin's receiver reports with a round trip. */
GST_START_TEST (test_to_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ssrc = 0x1234abcd;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d rtcp-bind-port=%d ssrc=%u cname=alice@test "
      "rtcp-min-interval=" MIN_INTERVAL, H264, p, p + 3, ssrc);
  GstElement *recv = launchf ("rtpbin name=rb "
      "udpsrc port=%d caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H264,payload=96\" ! rb.recv_rtp_sink_0 "
      "udpsrc port=%d ! rb.recv_rtcp_sink_0 "
      "rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "async=false "
      "rb. ! rtph264depay ! fakesink", p, p + 1, p + 3);
  GstStructure *ss, *sst = NULL;
  GObject *src;
  guint64 rtt;
  gboolean have_sr = FALSE;
  gchar *cname = NULL;

  set_rtpbin_interval (recv);
  run_for (recv, send, 3000, &srs, &rrs);
  ss = stats_of (send, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "rr-received") >= 1, "no receiver report from rtpbin");
  fail_unless (gst_structure_get_uint64 (ss, "round-trip-time", &rtt));
  fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND,
      "rtt %" G_GUINT64_FORMAT, rtt);
  fail_unless (rrs >= 1);

  src = rtpbin_source (recv, ssrc, NULL, NULL);
  fail_unless (src != NULL, "rtpbin does not know our SSRC");
  g_object_get (src, "stats", &sst, NULL);
  GST_INFO ("rtpbin's view of us: %" GST_PTR_FORMAT, sst);
  fail_unless (gst_structure_get_boolean (sst, "have-sr", &have_sr));
  fail_unless (have_sr, "rtpbin has no sender report from us");
  {
    GstStructure *sdes = NULL;
    g_object_get (src, "sdes", &sdes, NULL);
    fail_unless (sdes != NULL);
    cname = g_strdup (gst_structure_get_string (sdes, "cname"));
    gst_structure_free (sdes);
  }
  fail_unless_equals_string (cname, "alice@test");
  g_free (cname);
  gst_structure_free (sst);
  g_object_unref (src);
  gst_structure_free (ss);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* rtph264pay ! rtpbin ! udpsink -> uvgrtpsrc (its reports aimed at
 * rtpbin's RTCP udpsrc): our stats have rtpbin's sender reports, rtpbin
 * has our receiver reports. */
GST_START_TEST (test_from_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ours = 0, theirs = 0;
  GstElement *send = launchf ("rtpbin name=rb %s ! rtph264pay pt=96 "
      "config-interval=-1 ! rb.send_rtp_sink_0 "
      "rb.send_rtp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "async=false "
      "udpsrc port=%d ! rb.recv_rtcp_sink_0", H264, p, p + 1, p + 5);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d "
      "rtcp-min-interval=" MIN_INTERVAL " ! fakesink", p, p + 5);
  GstStructure *rs, *st = NULL;
  GObject *src;
  gboolean other = FALSE, have_rb = FALSE;
  GstElement *pay;

  set_rtpbin_interval (send);
  run_for (send, recv, 3000, &srs, &rrs);
  rs = stats_of (recv, "src");
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  fail_unless (u64 (rs, "sr-received") >= 1, "no sender report from rtpbin");
  fail_unless (strlen (gst_structure_get_string (rs, "sender-cname")) > 0);
  fail_unless (u64 (rs, "rtcp-sent") >= 1);
  fail_unless (srs >= 1);

  /* rtpbin's own sender source carries our report block */
  pay = gst_bin_get_by_name (GST_BIN (send), "rb");
  gst_object_unref (pay);
  {
    guint ssrc;
    gst_structure_get_uint (rs, "ssrc", &ssrc);
    theirs = ssrc;
  }
  src = rtpbin_source (send, theirs, &other, &ours);
  fail_unless (src != NULL);
  g_object_get (src, "stats", &st, NULL);
  GST_INFO ("rtpbin's own source: %" GST_PTR_FORMAT, st);
  fail_unless (other, "rtpbin never heard from our receiver (SSRC %08x)", ours);
  gst_structure_free (st);
  g_object_unref (src);
  /* and the receiver's own source object has a report block about it */
  src = rtpbin_source (send, ours, NULL, NULL);
  fail_unless (src != NULL);
  g_object_get (src, "stats", &st, NULL);
  GST_INFO ("rtpbin's view of our receiver: %" GST_PTR_FORMAT, st);
  fail_unless (gst_structure_get_boolean (st, "have-rb", &have_rb));
  fail_unless (have_rb, "rtpbin has no report block from us");
  gst_structure_free (st);
  g_object_unref (src);

  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* A UDP socket on 127.0.0.1:port for a udpsrc and a udpsink to share, as
 * applications give rtpbin one port for RTP and RTCP both ways. */
static GSocket *
shared_socket (gint port)
{
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *a = g_inet_socket_address_new (lo, (guint16) port);
  GSocket *s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_DATAGRAM,
      G_SOCKET_PROTOCOL_UDP, NULL);

  fail_unless (s != NULL);
  fail_unless (g_socket_bind (s, a, FALSE, NULL));
  g_object_unref (a);
  g_object_unref (lo);
  return s;
}

static void
give_socket (GstElement * pipeline, const gchar * name, GSocket * s)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);

  fail_unless (e != NULL);
  g_object_set (e, "socket", s, "close-socket", FALSE, NULL);
  gst_object_unref (e);
}

/* Datagrams waiting on a socket bound to 127.0.0.1:port (non-blocking). */
static gint
bound_socket (gint port)
{
  struct sockaddr_in a;
  gint fd = socket (AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons ((guint16) port);
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  return fd;
}

static gint
pending (gint fd)
{
  guint8 b[2048];
  gint n = 0;

  while (recv (fd, b, sizeof b, 0) >= 0)
    n++;
  return n;
}

/* rtcp-mux on both of ours (RFC 5761): reports both ways on the RTP ports,
 * none on port + 1. The sink's socket is connected to the receiver's RTP
 * port, so its receiver reports prove they came from there. */
GST_START_TEST (test_mux_ours)
{
  gint p = free_ports (6), fd = bound_socket (p + 1);
  guint srs, rrs;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d rtcp-mux=true cname=alice@test rtcp-min-interval="
      MIN_INTERVAL, H264, p);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "rtcp-mux=true rtcp-min-interval=" MIN_INTERVAL " ! fakesink", p);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (send), "sink");
  GstStructure *ss, *rs;
  gchar *sdp = NULL;

  run_for (recv, send, 2500, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  check_ours (ss, rs, srs, rrs, 2, "alice@test");
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  /* every frame still made it: RTCP among the datagrams took nothing */
  {
    gint lost = -1;
    fail_unless (gst_structure_get_int (rs, "packets-lost", &lost));
    fail_unless_equals_int (lost, 0);
  }
  fail_unless_equals_int (pending (fd), 0);
  g_object_get (sink, "sdp", &sdp, NULL);
  fail_unless (sdp && strstr (sdp, "a=rtcp-mux\r\n"), "%s", sdp);
  fail_unless (!strstr (sdp, "a=rtcp:"));
  g_free (sdp);
  close (fd);
  gst_object_unref (sink);
  gst_structure_free (ss);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* uvgrtpsink rtcp-mux=true -> rtpbin on one port: its udpsrc and the
 * udpsink of its reports share a socket, so rtpbin reads our sender
 * reports among the RTP packets and answers from the port we send to. */
GST_START_TEST (test_mux_to_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ssrc = 0x1234abce;
  GSocket *sock = shared_socket (p);
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d bind-port=%d rtcp-mux=true ssrc=%u cname=alice@test "
      "rtcp-min-interval=" MIN_INTERVAL, H264, p, p + 2, ssrc);
  GstElement *recv = launchf ("rtpbin name=rb "
      "udpsrc name=in caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H264,payload=96\" ! rb.recv_rtp_sink_0 "
      "rb.send_rtcp_src_0 ! udpsink name=out host=127.0.0.1 port=%d "
      "sync=false async=false "
      "rb. ! rtph264depay ! fakesink", p + 2);
  GstStructure *ss, *sst = NULL;
  GObject *src;
  gboolean have_sr = FALSE;
  guint64 rtt;

  give_socket (recv, "in", sock);
  give_socket (recv, "out", sock);
  set_rtpbin_interval (recv);
  run_for (recv, send, 3000, &srs, &rrs);
  ss = stats_of (send, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "rr-received") >= 1, "no receiver report from rtpbin");
  fail_unless (gst_structure_get_uint64 (ss, "round-trip-time", &rtt));
  fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND);
  src = rtpbin_source (recv, ssrc, NULL, NULL);
  fail_unless (src != NULL, "rtpbin does not know our SSRC");
  g_object_get (src, "stats", &sst, NULL);
  fail_unless (gst_structure_get_boolean (sst, "have-sr", &have_sr));
  fail_unless (have_sr, "rtpbin has no sender report from us");
  gst_structure_free (sst);
  g_object_unref (src);
  gst_structure_free (ss);
  stop (send);
  stop (recv);
  g_object_unref (sock);
}

GST_END_TEST;

/* rtpbin sends RTP and RTCP from one socket to uvgrtpsrc rtcp-mux=true,
 * which reads the sender reports among the RTP packets and answers to
 * where they came from, where rtpbin reads them. */
GST_START_TEST (test_mux_from_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ours = 0, theirs;
  GSocket *sock = shared_socket (p + 2);
  GstElement *send = launchf ("rtpbin name=rb %s ! rtph264pay pt=96 "
      "config-interval=-1 ! rb.send_rtp_sink_0 "
      "rb.send_rtp_src_0 ! funnel name=f ! udpsink name=out host=127.0.0.1 "
      "port=%d sync=false async=false "
      "rb.send_rtcp_src_0 ! f. "
      "udpsrc name=in ! rb.recv_rtcp_sink_0", H264, p);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "rtcp-mux=true rtcp-min-interval=" MIN_INTERVAL " ! fakesink", p);
  GstStructure *rs, *st = NULL;
  GObject *src;
  gboolean other = FALSE, have_rb = FALSE;

  give_socket (send, "in", sock);
  give_socket (send, "out", sock);
  set_rtpbin_interval (send);
  run_for (send, recv, 3000, &srs, &rrs);
  rs = stats_of (recv, "src");
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  fail_unless (u64 (rs, "sr-received") >= 1, "no sender report from rtpbin");
  fail_unless (u64 (rs, "rtcp-sent") >= 1);
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless (srs >= 1);
  fail_unless (gst_structure_get_uint (rs, "ssrc", &theirs));
  src = rtpbin_source (send, theirs, &other, &ours);
  fail_unless (src != NULL);
  g_object_unref (src);
  fail_unless (other, "rtpbin never heard from our receiver");
  src = rtpbin_source (send, ours, NULL, NULL);
  fail_unless (src != NULL);
  g_object_get (src, "stats", &st, NULL);
  fail_unless (gst_structure_get_boolean (st, "have-rb", &have_rb));
  fail_unless (have_rb, "rtpbin has no report block from us");
  gst_structure_free (st);
  g_object_unref (src);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
  g_object_unref (sock);
}

GST_END_TEST;

static Suite *
rtcp_suite (void)
{
  Suite *s = suite_create ("rtcp");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ours);
  tcase_add_test (tc, test_to_rtpbin);
  tcase_add_test (tc, test_from_rtpbin);
  tcase_add_test (tc, test_mux_ours);
  tcase_add_test (tc, test_mux_to_rtpbin);
  tcase_add_test (tc, test_mux_from_rtpbin);
  return s;
}

GST_CHECK_MAIN (rtcp);
