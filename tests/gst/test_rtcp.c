/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rtcp - RTCP of uvgrtpsink and uvgrtpsrc on loopback: with each
 * other, and with GStreamer's rtpbin both ways, in rtpbin's usual
 * pipelines (a udpsrc and a udpsink for RTCP on the rtpbin side). Each
 * side's statistics must show the other's reports: sender reports with the
 * sender's CNAME and counts at the receiver, receiver reports with a
 * round-trip time at the sender.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#define MIN_INTERVAL "300000000" /* ns: reports every few hundred ms */

/* Plays the pipelines for `ms`, collecting uvgrtp-rtcp messages. */
static void
run_for (GstElement * a, GstElement * b, guint ms, guint * srs, guint * rrs)
{
  fail_unless (gst_element_set_state (a, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  if (b)
    fail_unless (gst_element_set_state (b, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
  collect_rtcp (a, b, ms, srs, rrs);
}

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
  gint64 rtt;

  run_for (recv, send, 2500, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  /* the receiver has the sender's reports, name and counts */
  fail_unless (u64 (rs, "sr-received") >= 2);
  fail_unless_equals_string (gst_structure_get_string (rs, "sender-cname"),
      "alice@test");
  fail_unless (u64 (rs, "rtcp-sent") >= 2);
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless (srs >= 2, "%u sr messages", srs);
  /* the sender has the receiver's reports: nothing lost, a round trip of
   * loopback (DLSR/LSR in 1/65536 s) */
  fail_unless (u64 (ss, "rr-received") >= 2);
  fail_unless (u64 (ss, "rtcp-sent") >= 2);
  fail_unless (gst_structure_get_int (ss, "packets-lost", &lost));
  fail_unless_equals_int (lost, 0);
  fail_unless (gst_structure_get_int64 (ss, "round-trip-time", &rtt));
  fail_unless (rtt >= 0 && rtt < 50 * GST_MSECOND, "rtt %" G_GINT64_FORMAT,
      rtt);
  fail_unless (rrs >= 2, "%u rr messages", rrs);
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
    fail_unless (gst_structure_get_int64 (r, "round-trip-time", &rtt));
    fail_unless (rtt >= 0 && rtt < 50 * GST_MSECOND);
    GST_INFO ("receiver %08x: %" GST_PTR_FORMAT, rssrc, r);
  }
  gst_structure_free (ss);
  gst_structure_free (rs);
  gst_element_set_state (send, GST_STATE_NULL);
  gst_element_set_state (recv, GST_STATE_NULL);
  gst_object_unref (send);
  gst_object_unref (recv);
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
  gint64 rtt;
  gboolean have_sr = FALSE;
  gchar *cname = NULL;

  set_rtpbin_interval (recv);
  run_for (recv, send, 3000, &srs, &rrs);
  ss = stats_of (send, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "rr-received") >= 1, "no receiver report from rtpbin");
  fail_unless (gst_structure_get_int64 (ss, "round-trip-time", &rtt));
  fail_unless (rtt >= 0 && rtt < 50 * GST_MSECOND, "rtt %" G_GINT64_FORMAT,
      rtt);
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
  gst_element_set_state (send, GST_STATE_NULL);
  gst_element_set_state (recv, GST_STATE_NULL);
  gst_object_unref (send);
  gst_object_unref (recv);
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
  gst_element_set_state (send, GST_STATE_NULL);
  gst_element_set_state (recv, GST_STATE_NULL);
  gst_object_unref (send);
  gst_object_unref (recv);
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
  return s;
}

GST_CHECK_MAIN (rtcp);
