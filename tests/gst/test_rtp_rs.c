/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rtp_rs - RTP and RTCP of uvgrtpsink and uvgrtpsrc against
 * gst-plugins-rs's rtpsend / rtprecv (crate gst-plugin-rtp), both ways, on
 * loopback. The plugin is built by scripts/build-rtp-rs.sh (cargo, network
 * the first time); without it, or without its two elements, the program
 * exits 77, which meson counts as a skip.
 *
 * rtpsend and rtprecv with one rtp-id share their RTP sessions: the RTCP
 * that reaches rtprecv's rtcp_sink_%u is seen by rtpsend's statistics and
 * reports go out of rtpsend's rtcp_src_%u, so each side below has both.
 * Their statistics (the "stats" property of either) are a structure of
 * sessions by id, each a structure of sources by SSRC (in decimal). They
 * hold no SDES: the CNAME we send is checked on our side only (rtprecv
 * uses it for lip sync). rtprecv counts one packet too many for a sender
 * (packets-lost -1 with no loss, from rtpsend as from us), so its loss
 * figures are not checked.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#ifndef RTP_RS_PLUGIN
#define RTP_RS_PLUGIN "build/deps/gst-plugin-rtp/libgstrsrtp.so"
#endif

#define OUR_INTERVAL "300000000"        /* ns, uvgrtpsink / uvgrtpsrc */
#define THEIR_INTERVAL "300"    /* ms, rtpsend's min-rtcp-interval */

/* The statistics of SSRC `ssrc` in session 0 of a rtpsend / rtprecv stats
 * structure (owned by `stats`), or NULL. */
static const GstStructure *
rs_source (const GstStructure * stats, guint ssrc)
{
  const GValue *v = gst_structure_get_value (stats, "0");
  const GstStructure *session;
  gchar key[16];

  if (!v || !GST_VALUE_HOLDS_STRUCTURE (v))
    return NULL;
  session = gst_value_get_structure (v);
  g_snprintf (key, sizeof key, "%u", ssrc);
  v = gst_structure_get_value (session, key);
  return v && GST_VALUE_HOLDS_STRUCTURE (v) ? gst_value_get_structure (v) :
      NULL;
}

/* The report block that `source` (a source in rtpsend / rtprecv stats)
 * received from `reporter`, or NULL: "report-blocks" is one structure or a
 * list of them. */
static const GstStructure *
rs_report_block (const GstStructure * source, guint reporter)
{
  const GValue *v = gst_structure_get_value (source, "report-blocks");
  guint n;

  if (!v)
    return NULL;
  n = GST_VALUE_HOLDS_LIST (v) ? gst_value_list_get_size (v) : 1;
  for (guint i = 0; i < n; i++) {
    const GValue *e = GST_VALUE_HOLDS_LIST (v) ?
        gst_value_list_get_value (v, i) : v;
    const GstStructure *rb;
    guint from = 0;
    if (!GST_VALUE_HOLDS_STRUCTURE (e))
      continue;
    rb = gst_value_get_structure (e);
    if (gst_structure_get_uint (rb, "sender-ssrc", &from) && from == reporter)
      return rb;
  }
  return NULL;
}

/* The SSRC of a remote receiver (not sending) in session 0 of rtpsend /
 * rtprecv stats, or 0. */
static guint
rs_remote_receiver (const GstStructure * stats)
{
  const GValue *v = gst_structure_get_value (stats, "0");
  const GstStructure *session;

  if (!v || !GST_VALUE_HOLDS_STRUCTURE (v))
    return 0;
  session = gst_value_get_structure (v);
  for (gint i = 0; i < gst_structure_n_fields (session); i++) {
    const GValue *f = gst_structure_get_value (session,
        gst_structure_nth_field_name (session, i));
    const GstStructure *src;
    gboolean sender = TRUE, local = TRUE;
    guint ssrc = 0;
    if (!GST_VALUE_HOLDS_STRUCTURE (f))
      continue;
    src = gst_value_get_structure (f);
    if (gst_structure_get_boolean (src, "sender", &sender) && !sender
        && gst_structure_get_boolean (src, "local", &local) && !local
        && gst_structure_get_uint (src, "ssrc", &ssrc))
      return ssrc;
  }
  return 0;
}

static const gchar *const H264 =
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,"
    "framerate=30/1 ! x264enc tune=zerolatency speed-preset=ultrafast "
    "key-int-max=30 ! video/x-h264,stream-format=byte-stream,alignment=au";

static gint decoded;

static GstPadProbeReturn
count_frame (GstPad * pad, GstPadProbeInfo * info, gpointer unused)
{
  g_atomic_int_inc (&decoded);
  return GST_PAD_PROBE_OK;
}

/* (a) uvgrtpsink -> udpsrc ! rtprecv ! rtph264depay ! avdec_h264, with
 * rtprecv's RTCP in from a udpsrc and rtpsend's (same rtp-id) RTCP out
 * through a udpsink to the sink's rtcp-bind-port. Frames decode; rtprecv
 * holds our sender report; our sink holds its receiver report. */
GST_START_TEST (test_to_rtprecv)
{
  gint p = free_ports (6);
  guint srs, rrs, ssrc = 0x2468ace1;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d rtcp-bind-port=%d ssrc=%u cname=alice@test "
      "rtcp-min-interval=" OUR_INTERVAL, H264, p, p + 3, ssrc);
  GstElement *recv = launchf ("rtprecv name=recv rtp-id=uvg-to-rs "
      "rtpsend name=rsend rtp-id=uvg-to-rs min-rtcp-interval=" THEIR_INTERVAL
      " udpsrc port=%d caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H264,payload=96\" ! recv.rtp_sink_0 "
      "udpsrc port=%d caps=application/x-rtcp ! recv.rtcp_sink_0 "
      "rsend.rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "async=false "
      "recv. ! rtph264depay ! h264parse ! avdec_h264 ! fakesink name=out "
      "sync=false", p, p + 1, p + 3);
  GstElement *out = gst_bin_get_by_name (GST_BIN (recv), "out");
  GstPad *pad = gst_element_get_static_pad (out, "sink");
  GstStructure *ss, *rst;
  const GstStructure *us;
  guint64 ntp = 0;
  guint64 rtt;
  guint64 packets = 0;

  g_atomic_int_set (&decoded, 0);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, NULL, NULL);
  gst_object_unref (pad);
  gst_object_unref (out);

  run_for (recv, send, 3000, &srs, &rrs);
  ss = stats_of (send, "sink");
  rst = stats_of (recv, "recv");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("rtprecv: %" GST_PTR_FORMAT, rst);
  GST_INFO ("%d frames decoded", g_atomic_int_get (&decoded));

  /* the video went through rtprecv's jitter buffer and decodes */
  fail_unless (g_atomic_int_get (&decoded) >= 30, "%d frames decoded",
      g_atomic_int_get (&decoded));

  /* rtprecv knows our SSRC as a sender, with packets and a sender report
   * taken from the RTCP port */
  us = rs_source (rst, ssrc);
  fail_unless (us != NULL, "rtprecv does not know our SSRC %u", ssrc);
  fail_unless (gst_structure_get_uint64 (us, "packets-received", &packets));
  fail_unless (packets >= 30, "%" G_GUINT64_FORMAT " packets", packets);
  fail_unless (gst_structure_get_uint64 (us, "sr-ntptime", &ntp),
      "rtprecv has no sender report from us: %s",
      gst_structure_to_string (us));
  fail_unless (ntp != 0);
  fail_unless (gst_structure_has_field (us, "rtcp-from"));

  /* our sink has rtprecv's receiver reports (sent by rtpsend), nothing
   * lost, a loopback round trip */
  fail_unless (u64 (ss, "rr-received") >= 1, "no receiver report from "
      "rtprecv: %s", gst_structure_to_string (ss));
  fail_unless (gst_structure_get_uint64 (ss, "round-trip-time", &rtt));
  fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND,
      "rtt %" G_GUINT64_FORMAT, rtt);
  fail_unless (rrs >= 1);

  gst_structure_free (ss);
  gst_structure_free (rst);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* (b) rtph264pay ! rtpsend ! udpsink -> uvgrtpsrc, rtpsend's RTCP out to
 * the src's RTCP port, our receiver reports aimed at a udpsrc that feeds
 * rtprecv (same rtp-id): our src has rtpsend's sender reports and CNAME,
 * rtpsend has our report block. */
GST_START_TEST (test_from_rtpsend)
{
  gint p = free_ports (6);
  guint srs, rrs, our_ssrc = 0, their_ssrc = 0;
  GstElement *send = launchf ("rtpsend name=rsend rtp-id=rs-to-uvg "
      "min-rtcp-interval=" THEIR_INTERVAL " rtprecv name=rrecv rtp-id=rs-to-uvg "
      "%s ! rtph264pay pt=96 config-interval=-1 ! rsend.rtp_sink_0 "
      "rsend.rtp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "rsend.rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "async=false "
      "udpsrc port=%d caps=application/x-rtcp ! rrecv.rtcp_sink_0",
      H264, p, p + 1, p + 5);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d cname=bob@test "
      "rtcp-min-interval=" OUR_INTERVAL " ! h264parse ! "
      "avdec_h264 ! fakesink name=out sync=false", p, p + 5);
  GstElement *out = gst_bin_get_by_name (GST_BIN (recv), "out");
  GstPad *pad = gst_element_get_static_pad (out, "sink");
  GstStructure *rs, *sst;
  const GstStructure *them, *rb;
  const gchar *cname;
  gint lost = -1;

  g_atomic_int_set (&decoded, 0);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, NULL, NULL);
  gst_object_unref (pad);
  gst_object_unref (out);

  run_for (recv, send, 3000, &srs, &rrs);
  rs = stats_of (recv, "src");
  sst = stats_of (send, "rsend");
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  GST_INFO ("rtpsend: %" GST_PTR_FORMAT, sst);
  GST_INFO ("%d frames decoded", g_atomic_int_get (&decoded));

  fail_unless (g_atomic_int_get (&decoded) >= 30, "%d frames decoded",
      g_atomic_int_get (&decoded));

  /* our src has rtpsend's sender reports and CNAME */
  fail_unless (u64 (rs, "sr-received") >= 1, "no sender report from "
      "rtpsend: %s", gst_structure_to_string (rs));
  cname = gst_structure_get_string (rs, "sender-cname");
  fail_unless (cname != NULL && strlen (cname) > 0);
  fail_unless (u64 (rs, "rtcp-sent") >= 1);
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless (srs >= 1);
  fail_unless (gst_structure_get_uint (rs, "ssrc", &their_ssrc));

  /* rtpsend knows our receiver (a remote source that does not send), and
   * its own source carries a report block from it about this stream */
  our_ssrc = rs_remote_receiver (sst);
  fail_unless (our_ssrc != 0, "rtpsend never heard from our receiver: %s",
      gst_structure_to_string (sst));
  them = rs_source (sst, their_ssrc);
  fail_unless (them != NULL, "rtpsend's stats lack its SSRC %u: %s",
      their_ssrc, gst_structure_to_string (sst));
  {
    gboolean local = FALSE;
    fail_unless (gst_structure_get_boolean (them, "local", &local) && local);
  }
  rb = rs_report_block (them, our_ssrc);
  fail_unless (rb != NULL, "rtpsend has no report block from %u: %s",
      our_ssrc, gst_structure_to_string (them));
  fail_unless (gst_structure_get_int (rb, "rb-packets-lost", &lost), "%s",
      gst_structure_to_string (rb));
  fail_unless_equals_int (lost, 0);
  GST_INFO ("our report block at rtpsend: %" GST_PTR_FORMAT, rb);

  gst_structure_free (rs);
  gst_structure_free (sst);
  stop (send);
  stop (recv);
}

GST_END_TEST;

static Suite *
rtp_rs_suite (void)
{
  Suite *s = suite_create ("rtp_rs");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_to_rtprecv);
  tcase_add_test (tc, test_from_rtpsend);
  return s;
}

/* Loads the plugin into the registry; FALSE (with the reason on stdout)
 * when it or one of the elements the cases need is missing. */
static gboolean
have_rtp_rs (void)
{
  const gchar *path = g_getenv ("UVGRTP_RTP_RS_PLUGIN");
  const gchar *const need[] = { "rtpsend", "rtprecv", "x264enc",
    "avdec_h264", "h264parse", "rtph264pay", "rtph264depay"
  };
  GError *err = NULL;
  GstPlugin *plugin;

  if (!path || !*path)
    path = RTP_RS_PLUGIN;
  if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
    g_print ("SKIP: %s not built (scripts/build-rtp-rs.sh builds it)\n", path);
    return FALSE;
  }
  plugin = gst_plugin_load_file (path, &err);
  if (!plugin) {
    g_print ("SKIP: %s does not load: %s\n", path, err->message);
    g_clear_error (&err);
    return FALSE;
  }
  gst_object_unref (plugin);
  for (guint i = 0; i < G_N_ELEMENTS (need); i++) {
    GstElementFactory *f = gst_element_factory_find (need[i]);
    if (!f) {
      g_print ("SKIP: no element %s\n", need[i]);
      return FALSE;
    }
    gst_object_unref (f);
  }
  return TRUE;
}

int
main (int argc, char **argv)
{
  Suite *s;

  gst_check_init (&argc, &argv);
  if (!have_rtp_rs ())
    return 77;
  s = rtp_rs_suite ();
  return gst_check_run_suite (s, "rtp_rs", __FILE__);
}
