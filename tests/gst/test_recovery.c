/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loss recovery between our elements: uvgrtpsink -> relay (random loss,
 * 10 ms) -> uvgrtpsrc, with the sink's RTCP through a second relay (10 ms
 * each way) that carries the source's NACKs back, so a NACK and its answer
 * take 20 ms. Real x264 / x265 streams: every access unit must arrive
 * byte for byte and decode, and the counters of both elements and the
 * relays must add up exactly. Then key frames on request: packets lost for
 * good make uvgrtpsrc send PLIs that reach x264enc through uvgrtpsink (a
 * new IDR follows; none without request-keyframe), and a force-key-unit
 * event sent upstream from the receiver's end does the same. Opus too
 * (each packet its own access unit), and ZRTP keys with rtcp-mux: RTCP,
 * NACKs and retransmissions all share the media's one port and relay.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "relay.h"
#include "rtcputil.h"
#include "streamutil.h"

#define FPS 60
#define FRAMES 150

enum
{ H264, H265, OPUS };

static Stream streams[3];

/* Opus packets of 20 ms */
#define OPUS_RATE 50

static Stream *
stream_of (gint codec)
{
  Stream *st = &streams[codec];
  gboolean hevc = codec == H265;

  if (codec == OPUS) {
    stream_make (st, "audiotestsrc num-buffers=150 samplesperbuffer=960 "
        "wave=ticks ! audio/x-raw,rate=48000,channels=2 ! opusenc "
        "frame-size=20 ! appsink name=sink sync=false");
    fail_unless (st->aus->len >= 150);
    return st;
  }
  stream_encode (st, FRAMES, FPS, hevc ?
      "x265enc key-int-max=60 tune=zerolatency speed-preset=ultrafast "
      "bitrate=3000 ! h265parse ! video/x-h265,stream-format=byte-stream,"
      "alignment=au ! appsink name=sink sync=false" :
      "x264enc key-int-max=60 tune=zerolatency speed-preset=ultrafast "
      "bitrate=3000 ! h264parse ! video/x-h264,stream-format=byte-stream,"
      "alignment=au ! appsink name=sink sync=false");
  return st;
}

static const gchar *
decoder_of (gint codec)
{
  return codec == H265 ? "h265parse ! avdec_h265" : codec == H264 ?
      "h264parse ! avdec_h264" : "opusdec";
}

static const gchar *const encoding_names[] = { "H264", "H265", "OPUS" };

static const gchar *KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b";

/* The sender's RTCP through `rtcp` (both ways) to the receiver's RTCP port
 * (port + 1); the media through `media` to port (rtcp: NULL with rtcp-mux,
 * the media's relay carries it). */
static void
start_relays (relay_t * media, relay_t * rtcp, gint port, double loss,
    guint64 seed)
{
  /* the way back carries ZRTP's answers */
  relay_config_t mc = {.seed = seed,.drop = loss,.delay_ms = 10,
    .skip_first = 40,.to_port = (guint16) port,.reverse = TRUE
  };
  relay_config_t rc = {.seed = seed + 1,.delay_ms = 10,.reverse = TRUE,
    .to_port = (guint16) (port + 1)
  };
  fail_unless_equals_int (relay_start (media, &mc), 0);
  if (rtcp)
    fail_unless_equals_int (relay_start (rtcp, &rc), 0);
}

/* The datagrams in r's trace that were RTCP (a packet type of 200-206 in the
 * second byte, where RTP has its marker and payload type; SRTCP leaves it
 * clear), and how many of them it dropped. */
static void
rtcp_in_trace (const relay_t * r, guint64 * seen, guint64 * dropped)
{
  *seen = *dropped = 0;
  for (guint i = 0; i < r->ntrace; i++)
    if (r->trace[i].pt >= 200 && r->trace[i].pt <= 206) {
      (*seen)++;
      *dropped += r->trace[i].dropped;
    }
}

/* Whether the plugin was built with ZRTP. */
static gboolean
have_zrtp (void)
{
  GstElement *e = gst_element_factory_make ("uvgrtpsink", NULL);
  gboolean have = e && g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "zrtp") != NULL;

  if (e)
    gst_object_unref (e);
  return have;
}

enum
{ CLEAR, SRTP, ZRTP };

static void
run_recovery (gint codec, double loss, guint64 seed, gint keys, gboolean mux)
{
  if (keys == ZRTP && !have_zrtp ()) {
    GST_INFO ("no ZRTP in this build");
    return;
  }
  Stream *st = stream_of (codec);
  guint rate = codec == OPUS ? OPUS_RATE : FPS;
  gint port = free_ports (2);
  gchar *key = keys == SRTP ? g_strdup_printf (" srtp-cipher=aes-128-gcm "
      "srtp-auth=null srtp-key=%s", KEY) : keys == ZRTP ?
      g_strdup (" zrtp=true") : g_strdup ("");
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=%s latency=200 buffer-size=4194304 rtcp-mux=%d%s ! "
      "appsink name=sink sync=false", port, encoding_names[codec], mux, key);
  relay_t media, rtcp;
  guint64 rtcp_seen, rtcp_dropped;
  GstElement *tx, *sink;
  GPtrArray *got = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstSample *s;

  play (rx);
  start_relays (&media, mux ? NULL : &rtcp, port, loss, seed);
  tx = launchf ("appsrc name=in format=time is-live=true ! uvgrtpsink "
      "name=net host=127.0.0.1 port=%u rtcp-port=%u rtcp-mux=%d mtu=600 "
      "sync=true%s", media.port, mux ? 0 : rtcp.port, mux, key);
  if (keys == ZRTP) {
    /* the stream starts once the keys are agreed (through the relay) */
    GstElement *net = gst_bin_get_by_name (GST_BIN (tx), "net");
    gint state = 0;

    play (tx);
    for (gint k = 0; k < 500 && state != 3; k++) {
      g_usleep (10000);
      g_object_get (net, "zrtp-state", &state, NULL);
    }
    fail_unless_equals_int (state, 3);        /* secure */
    gst_object_unref (net);
  }
  stream_push (tx, st, rate);
  {
    GstBus *bus = gst_element_get_bus (tx);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
    gst_message_unref (m);
    gst_object_unref (bus);
  }
  /* until the receiver has been quiet for half a second: the last retransmissions
   * have come (the sink still answers: it keeps running) */
  sink = gst_bin_get_by_name (GST_BIN (rx), "sink");
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), GST_SECOND / 2))) {
    g_ptr_array_add (got, gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  relay_stop (&media);
  if (!mux)
    relay_stop (&rtcp);
  rtcp_in_trace (&media, &rtcp_seen, &rtcp_dropped);
  fail_unless (mux || rtcp_seen == 0);

  /* The relay's counts are final now; the receiver may still be taking
   * what the relay passed last (a loaded machine): its counters settle
   * within a few seconds or the identity below fails. */
  GstStructure *ss = NULL, *rs = NULL;
  for (gint k = 0; k < 50; k++) {
    if (ss) {
      gst_structure_free (ss);
      gst_structure_free (rs);
      g_usleep (100000);
    }
    ss = stats_of (tx, "net");
    rs = stats_of (rx, "src");
    if (u64 (rs, "missing") + u64 (ss, "rtx-packets") - u64 (rs, "rtx-received")
        - u64 (rs, "rtx-dropped") == media.stats.dropped - rtcp_dropped
        && u64 (rs, "recovered") == u64 (rs, "missing"))
      break;
  }
  GST_INFO ("%s loss %.2f%s: relay dropped %" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT "; src missing %" G_GUINT64_FORMAT ", asked %"
      G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " NACKs, recovered %"
      G_GUINT64_FORMAT ", rtx in %" G_GUINT64_FORMAT ", rtt %" G_GUINT64_FORMAT
      " ns, fast retries %" G_GUINT64_FORMAT "; sink rtx %" G_GUINT64_FORMAT
      "; %u of %u AUs; RTCP on the media's "
      "way %" G_GUINT64_FORMAT ", dropped %" G_GUINT64_FORMAT,
      encoding_names[codec], loss, keys == SRTP ? " SRTP" : keys == ZRTP ?
      " ZRTP" : "",
      media.stats.dropped,
      media.stats.received, u64 (rs, "missing"), u64 (rs, "nack-requests"),
      u64 (rs, "nacks-sent"), u64 (rs, "recovered"), u64 (rs, "rtx-received"),
      u64 (rs, "round-trip-time"), u64 (rs, "fast-retries"),
      u64 (ss, "rtx-packets"), got->len, st->aus->len, rtcp_seen,
      rtcp_dropped);

  /* every access unit, byte for byte, and they decode */
  stream_check_all (st, decoder_of (codec), got);

  /* the relay dropped media and retransmissions: the source missed the
   * media, and lacks the retransmissions dropped; a retransmission slower
   * than the source's patience (a loaded machine) is asked for again, and
   * the second answer finds the packet there: dropped, as a repeat */
  fail_unless (u64 (rs, "missing") > 0, "the seed impaired nothing");
  /* (and ZRTP's messages, the first datagrams, never dropped; with
   * rtcp-mux the sender's reports share the relay, and the drops) */
  fail_unless_equals_uint64 (u64 (ss, "packets") + u64 (ss, "rtx-packets") +
      u64 (ss, "zrtp-sent"), media.stats.received - rtcp_seen);
  fail_unless_equals_uint64 (u64 (rs, "missing") + u64 (ss, "rtx-packets") -
      u64 (rs, "rtx-received") - u64 (rs, "rtx-dropped"),
      media.stats.dropped - rtcp_dropped);
  fail_unless_equals_uint64 (u64 (rs, "recovered"), u64 (rs, "missing"));
  fail_unless_equals_uint64 (u64 (rs, "lost"), 0);
  fail_unless_equals_uint64 (u64 (rs, "lost-unrecovered"), 0);
  fail_unless (u64 (rs, "rtx-dropped") <= u64 (rs, "nack-requests") -
      u64 (rs, "missing"));
  fail_unless_equals_uint64 (u64 (rs, "packets"), u64 (ss, "packets"));
  /* what was asked was answered, NACK for NACK */
  fail_unless_equals_uint64 (u64 (ss, "nacks-received"), u64 (rs,
          "nacks-sent"));
  fail_unless_equals_uint64 (u64 (ss, "nack-seqs"), u64 (rs, "nack-requests"));
  fail_unless_equals_uint64 (u64 (ss, "rtx-missing") + u64 (ss,
          "rtx-over-budget") + u64 (ss, "rtx-errors"), 0);
  {
    guint rtx_ssrc = 0, src_rtx_ssrc = 1;
    gst_structure_get_uint (ss, "rtx-ssrc", &rtx_ssrc);
    gst_structure_get_uint (rs, "rtx-ssrc", &src_rtx_ssrc);
    fail_unless_equals_int (rtx_ssrc, src_rtx_ssrc);
  }
  /* a retransmission lost is asked for again at once at most once */
  fail_unless (u64 (rs, "fast-retries") <= u64 (ss, "rtx-packets") -
      u64 (rs, "rtx-received"));
  fail_unless (u64 (rs, "round-trip-time") >= 20 * GST_MSECOND);
  fail_unless (u64 (rs, "round-trip-time") < 80 * GST_MSECOND);

  gst_structure_free (ss);
  gst_structure_free (rs);
  g_ptr_array_unref (got);
  relay_free (&media);
  if (!mux)
    relay_free (&rtcp);
  gst_object_unref (sink);
  stop (tx);
  stop (rx);
  g_free (key);
}

GST_START_TEST (test_h264_loss_1)
{
  run_recovery (H264, 0.01, 101, CLEAR, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_h265_loss_5)
{
  run_recovery (H265, 0.05, 202, CLEAR, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_h264_loss_5_srtp)
{
  run_recovery (H264, 0.05, 303, SRTP, FALSE);
}

GST_END_TEST;

/* the retransmissions' keys come from ZRTP, under the RTX SSRC */
GST_START_TEST (test_h264_loss_5_zrtp)
{
  run_recovery (H264, 0.05, 404, ZRTP, FALSE);
}

GST_END_TEST;

/* RTCP, ZRTP, NACKs and retransmissions on the media's one port each way:
 * the sink tells its reports from ZRTP and the source its RTX from RTCP */
GST_START_TEST (test_h264_loss_5_zrtp_mux)
{
  run_recovery (H264, 0.05, 505, ZRTP, TRUE);
}

GST_END_TEST;

/* Each Opus packet is an access unit of its own: a lost one is asked for
 * when the next arrives */
GST_START_TEST (test_opus_loss_5)
{
  run_recovery (OPUS, 0.05, 609, CLEAR, FALSE);
}

GST_END_TEST;

/* ---- key frames on request ------------------------------------------------ */

/* Buffers that arrive at the receiver's appsink, and which are key
 * frames. */
typedef struct {
  gint frames, keys;
} Count;

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user)
{
  Count *c = user;
  GstSample *s = gst_app_sink_pull_sample (sink);

  if (s) {
    g_atomic_int_inc (&c->frames);
    if (!GST_BUFFER_FLAG_IS_SET (gst_sample_get_buffer (s),
            GST_BUFFER_FLAG_DELTA_UNIT))
      g_atomic_int_inc (&c->keys);
    gst_sample_unref (s);
  }
  return GST_FLOW_OK;
}

/* A live x264 stream without periodic key frames (one IDR at the start)
 * through a lossy relay to a receiver that does not ask for lost packets:
 * with request-keyframe, its PLIs bring new IDRs; without, none comes.
 * ask_upstream: no loss; a force-key-unit event sent upstream from the
 * receiver's end asks instead (a FIR: all headers). */
static void
run_keyframes (gboolean request, gboolean ask_upstream)
{
  gint port = free_ports (2);
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 latency=100 do-retransmission=false "
      "request-keyframe=%s ! appsink name=sink sync=false emit-signals=true",
      port, request ? "true" : "false");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (rx), "sink");
  Count c = { 0, 0 };
  relay_t media, rtcp;
  GstElement *tx;

  g_signal_connect (sink, "new-sample", G_CALLBACK (on_sample), &c);
  play (rx);
  start_relays (&media, &rtcp, port, ask_upstream ? 0.0 : 0.02, 77);
  tx = launchf ("videotestsrc is-live=true pattern=ball ! video/x-raw,"
      "width=320,height=240,framerate=30/1 ! x264enc key-int-max=100000 "
      "tune=zerolatency speed-preset=ultrafast bitrate=2000 ! uvgrtpsink "
      "name=net host=127.0.0.1 port=%u rtcp-port=%u mtu=600", media.port,
      rtcp.port);
  play (tx);
  if (ask_upstream) {
    g_usleep (1500 * 1000);
    fail_unless (gst_element_send_event (sink,
            gst_video_event_new_upstream_force_key_unit (GST_CLOCK_TIME_NONE,
                TRUE, 1)));
  }
  g_usleep (3 * G_USEC_PER_SEC);
  stop (tx);
  relay_stop (&media);
  relay_stop (&rtcp);

  GstStructure *rs = stats_of (rx, "src");
  guint64 asked = u64 (rs, "pli-sent") + u64 (rs, "fir-sent");
  GST_INFO ("requests %" G_GUINT64_FORMAT ", rtcp-received %" G_GUINT64_FORMAT ", sr %" G_GUINT64_FORMAT " request-keyframe=%d upstream=%d: %d frames, %d key frames; PLI %"
      G_GUINT64_FORMAT ", FIR %" G_GUINT64_FORMAT ", lost %" G_GUINT64_FORMAT,
      u64 (rs, "keyframe-requests"), u64 (rs, "rtcp-received"), u64 (rs, "sr-received"), request, ask_upstream, c.frames, c.keys, u64 (rs, "pli-sent"),
      u64 (rs, "fir-sent"), u64 (rs, "lost"));
  fail_unless (c.frames > 60);
  if (ask_upstream) {
    fail_unless_equals_uint64 (u64 (rs, "keyframe-requests"), 1);
    fail_unless_equals_uint64 (u64 (rs, "fir-sent"), 1);
    fail_unless_equals_uint64 (u64 (rs, "pli-sent"), 0);
    fail_unless_equals_int (c.keys, 2);
  } else if (request) {
    fail_unless (u64 (rs, "lost") > 0);
    fail_unless (u64 (rs, "pli-sent") > 0);
    fail_unless (c.keys >= 2, "no key frame followed the PLIs");
    /* at most one request per 300 ms */
    fail_unless (asked <= 3000 / 300 + 1);
  } else {
    fail_unless (u64 (rs, "lost") > 0);
    fail_unless_equals_uint64 (asked, 0);
    fail_unless_equals_int (c.keys, 1);
  }
  gst_structure_free (rs);
  relay_free (&media);
  relay_free (&rtcp);
  gst_object_unref (sink);
  stop (rx);
}

GST_START_TEST (test_pli_brings_keyframe)
{
  run_keyframes (TRUE, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_no_request_no_keyframe)
{
  run_keyframes (FALSE, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_upstream_request_fir)
{
  run_keyframes (FALSE, TRUE);
}

GST_END_TEST;

static Suite *
recovery_suite (void)
{
  Suite *s = suite_create ("uvgrtp-recovery");
  TCase *tc = tcase_create ("recovery");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_h264_loss_1);
  tcase_add_test (tc, test_h265_loss_5);
  tcase_add_test (tc, test_h264_loss_5_srtp);
  tcase_add_test (tc, test_h264_loss_5_zrtp);
  tcase_add_test (tc, test_h264_loss_5_zrtp_mux);
  tcase_add_test (tc, test_opus_loss_5);
  tcase_add_test (tc, test_pli_brings_keyframe);
  tcase_add_test (tc, test_no_request_no_keyframe);
  tcase_add_test (tc, test_upstream_request_fir);
  return s;
}

GST_CHECK_MAIN (recovery);
