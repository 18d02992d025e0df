/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_hdrext - RTP header extensions (RFC 8285) both ways through
 * GStreamer's own GstRTPHeaderExtension objects, against the stock
 * elements, on real loopback sockets, for H.264 and H.265:
 *
 *  1. uvgrtpsink with ntp-64, color-space, mid and transport-wide cc enabled
 *     from the extmap-N fields of rtp-caps: on the wire every packet
 *     carries the NTP time of its access unit's GstReferenceTimestampMeta,
 *     the MID, and consecutive transport-wide sequence numbers; the stock
 *     depayloader, given the same caps, puts the meta back on its output,
 *     gains the colorimetry in its caps, and every access unit is there
 *     byte for byte and decodes.
 *  2. The stock payloader with the same extensions (from downstream caps,
 *     provided through request-extension) to uvgrtpsrc with them in its
 *     caps: the meta on every access unit, the colorimetry in its caps,
 *     every access unit byte for byte.
 * That rtpbin's session reads our transport-wide sequence numbers (its TWCC
 * feedback covers every packet we sent, and our sink takes it) is
 * test_congestion's test_twcc_feedback_from_rtpbin.
 */
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/rtp/rtp.h>

#include "rtcputil.h"
#include "streamutil.h"

#define FPS 30
#define FRAMES 60

#define URI_NTP64 "urn:ietf:params:rtp-hdrext:ntp-64"
#define URI_COLORSPACE "http://www.webrtc.org/experiments/rtp-hdrext/color-space"
#define URI_MID "urn:ietf:params:rtp-hdrext:sdes:mid"
#define URI_TWCC "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
#define EXTMAP "extmap-1=(string)" URI_NTP64 ",extmap-2=(string)" URI_COLORSPACE \
  ",extmap-3=(string)" URI_MID ",extmap-5=(string)" URI_TWCC
#define MID "v0"

typedef struct
{
  const gchar *name;            /* H264 */
  const gchar *enc;
  const gchar *lower;           /* h264 */
} Codec;

static const Codec codecs[] = {
  {"H264", "x264enc key-int-max=30 tune=zerolatency speed-preset=ultrafast "
        "bitrate=1500", "h264"},
  {"H265", "x265enc key-int-max=30 tune=zerolatency speed-preset=ultrafast "
        "bitrate=1500", "h265"},
};

static Stream streams[G_N_ELEMENTS (codecs)];

/* BT.2020 pictures: the colour space extension has something to say. */
static Stream *
stream_of (gint c)
{
  gchar *desc;

  if (streams[c].aus)
    return &streams[c];
  desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! "
      "video/x-raw,format=I420,width=320,height=240,framerate=%u/1,"
      "colorimetry=bt2020 ! "
      "%s ! %sparse ! video/x-%s,stream-format=byte-stream,alignment=au ! "
      "appsink name=sink sync=false", FRAMES, FPS, codecs[c].enc,
      codecs[c].lower, codecs[c].lower);
  stream_make (&streams[c], desc);
  g_free (desc);
  fail_unless_equals_int (streams[c].aus->len, FRAMES);
  return &streams[c];
}

/* A big-endian number of n bytes at any alignment (extension data is not
 * aligned). */
static guint64
be_uint (gconstpointer p, guint n)
{
  const guint8 *b = p;
  guint64 v = 0;

  for (guint i = 0; i < n; i++)
    v = v << 8 | b[i];
  return v;
}

static GstCaps *
ntp_caps (void)
{
  static GstCaps *caps;

  if (!caps)
    caps = gst_caps_new_empty_simple ("timestamp/x-ntp");
  return caps;
}

/* The NTP time (ns since 1900) access unit i carries. */
static guint64
ntp_of (guint i)
{
  return 3900000000ull * GST_SECOND + i * 33333333ull + 12345;
}

/* Pushes the stream into appsrc "in" of tx with the meta on every access
 * unit, then EOS. */
static void
push_with_meta (GstElement * tx, Stream * st)
{
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");

  g_object_set (in, "caps", st->caps, NULL);
  play (tx);
  for (guint i = 0; i < st->aus->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (st->aus, i));
    GST_BUFFER_PTS (b) = i * GST_SECOND / FPS;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = GST_SECOND / FPS;
    gst_buffer_add_reference_timestamp_meta (b, ntp_caps (), ntp_of (i),
        GST_CLOCK_TIME_NONE);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (in), b),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  gst_object_unref (in);
}

/* The meta of every access unit in got is the one its input carried (got
 * holds the stream's access units in order: checked byte for byte too). */
static void
check_metas (GPtrArray * got, const gchar * who)
{
  for (guint i = 0; i < got->len; i++) {
    GstReferenceTimestampMeta *m =
        gst_buffer_get_reference_timestamp_meta (g_ptr_array_index (got, i),
        ntp_caps ());
    gint64 d;

    fail_unless (m != NULL, "%s: AU %u has no NTP timestamp meta", who, i);
    d = (gint64) (m->timestamp - ntp_of (i));
    /* 64-bit NTP has a resolution of 0.23 ns: a nanosecond of rounding */
    fail_unless (d >= -1 && d <= 1, "%s: AU %u: %" G_GUINT64_FORMAT " != %"
        G_GUINT64_FORMAT, who, i, m->timestamp, ntp_of (i));
  }
}

static gboolean
caps_say_bt2020 (GstCaps * caps)
{
  const gchar *c;

  if (!caps)
    return FALSE;
  c = gst_structure_get_string (gst_caps_get_structure (caps, 0),
      "colorimetry");
  return c && g_str_equal (c, "bt2020");
}

/* Sets the MID of the mid extension and every-packet on ntp-64 (as an
 * application does; the extensions property lists them). */
static void
configure_extensions (GstElement * e)
{
  GValue exts = G_VALUE_INIT;
  guint n;

  g_object_get_property (G_OBJECT (e), "extensions", &exts);
  n = gst_value_array_get_size (&exts);
  fail_unless_equals_int (n, 4);
  for (guint i = 0; i < n; i++) {
    GstRTPHeaderExtension *x =
        g_value_get_object (gst_value_array_get_value (&exts, i));
    const gchar *uri = gst_rtp_header_extension_get_uri (x);
    if (g_str_equal (uri, URI_MID))
      g_object_set (x, "mid", MID, NULL);
    if (g_str_equal (uri, URI_NTP64))
      g_object_set (x, "every-packet", TRUE, NULL);
  }
  g_value_unset (&exts);
}

/* The stock payloader's request-extension: what GStreamer has for the URI,
 * configured as configure_extensions() does. */
static GstRTPHeaderExtension *
on_request_extension (GstElement * pay, guint id, const gchar * uri,
    gpointer user)
{
  GstRTPHeaderExtension *x = gst_rtp_header_extension_create_from_uri (uri);

  fail_unless (x != NULL, "%s", uri);
  gst_rtp_header_extension_set_id (x, id);
  if (g_str_equal (uri, URI_MID))
    g_object_set (x, "mid", MID, NULL);
  if (g_str_equal (uri, URI_NTP64))
    g_object_set (x, "every-packet", TRUE, NULL);
  (*(guint *) user)++;
  return x;
}

static const gchar *
decoder (gint c)
{
  return c == 0 ? "h264parse ! avdec_h264" : "h265parse ! avdec_h265";
}

/* Keeps the last caps that passed (a pad probe). */
static GstPadProbeReturn
keep_caps (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  GstEvent *e = GST_PAD_PROBE_INFO_EVENT (info);

  if (GST_EVENT_TYPE (e) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps (e, &caps);
    gst_caps_replace ((GstCaps **) user, caps);
  }
  return GST_PAD_PROBE_OK;
}

static void
run_sink_to_stock (gint c)
{
  Stream *st = stream_of (c);
  gint port = free_ports (4);
  GstElement *cap, *tx, *rx, *sink;
  GPtrArray *pkts, *got;
  GstCaps *depay_caps = NULL;
  guint16 tw_next = 0;
  gchar *sdp = NULL;
  guint ntp_seen = 0, cs_seen = 0;

  /* the wire: what uvgrtpsink sends, as packets */
  cap = launchf ("udpsrc address=127.0.0.1 port=%d buffer-size=8000000 "
      "caps=application/x-rtp ! appsink name=raw sync=false", port);
  play (cap);
  /* the stock depayloader with the same caps (its output caps watched) */
  rx = launchf ("udpsrc address=127.0.0.1 port=%d buffer-size=8000000 "
      "caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=%s,payload=96," EXTMAP "\" ! rtp%sdepay name=depay ! "
      "%sparse ! video/x-%s,stream-format=byte-stream,alignment=au ! "
      "appsink name=out sync=false", port + 2, codecs[c].name,
      codecs[c].lower, codecs[c].lower, codecs[c].lower);
  {
    GstElement *depay = gst_bin_get_by_name (GST_BIN (rx), "depay");
    GstPad *pad = gst_element_get_static_pad (depay, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, keep_caps,
        &depay_caps, NULL);
    gst_object_unref (pad);
    gst_object_unref (depay);
  }
  play (rx);
  /* one stream to both (fan-out): the extensions are the same for both */
  tx = launchf ("appsrc name=in format=time ! uvgrtpsink name=s "
      "clients=127.0.0.1:%d,127.0.0.1:%d rtcp=false "
      "rtp-caps=\"application/x-rtp," EXTMAP "\"", port, port + 2);
  sink = gst_bin_get_by_name (GST_BIN (tx), "s");
  configure_extensions (sink);
  push_with_meta (tx, st);
  wait_eos (tx);
  g_object_get (sink, "sdp", &sdp, NULL);
  fail_unless (sdp && strstr (sdp, "a=extmap:1 " URI_NTP64 "\r\n")
      && strstr (sdp, "a=extmap:5 " URI_TWCC "\r\n"), "%s", sdp);
  g_free (sdp);
  pkts = appsink_pull_all (cap, "raw", NULL);
  stop (cap);
  stop (tx);
  gst_object_unref (sink);

  /* every packet: the access unit's NTP time, the MID, the next number */
  fail_unless (pkts->len > FRAMES);
  for (guint i = 0; i < pkts->len; i++) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    gpointer d;
    guint sz;
    guint64 ntp;

    fail_unless (gst_rtp_buffer_map (g_ptr_array_index (pkts, i),
            GST_MAP_READ, &rtp));
    fail_unless (gst_rtp_buffer_get_extension (&rtp), "packet %u: no X", i);
    fail_unless (gst_rtp_buffer_get_extension_onebyte_header (&rtp, 3, 0, &d,
            &sz) && sz == 2 && memcmp (d, MID, 2) == 0, "packet %u: MID", i);
    fail_unless (gst_rtp_buffer_get_extension_onebyte_header (&rtp, 5, 0, &d,
            &sz) && sz == 2, "packet %u: no transport-wide number", i);
    fail_unless_equals_int ((guint16) be_uint (d, 2), tw_next);
    tw_next++;
    if (gst_rtp_buffer_get_extension_onebyte_header (&rtp, 1, 0, &d, &sz)) {
      fail_unless_equals_int (sz, 8);
      ntp = gst_util_uint64_scale (be_uint (d, 8), GST_SECOND,
          G_GUINT64_CONSTANT (1) << 32);
      /* its access unit: RTP timestamps 3000 apart from the first */
      fail_unless (ntp >= ntp_of (0) - 1 && ntp <= ntp_of (FRAMES - 1) + 1);
      ntp_seen++;
    }
    if (gst_rtp_buffer_get_extension_onebyte_header (&rtp, 2, 0, &d, &sz))
      cs_seen++;
    gst_rtp_buffer_unmap (&rtp);
  }
  fail_unless_equals_int (ntp_seen, pkts->len);
  fail_unless (cs_seen > 0, "no colour space element");

  got = appsink_pull_all (rx, "out", NULL);
  stop (rx);
  fail_unless (caps_say_bt2020 (depay_caps), "no bt2020 in the caps");
  gst_caps_unref (depay_caps);
  stream_check_all (st, decoder (c), got);
  check_metas (got, "stock depayloader");
  g_ptr_array_unref (got);
  g_ptr_array_unref (pkts);
}

GST_START_TEST (test_sink_to_stock)
{
  run_sink_to_stock (__i__);
}

GST_END_TEST;

static void
run_stock_to_src (gint c)
{
  Stream *st = stream_of (c);
  gint port = free_ports (2);
  GstElement *tx, *rx, *pay;
  GPtrArray *got;
  GstCaps *caps = NULL;
  guint requested = 0;

  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d rtcp=false "
      "caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=%s,payload=96," EXTMAP "\" ! appsink name=out sync=false",
      port, codecs[c].name);
  play (rx);
  tx = launchf ("appsrc name=in format=time ! rtp%spay name=pay pt=96 ! "
      "application/x-rtp," EXTMAP " ! udpsink "
      "host=127.0.0.1 port=%d", codecs[c].lower, port);
  pay = gst_bin_get_by_name (GST_BIN (tx), "pay");
  g_signal_connect (pay, "request-extension", G_CALLBACK (on_request_extension),
      &requested);
  push_with_meta (tx, st);
  wait_eos (tx);
  fail_unless_equals_int (requested, 4);
  got = appsink_pull_all (rx, "out", &caps);
  stop (tx);
  stop (rx);
  gst_object_unref (pay);
  fail_unless (caps_say_bt2020 (caps), "no bt2020 in the caps");
  gst_caps_unref (caps);
  stream_check_all (st, decoder (c), got);
  check_metas (got, "uvgrtpsrc");
  g_ptr_array_unref (got);
}

GST_START_TEST (test_stock_to_src)
{
  run_stock_to_src (__i__);
}

GST_END_TEST;

static Suite *
hdrext_suite (void)
{
  Suite *s = suite_create ("uvgrtp-hdrext");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_sink_to_stock, 0, G_N_ELEMENTS (codecs));
  tcase_add_loop_test (tc, test_stock_to_src, 0, G_N_ELEMENTS (codecs));
  return s;
}

GST_CHECK_MAIN (hdrext);
