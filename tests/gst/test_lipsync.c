/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_lipsync - audio and video of one sender in step at the receiver,
 * measured exactly.
 *
 * One sender pipeline encodes live video (x264enc) and audio (opusenc)
 * and sends both, the video through the tests' relay, which delays it by
 * 80 ms; one receiver pipeline receives both. Every buffer is identified
 * by its content on both sides (the tail of an H.264 access unit, an Opus
 * packet), so for each stream d = receiver PTS - sender PTS is known per
 * buffer. Playing in step means d is the same for audio and video: the
 * test requires their medians, over the second half of the run (sender
 * reports every 300 ms), within 5 ms, and without lip sync the 80 ms
 * apart it would otherwise be. Senders and receivers: ours both sides,
 * our two sinks to stock rtpbin (which syncs by our sender reports and
 * our shared default CNAME), and stock rtpbin sending to our two sources.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#include "relay.h"

#define MIN_INTERVAL "300000000"        /* ns between reports */
#define DELAY_MS 80
#define RUN_MS 5000

static const gchar *const VIDEO =
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,"
    "height=240,framerate=30/1 ! x264enc tune=zerolatency "
    "speed-preset=ultrafast key-int-max=30 ! "
    "video/x-h264,stream-format=byte-stream,alignment=au";
static const gchar *const AUDIO =
    "audiotestsrc is-live=true wave=white-noise ! audio/x-raw,rate=48000,"
    "channels=1 ! opusenc frame-size=20";

static GstElement *
launch (gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "%s: %s", desc, err ? err->message :
      "");
  g_free (desc);
  return p;
}

/* ---- content-identified buffers of one stream ---- */

#define TAIL 48                 /* bytes of a buffer's end that identify it */
#define AMBIGUOUS G_MAXUINT64

typedef struct
{
  const gchar *what;
  GMutex lock;
  GHashTable *sent;             /* tail hash -> sender PTS (AMBIGUOUS: twice) */
  GArray *d;                    /* gint64: receiver PTS - sender PTS, in order */
} Stream;

static guint64
tail_hash (GstBuffer * buf)
{
  GstMapInfo map;
  guint64 h = 1469598103934665603ull;
  gsize from;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return 0;
  from = map.size > TAIL ? map.size - TAIL : 0;
  for (gsize i = from; i < map.size; i++)
    h = (h ^ map.data[i]) * 1099511628211ull;
  gst_buffer_unmap (buf, &map);
  return h ^ (guint64) MIN (map.size, TAIL);
}

/* The buffer's PTS as running time (encoders shift their segments). */
static GstClockTime
running_pts (GstPad * pad, GstBuffer * buf)
{
  GstEvent *ev = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  const GstSegment *seg;
  GstClockTime t = GST_CLOCK_TIME_NONE;

  if (!ev)
    return GST_CLOCK_TIME_NONE;
  gst_event_parse_segment (ev, &seg);
  if (seg->format == GST_FORMAT_TIME && GST_BUFFER_PTS_IS_VALID (buf))
    t = gst_segment_to_running_time (seg, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));
  gst_event_unref (ev);
  return t;
}

static GstPadProbeReturn
on_sent (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Stream *s = user;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 h = tail_hash (buf), *v;

  g_mutex_lock (&s->lock);
  if (g_hash_table_contains (s->sent, &h)) {
    v = g_hash_table_lookup (s->sent, &h);
    *v = AMBIGUOUS;
  } else {
    guint64 *k = g_new (guint64, 1);
    v = g_new (guint64, 1);
    *k = h;
    *v = running_pts (pad, buf);
    g_hash_table_insert (s->sent, k, v);
  }
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
on_received (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Stream *s = user;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 h = tail_hash (buf), *v;
  GstClockTime t = running_pts (pad, buf);

  if (!GST_CLOCK_TIME_IS_VALID (t))
    return GST_PAD_PROBE_OK;
  g_mutex_lock (&s->lock);
  v = g_hash_table_lookup (s->sent, &h);
  if (v && *v != AMBIGUOUS && GST_CLOCK_TIME_IS_VALID (*v)) {
    gint64 d = (gint64) t - (gint64) * v;
    g_array_append_val (s->d, d);
  }
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

static void
stream_init (Stream * s, const gchar * what)
{
  s->what = what;
  g_mutex_init (&s->lock);
  s->sent = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
      g_free);
  s->d = g_array_new (FALSE, FALSE, sizeof (gint64));
}

static void
stream_clear (Stream * s)
{
  g_hash_table_destroy (s->sent);
  g_array_free (s->d, TRUE);
  g_mutex_clear (&s->lock);
}

static gint
cmp64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The median of d over the second half of the buffers matched. */
static gint64
late_median (Stream * s)
{
  guint n, half;
  gint64 *v, m;

  g_mutex_lock (&s->lock);
  n = s->d->len;
  fail_unless (n >= 20, "%s: only %u buffers identified", s->what, n);
  half = n / 2;
  v = g_memdup2 (&g_array_index (s->d, gint64, half),
      (n - half) * sizeof (gint64));
  g_mutex_unlock (&s->lock);
  qsort (v, n - half, sizeof (gint64), cmp64);
  m = v[(n - half) / 2];
  g_free (v);
  GST_INFO ("%s: %u buffers identified, late median d %" G_GINT64_FORMAT
      " us", s->what, n, m / 1000);
  return m;
}

static void
probe (GstElement * pipeline, const gchar * name, const gchar * pad,
    GstPadProbeCallback cb, Stream * s)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);
  GstPad *p;

  fail_unless (e != NULL, "no %s", name);
  p = gst_element_get_static_pad (e, pad);
  fail_unless (p != NULL);
  gst_pad_add_probe (p, GST_PAD_PROBE_TYPE_BUFFER, cb, s, NULL);
  gst_object_unref (p);
  gst_object_unref (e);
}

/* Plays both pipelines for RUN_MS; fails on an error message. */
static void
run (GstElement * send, GstElement * recv)
{
  GstElement *p[2] = { recv, send };
  gint64 end;

  for (guint i = 0; i < 2; i++)
    fail_unless (gst_element_set_state (p[i], GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
  end = g_get_monotonic_time () + RUN_MS * 1000;
  while (g_get_monotonic_time () < end) {
    for (guint i = 0; i < 2; i++) {
      GstBus *bus = gst_element_get_bus (p[i]);
      GstMessage *m;
      while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
        GError *e;
        gst_message_parse_error (m, &e, NULL);
        fail ("error from %s: %s", GST_OBJECT_NAME (m->src), e->message);
      }
      gst_object_unref (bus);
    }
    g_usleep (50000);
  }
  for (guint i = 0; i < 2; i++)
    gst_element_set_state (p[i], GST_STATE_NULL);
}

static gint64
i64 (const GstStructure * s, const gchar * f)
{
  gint64 v = 0;
  fail_unless (gst_structure_get_int64 (s, f, &v), "no %s", f);
  return v;
}

/* ---- the set-ups ---- */

typedef enum
{
  OURS,                         /* uvgrtpsink x2 -> uvgrtpsrc x2 */
  TO_RTPBIN,                    /* uvgrtpsink x2 -> udpsrc ! rtpbin */
  FROM_RTPBIN,                  /* rtpbin ! udpsink -> uvgrtpsrc x2 */
} Setup;

/* Ports: video RTP P, its RTCP P+1, audio RTP P+2, its RTCP P+3; the
 * sender's RTCP reading ports P+4 (video) and P+5 (audio). Video RTP goes
 * through the relay; everything else straight. Returns video d minus
 * audio d (late medians), in ns. */
static gint64
measure (Setup setup, gboolean lip_sync, gint64 * audio_delay)
{
  gint p = free_ports (8);
  relay_t relay;
  relay_config_t rc = {.to_port = (guint16) p,.delay_ms = DELAY_MS };
  Stream v, a;
  GstElement *send, *recv;
  gint64 diff;

  fail_unless_equals_int (relay_start (&relay, &rc), 0);
  stream_init (&v, "video");
  stream_init (&a, "audio");

  if (setup == FROM_RTPBIN)
    send = launch (g_strdup_printf ("rtpbin name=rb "
            "%s ! rtph264pay name=vpay pt=96 config-interval=-1 ! "
            "rb.send_rtp_sink_0 rb.send_rtp_src_0 ! udpsink host=127.0.0.1 "
            "port=%u sync=false rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 "
            "port=%d sync=false async=false udpsrc port=%d ! "
            "rb.recv_rtcp_sink_0 "
            "%s ! rtpopuspay name=apay pt=97 ! rb.send_rtp_sink_1 "
            "rb.send_rtp_src_1 ! udpsink host=127.0.0.1 port=%d sync=false "
            "rb.send_rtcp_src_1 ! udpsink host=127.0.0.1 port=%d sync=false "
            "async=false udpsrc port=%d ! rb.recv_rtcp_sink_1",
            VIDEO, relay.port, p + 1, p + 4, AUDIO, p + 2, p + 3, p + 5));
  else
    /* no cname set: both sinks have the process's default */
    send = launch (g_strdup_printf ("%s ! uvgrtpsink name=vpay host=127.0.0.1 "
            "port=%u rtcp-port=%d rtcp-bind-port=%d "
            "rtcp-min-interval=" MIN_INTERVAL " "
            "%s ! uvgrtpsink name=apay host=127.0.0.1 port=%d pt=97 "
            "rtcp-bind-port=%d rtcp-min-interval=" MIN_INTERVAL,
            VIDEO, relay.port, p + 1, p + 4, AUDIO, p + 2, p + 5));

  if (setup == TO_RTPBIN)
    recv = launch (g_strdup_printf ("rtpbin name=rb latency=200 "
            "udpsrc port=%d caps=\"application/x-rtp,media=video,"
            "clock-rate=90000,encoding-name=H264,payload=96\" ! "
            "rb.recv_rtp_sink_0 udpsrc port=%d ! rb.recv_rtcp_sink_0 "
            "rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
            "async=false "
            "udpsrc port=%d caps=\"application/x-rtp,media=audio,"
            "clock-rate=48000,encoding-name=OPUS,payload=97\" ! "
            "rb.recv_rtp_sink_1 udpsrc port=%d ! rb.recv_rtcp_sink_1 "
            "rb.send_rtcp_src_1 ! udpsink host=127.0.0.1 port=%d sync=false "
            "async=false "
            "rb. ! rtph264depay ! video/x-h264,stream-format=byte-stream,"
            "alignment=au ! identity name=vout ! fakesink sync=false "
            "rb. ! rtpopusdepay ! identity name=aout ! fakesink sync=false",
            p, p + 1, p + 4, p + 2, p + 3, p + 5));
  else
    recv = launch (g_strdup_printf ("uvgrtpsrc name=vout port=%d "
            "encoding-name=H264 lip-sync=%d rtcp-min-interval=" MIN_INTERVAL
            " %s%d ! fakesink sync=false "
            "uvgrtpsrc name=aout port=%d encoding-name=OPUS lip-sync=%d "
            "rtcp-min-interval=" MIN_INTERVAL " %s%d ! fakesink sync=false",
            p, lip_sync, setup == FROM_RTPBIN ? "rtcp-remote-host=127.0.0.1 "
            "rtcp-remote-port=" : "latency=", setup == FROM_RTPBIN ? p + 4 : 50,
            p + 2, lip_sync, setup == FROM_RTPBIN ?
            "rtcp-remote-host=127.0.0.1 rtcp-remote-port=" : "latency=",
            setup == FROM_RTPBIN ? p + 5 : 50));

  if (setup == FROM_RTPBIN) {
    GstElement *rb = gst_bin_get_by_name (GST_BIN (send), "rb");
    for (guint i = 0; i < 2; i++) {
      GObject *session = NULL;
      g_signal_emit_by_name (rb, "get-internal-session", i, &session);
      fail_unless (session != NULL);
      g_object_set (session, "rtcp-min-interval", (guint64) 300 * GST_MSECOND,
          NULL);
      g_object_unref (session);
    }
    gst_object_unref (rb);
  }
  probe (send, "vpay", "sink", on_sent, &v);
  probe (send, "apay", "sink", on_sent, &a);
  probe (recv, "vout", "src", on_received, &v);
  probe (recv, "aout", "src", on_received, &a);

  run (send, recv);
  relay_stop (&relay);
  diff = late_median (&v) - late_median (&a);

  if (setup != TO_RTPBIN) {
    GstStructure *vs = stats_of (recv, "vout"), *as = stats_of (recv, "aout");
    gboolean synced = FALSE;
    GST_INFO ("video src: %" GST_PTR_FORMAT, vs);
    GST_INFO ("audio src: %" GST_PTR_FORMAT, as);
    fail_unless (gst_structure_get_boolean (as, "synced", &synced));
    fail_unless_equals_int (synced, lip_sync);
    /* the whole statistics on failure: a rare CI run saw the video's
     * CNAME empty here, not reproduced since */
    if (g_strcmp0 (gst_structure_get_string (vs, "sender-cname"),
            gst_structure_get_string (as, "sender-cname")) != 0) {
      gchar *vt = gst_structure_to_string (vs), *at = gst_structure_to_string (as);
      fail ("CNAMEs differ: video %s, audio %s", vt, at);
    }
    *audio_delay = i64 (as, "sync-delay");
    fail_unless_equals_int64 (i64 (vs, "sync-delay"), 0);
    gst_structure_free (vs);
    gst_structure_free (as);
  }
  GST_INFO ("video minus audio: %" G_GINT64_FORMAT " us", diff / 1000);
  relay_free (&relay);
  stream_clear (&v);
  stream_clear (&a);
  gst_object_unref (send);
  gst_object_unref (recv);
  return diff;
}

/* Ours both sides: the audio waits for the video's extra way. */
GST_START_TEST (test_ours)
{
  gint64 delay = 0, diff;

  diff = measure (OURS, FALSE, &delay);
  fail_unless (diff > 50 * GST_MSECOND, "without lip sync: %" G_GINT64_FORMAT
      " us apart, the relay delays by %d ms", diff / 1000, DELAY_MS);
  fail_unless_equals_int64 (delay, 0);

  diff = measure (OURS, TRUE, &delay);
  fail_unless (ABS (diff) < 5 * GST_MSECOND, "with lip sync: %"
      G_GINT64_FORMAT " us apart", diff / 1000);
  fail_unless (delay > 50 * GST_MSECOND, "audio delayed %" G_GINT64_FORMAT
      " us", delay / 1000);
}

GST_END_TEST;

/* Our two sinks' sender reports (one NTP timeline, one default CNAME) let
 * stock rtpbin put them in step. */
GST_START_TEST (test_to_rtpbin)
{
  gint64 diff = measure (TO_RTPBIN, TRUE, NULL);

  fail_unless (ABS (diff) < 5 * GST_MSECOND, "rtpbin: %" G_GINT64_FORMAT
      " us apart", diff / 1000);
}

GST_END_TEST;

/* Stock rtpbin's sender reports put our two sources in step. */
GST_START_TEST (test_from_rtpbin)
{
  gint64 delay = 0, diff = measure (FROM_RTPBIN, TRUE, &delay);

  fail_unless (ABS (diff) < 5 * GST_MSECOND, "from rtpbin: %" G_GINT64_FORMAT
      " us apart", diff / 1000);
  fail_unless (delay > 50 * GST_MSECOND);
}

GST_END_TEST;

static Suite *
lipsync_suite (void)
{
  Suite *s = suite_create ("lipsync");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ours);
  tcase_add_test (tc, test_to_rtpbin);
  tcase_add_test (tc, test_from_rtpbin);
  return s;
}

GST_CHECK_MAIN (lipsync);
