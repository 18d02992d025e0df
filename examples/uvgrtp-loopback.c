/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtp-loopback: a live stream through uvgrtpsink and uvgrtpsrc on loopback,
 * embedded in a C application. It encodes a test pattern, sends it, receives
 * and decodes it, and prints what it achieved: frames, goodput, loss and
 * per-frame latency (encoder output to depayloaded access unit).
 *
 *   uvgrtp-loopback [--codec h264|h265|opus] [--frames N] [--width W --height H]
 *                   [--fps N] [--bitrate KBPS] [--port P]
 */
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  GMutex lock;
  GHashTable *sent;             /* tail hash -> monotonic send time (us) */
  guint64 frames_sent, frames_received, bytes_received;
  gint64 first_rx_us, last_rx_us;
  gdouble lat_sum_ms, lat_max_ms;
  guint64 lat_count;
  GArray *lat_ms;
} Stats;

/* Identifies an access unit by its last bytes: the end of its last slice is
 * the same on both sides, whatever parameter sets are put in front. */
static guint64
tail_hash (GstBuffer * buf)
{
  GstMapInfo map;
  guint64 h = 1469598103934665603ULL;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return 0;
  gsize n = MIN (map.size, 256);
  for (gsize i = map.size - n; i < map.size; i++)
    h = (h ^ map.data[i]) * 1099511628211ULL;
  h ^= map.size > 0 ? 0 : 1;
  gst_buffer_unmap (buf, &map);
  return h;
}

/* A numeric stats field, whatever its integer type; 0 when absent. */
static gint64
stat_int (const GstStructure * st, const gchar * field)
{
  const GValue *v = gst_structure_get_value (st, field);
  GValue out = G_VALUE_INIT;
  gint64 r = 0;

  g_value_init (&out, G_TYPE_INT64);
  if (v && g_value_transform (v, &out))
    r = g_value_get_int64 (&out);
  g_value_unset (&out);
  return r;
}

static GstPadProbeReturn
on_send (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Stats *s = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 h = tail_hash (buf);

  g_mutex_lock (&s->lock);
  gint64 now = g_get_monotonic_time ();

  g_hash_table_replace (s->sent, g_memdup2 (&h, sizeof h),
      g_memdup2 (&now, sizeof now));
  s->frames_sent++;
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user_data)
{
  Stats *s = user_data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  GstBuffer *buf = gst_sample_get_buffer (sample);
  gint64 now = g_get_monotonic_time ();
  guint64 h = tail_hash (buf);

  g_mutex_lock (&s->lock);
  if (s->frames_received == 0)
    s->first_rx_us = now;
  s->last_rx_us = now;
  s->frames_received++;
  s->bytes_received += gst_buffer_get_size (buf);
  gint64 *t = g_hash_table_lookup (s->sent, &h);
  if (t) {
    gdouble ms = (now - *t) / 1000.0;
    s->lat_sum_ms += ms;
    s->lat_max_ms = MAX (s->lat_max_ms, ms);
    s->lat_count++;
    g_array_append_val (s->lat_ms, ms);
    g_hash_table_remove (s->sent, &h);
  }
  g_mutex_unlock (&s->lock);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

static GstPadProbeReturn
on_decoded (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  g_atomic_pointer_add ((gsize *) user_data, 1);
  return GST_PAD_PROBE_OK;
}

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}

static gboolean
check_bus (GstElement * pipe, const gchar * name)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;
  gboolean ok = TRUE;

  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    g_printerr ("%s: error from %s: %s\n%s\n", name, GST_OBJECT_NAME (msg->src),
        err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
    gst_message_unref (msg);
    ok = FALSE;
  }
  gst_object_unref (bus);
  return ok;
}

int
main (int argc, char **argv)
{
  gchar *codec = g_strdup ("h265");
  gint frames = 300, width = 1280, height = 720, fps = 30, bitrate = 8000, port = 0;
  GOptionEntry entries[] = {
    {"codec", 0, 0, G_OPTION_ARG_STRING, &codec, "h264, h265 or opus", "C"},
    {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "Frames to send", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "Picture width", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "Picture height", "H"},
    {"fps", 0, 0, G_OPTION_ARG_INT, &fps, "Frames per second", "N"},
    {"bitrate", 0, 0, G_OPTION_ARG_INT, &bitrate, "Encoder bitrate, kbit/s", "K"},
    {"port", 0, 0, G_OPTION_ARG_INT, &port, "UDP port (0: a free one)", "P"},
    {NULL}
  };
  GError *err = NULL;
  GOptionContext *ctx = g_option_context_new ("- live loopback stream through uvgrtp");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);

  const gchar *name, *decoder;
  gchar *enc_desc;
  gboolean audio = FALSE;
  if (g_str_equal (codec, "h264")) {
    name = "H264";
    decoder = "h264parse ! avdec_h264";
    enc_desc = g_strdup_printf ("x264enc speed-preset=ultrafast tune=zerolatency "
        "key-int-max=60 bitrate=%d ! h264parse "
        "! video/x-h264,stream-format=byte-stream,alignment=au", bitrate);
  } else if (g_str_equal (codec, "h265")) {
    name = "H265";
    decoder = "h265parse ! avdec_h265";
    enc_desc = g_strdup_printf ("x265enc speed-preset=ultrafast tune=zerolatency "
        "key-int-max=60 bitrate=%d ! h265parse "
        "! video/x-h265,stream-format=byte-stream,alignment=au", bitrate);
  } else if (g_str_equal (codec, "opus")) {
    name = "OPUS";
    decoder = "opusdec";
    audio = TRUE;
    enc_desc = g_strdup_printf ("opusenc bitrate=%d", MIN (bitrate, 510) * 1000);
  } else {
    g_printerr ("unknown codec '%s'\n", codec);
    return 2;
  }

  /* The receiver first: with port=0 it binds a free port and reports it. */
  gchar *rx_desc = g_strdup_printf ("uvgrtpsrc name=net address=127.0.0.1 port=%d "
      "encoding-name=%s buffer-size=8388608 ! tee name=t "
      "t. ! queue ! appsink name=out sync=false emit-signals=true "
      "t. ! queue ! %s ! fakesink name=dec sync=false", port, name, decoder);
  GstElement *rx = gst_parse_launch (rx_desc, &err);
  if (!rx) {
    g_printerr ("could not build the receiver: %s\n", err->message);
    return 1;
  }
  gst_element_set_state (rx, GST_STATE_PLAYING);
  GstElement *rxnet = gst_bin_get_by_name (GST_BIN (rx), "net");
  g_object_get (rxnet, "port", &port, NULL);
  gst_object_unref (rxnet);
  if (!check_bus (rx, "receiver") || port <= 0)
    return 1;

  gchar *tx_desc;
  if (audio)
    tx_desc = g_strdup_printf ("audiotestsrc is-live=true num-buffers=%d "
        "samplesperbuffer=960 ! audio/x-raw,rate=48000,channels=2 ! %s "
        "! identity name=stamp ! uvgrtpsink name=net host=127.0.0.1 port=%d",
        frames, enc_desc, port);
  else
    tx_desc = g_strdup_printf ("videotestsrc is-live=true pattern=ball num-buffers=%d "
        "! video/x-raw,width=%d,height=%d,framerate=%d/1 ! %s "
        "! identity name=stamp ! uvgrtpsink name=net host=127.0.0.1 port=%d",
        frames, width, height, fps, enc_desc, port);
  GstElement *tx = gst_parse_launch (tx_desc, &err);
  if (!tx) {
    g_printerr ("could not build the sender: %s\n", err->message);
    return 1;
  }
  g_free (enc_desc);
  g_free (rx_desc);
  g_free (tx_desc);

  Stats s = { 0 };
  g_mutex_init (&s.lock);
  s.sent = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  s.lat_ms = g_array_new (FALSE, FALSE, sizeof (gdouble));

  GstElement *stamp = gst_bin_get_by_name (GST_BIN (tx), "stamp");
  GstPad *pad = gst_element_get_static_pad (stamp, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_send, &s, NULL);
  gst_object_unref (pad);
  gst_object_unref (stamp);

  GstElement *out = gst_bin_get_by_name (GST_BIN (rx), "out");
  g_signal_connect (out, "new-sample", G_CALLBACK (on_sample), &s);
  gst_object_unref (out);

  /* Count decoded frames after the decoder. */
  gsize decoded = 0;
  GstElement *dec = gst_bin_get_by_name (GST_BIN (rx), "dec");
  pad = gst_element_get_static_pad (dec, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_decoded, &decoded, NULL);
  gst_object_unref (pad);
  gst_object_unref (dec);

  if (audio)
    g_print ("uvgrtp-loopback: %s, %d frames of 20 ms, 127.0.0.1:%d\n", name, frames,
        port);
  else
    g_print ("uvgrtp-loopback: %s, %d frames of %dx%d at %d fps, 127.0.0.1:%d\n",
        name, frames, width, height, fps, port);

  gst_element_set_state (tx, GST_STATE_PLAYING);

  /* Wait for the sender's EOS, then give the receiver a moment to drain. */
  GstBus *bus = gst_element_get_bus (tx);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus,
      (GstClockTime) (frames / (audio ? 50.0 : fps) + 60) * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = 0;
  if (!msg || GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    if (msg)
      gst_bus_post (bus, msg);
    else
      g_printerr ("sender did not finish in time\n");
    rc = 1;
  } else {
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  for (int i = 0; i < 50; i++) {
    g_mutex_lock (&s.lock);
    gboolean done = s.frames_received >= s.frames_sent;
    g_mutex_unlock (&s.lock);
    if (done)
      break;
    g_usleep (20000);
  }
  g_usleep (200000);
  if (!check_bus (tx, "sender") || !check_bus (rx, "receiver"))
    rc = 1;

  GstStructure *tx_stats = NULL, *rx_stats = NULL;
  GstElement *net = gst_bin_get_by_name (GST_BIN (tx), "net");
  g_object_get (net, "stats", &tx_stats, NULL);
  gst_object_unref (net);
  net = gst_bin_get_by_name (GST_BIN (rx), "net");
  g_object_get (net, "stats", &rx_stats, NULL);
  gst_object_unref (net);

  gst_element_set_state (tx, GST_STATE_NULL);
  gst_element_set_state (rx, GST_STATE_NULL);

  gdouble secs = (s.last_rx_us - s.first_rx_us) / 1e6;
  g_array_sort (s.lat_ms, cmp_double);
  gdouble p50 = s.lat_ms->len ? g_array_index (s.lat_ms, gdouble, s.lat_ms->len / 2) : 0;
  gdouble p99 = s.lat_ms->len ?
      g_array_index (s.lat_ms, gdouble, (s.lat_ms->len * 99) / 100) : 0;
  guint64 lost = s.frames_sent > s.frames_received ? s.frames_sent - s.frames_received : 0;

  g_print ("frames:   sent %" G_GUINT64_FORMAT ", received %" G_GUINT64_FORMAT
      ", decoded %" G_GSIZE_FORMAT ", lost %" G_GUINT64_FORMAT " (%.2f%%)\n",
      s.frames_sent, s.frames_received, (gsize) g_atomic_pointer_get (&decoded), lost,
      s.frames_sent ? 100.0 * lost / s.frames_sent : 0.0);
  g_print ("goodput:  %.2f Mbit/s of access units over %.2f s\n",
      secs > 0 ? s.bytes_received * 8 / secs / 1e6 : 0.0, secs);
  g_print ("latency:  mean %.2f ms, median %.2f ms, p99 %.2f ms, max %.2f ms "
      "(encoder output to received access unit)\n",
      s.lat_count ? s.lat_sum_ms / s.lat_count : 0.0, p50, p99, s.lat_max_ms);
  /* what each element's stats say, in a line apiece (gst-inspect-1.0
   * uvgrtpsink documents every field) */
  if (tx_stats) {
    gint64 rtt = stat_int (tx_stats, "round-trip-time");
    gchar *rtt_text = rtt >= 0 ? g_strdup_printf ("round trip %.2f ms", rtt / 1e6) :
        g_strdup ("no round trip yet");

    g_print ("sender:   %" G_GINT64_FORMAT " packets (%s), %.2f Mbit/s; RTCP: %"
        G_GINT64_FORMAT " sender reports, %s, %" G_GINT64_FORMAT
        " lost as receivers report; %" G_GINT64_FORMAT " retransmitted\n",
        stat_int (tx_stats, "packets"), gst_structure_get_string (tx_stats,
            "send-mode"), stat_int (tx_stats, "bitrate") / 1e6,
        stat_int (tx_stats, "rtcp-sent"), rtt_text,
        stat_int (tx_stats, "packets-lost"), stat_int (tx_stats, "rtx-packets"));
    g_free (rtt_text);
    gst_structure_free (tx_stats);
  }
  if (rx_stats) {
    g_print ("receiver: %" G_GINT64_FORMAT " packets (%s), %" G_GINT64_FORMAT
        " lost, %" G_GINT64_FORMAT " recovered, %" G_GINT64_FORMAT
        " access units dropped, %" G_GINT64_FORMAT " kernel drops; RTCP: %"
        G_GINT64_FORMAT " sender reports in, %" G_GINT64_FORMAT
        " receiver reports out\n", stat_int (rx_stats, "packets"),
        gst_structure_get_string (rx_stats, "recv-mode"),
        stat_int (rx_stats, "lost"), stat_int (rx_stats, "recovered"),
        stat_int (rx_stats, "dropped"), stat_int (rx_stats, "kernel-drops"),
        stat_int (rx_stats, "sr-received"), stat_int (rx_stats, "rtcp-sent"));
    gst_structure_free (rx_stats);
  }
  /* On loopback at a live rate nothing should be lost: say so in the exit
   * code, which the test suite checks. */
  if (s.frames_received == 0 || lost > 0
      || (gsize) g_atomic_pointer_get (&decoded) != s.frames_received)
    rc = 1;

  gst_object_unref (tx);
  gst_object_unref (rx);
  return rc;
}
