/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsrc as a live RTP receiver on a real network path (loopback): a
 * sender that restarts, strangers, a pause, a late join, 4K-sized bursts.
 * Senders are real x265 pipelines through uvgrtpsink (or the test's own
 * packets where it needs to forge them); every buffer uvgrtpsrc outputs is
 * recorded with the running time of the pipeline clock at that moment, so
 * timestamps are checked against the clock, not only against each other.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <string.h>

#include "testutil.h"

#define LATENCY_MS 50
/* What a buffer may be later than its timestamp on top of the latency:
 * encoder and scheduling jitter of a loaded 2-core machine. */
#define SLACK (150 * GST_MSECOND)
/* How much earlier than its timestamp a buffer may leave: what the
 * transit estimate lags behind a delay that fell within its window (the
 * buffer only waits a little longer in a synchronising sink). */
#define EARLY (20 * GST_MSECOND)
#define X265 "x265enc tune=zerolatency speed-preset=ultrafast log-level=none "
#define RAW "video/x-raw,width=320,height=240,framerate=30/1"

/* ------------------------------------------------------------------------ */
/* helpers */

static GstElement *
launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "cannot build '%s': %s", desc,
      err ? err->message : "?");
  return p;
}

/* Changes the state without waiting for it to complete: a receiver only
 * prerolls once a buffer arrives. */
static void
set_state (GstElement * p, GstState s)
{
  fail_if (gst_element_set_state (p, s) == GST_STATE_CHANGE_FAILURE);
}

static void
stop (GstElement * p)
{
  fail_unless (gst_element_set_state (p, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
}

/* An AU is known by the hash of its last bytes: the end of its last slice
 * is the same on both sides, whatever parameter sets go before it. */
static guint32
tail_hash (GstBuffer * buf)
{
  GstMapInfo map;
  guint32 h = 2166136261u;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  for (gsize i = map.size > 128 ? map.size - 128 : 0; i < map.size; i++)
    h = (h ^ map.data[i]) * 16777619u;
  gst_buffer_unmap (buf, &map);
  return h;
}

typedef struct
{
  guint32 hash;
  GstClockTime pts, rt;         /* timestamp, running time at output */
  GstClockTime abs;             /* clock time then (one clock for all) */
  gboolean discont, key;
  guint gen;                    /* sender generation (sent side) */
} Rec;

typedef struct
{
  GMutex lock;
  GArray *recs;
  guint gen;
} Recorder;

static void
recorder_init (Recorder * r)
{
  g_mutex_init (&r->lock);
  r->recs = g_array_new (FALSE, TRUE, sizeof (Rec));
  r->gen = 0;
}

static void
recorder_clear (Recorder * r)
{
  g_array_free (r->recs, TRUE);
  g_mutex_clear (&r->lock);
}

static GstPadProbeReturn
record (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Recorder *r = user;
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  GstElement *e = GST_ELEMENT (gst_pad_get_parent (pad));
  GstClock *clock = gst_element_get_clock (e);
  Rec rec;

  memset (&rec, 0, sizeof rec);
  rec.hash = tail_hash (b);
  rec.pts = GST_BUFFER_PTS (b);
  rec.discont = GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DISCONT);
  rec.key = !GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DELTA_UNIT);
  rec.rt = GST_CLOCK_TIME_NONE;
  if (clock) {
    rec.abs = gst_clock_get_time (clock);
    rec.rt = rec.abs - gst_element_get_base_time (e);
    gst_object_unref (clock);
  }
  g_mutex_lock (&r->lock);
  rec.gen = r->gen;
  g_array_append_val (r->recs, rec);
  g_mutex_unlock (&r->lock);
  gst_object_unref (e);
  return GST_PAD_PROBE_OK;
}

static void
probe (GstElement * pipe, const gchar * name, const gchar * pad,
    Recorder * r)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), name);
  GstPad *p = gst_element_get_static_pad (e, pad);

  gst_pad_add_probe (p, GST_PAD_PROBE_TYPE_BUFFER, record, r, NULL);
  gst_object_unref (p);
  gst_object_unref (e);
}

static guint
count_received (Recorder * sent, Recorder * got, guint gen)
{
  guint n = 0;

  for (guint i = 0; i < sent->recs->len; i++) {
    Rec *s = &g_array_index (sent->recs, Rec, i);

    if (s->gen != gen)
      continue;
    for (guint j = 0; j < got->recs->len; j++)
      if (g_array_index (got->recs, Rec, j).hash == s->hash) {
        n++;
        break;
      }
  }
  return n;
}

static guint
count_gen (Recorder * r, guint gen)
{
  guint n = 0;

  for (guint i = 0; i < r->recs->len; i++)
    n += g_array_index (r->recs, Rec, i).gen == gen;
  return n;
}

/* Every buffer out of uvgrtpsrc from index `from` on left no earlier than
 * EARLY before its timestamp and no later than the latency (plus slack)
 * after it, on the pipeline clock. */
static void
check_on_time_range (Recorder * got, guint from, guint to, const gchar * what)
{
  for (guint i = from; i < to; i++) {
    Rec *g = &g_array_index (got->recs, Rec, i);

    fail_unless (GST_CLOCK_TIME_IS_VALID (g->pts), "%s: buffer %u has no "
        "timestamp", what, i);
    GST_DEBUG ("%s: buffer %u pts %" GST_TIME_FORMAT " rt %" GST_TIME_FORMAT,
        what, i, GST_TIME_ARGS (g->pts), GST_TIME_ARGS (g->rt));
    fail_unless (g->rt + EARLY >= g->pts, "%s: buffer %u is %"
        GST_TIME_FORMAT " early", what, i, GST_TIME_ARGS (g->pts - g->rt));
    fail_unless (g->rt <= g->pts + LATENCY_MS * GST_MSECOND + SLACK,
        "%s: buffer %u is %" GST_TIME_FORMAT " late (timestamp %"
        GST_TIME_FORMAT ", running time %" GST_TIME_FORMAT ")", what, i,
        GST_TIME_ARGS (g->rt - g->pts), GST_TIME_ARGS (g->pts),
        GST_TIME_ARGS (g->rt));
  }
}

static void
check_on_time (Recorder * got, guint from, const gchar * what)
{
  check_on_time_range (got, from, got->recs->len, what);
}

static guint64
stat (GstElement * pipe, const gchar * field)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstStructure *st = NULL;
  guint64 v = G_MAXUINT64;

  g_object_get (src, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "no field %s", field);
  gst_structure_free (st);
  gst_object_unref (src);
  return v;
}

/* The element messages named `name` posted so far. */
static GList *
take_messages (GstElement * pipe, const gchar * name)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GList *out = NULL;
  GstMessage *m;

  while ((m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT |
              GST_MESSAGE_ERROR))) {
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      GError *err = NULL;

      gst_message_parse_error (m, &err, NULL);
      fail ("error: %s", err->message);
    }
    if (gst_message_has_name (m, name))
      out = g_list_append (out, m);
    else
      gst_message_unref (m);
  }
  gst_object_unref (bus);
  return out;
}

/* Sends EOS into the receiver and waits for it at the end; returns the
 * number of frames the decoder produced. */
static guint
finish (GstElement * recv)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (recv), "src");
  GstElement *out = gst_bin_get_by_name (GST_BIN (recv), "out");
  GstBus *bus = gst_element_get_bus (recv);
  GstMessage *m;
  GstSample *s;
  guint n = 0;

  fail_unless (gst_element_send_event (src, gst_event_new_eos ()));
  m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND, GST_MESSAGE_EOS |
      GST_MESSAGE_ERROR);
  fail_unless (m != NULL, "no EOS");
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *dbg = NULL;

    gst_message_parse_error (m, &err, &dbg);
    fail ("error from %s: %s (%s)", GST_OBJECT_NAME (GST_MESSAGE_SRC (m)),
        err->message, GST_STR_NULL (dbg));
  }
  gst_message_unref (m);
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (out), 0))) {
    n++;
    gst_sample_unref (s);
  }
  gst_object_unref (bus);
  gst_object_unref (out);
  gst_object_unref (src);
  return n;
}

/* Ends a sender after its last access unit went out. */
static void
stop_sender (GstElement * send)
{
  GstMessage *m;

  fail_unless (gst_element_send_event (send, gst_event_new_eos ()));
  m = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (send), 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
  gst_message_unref (m);
  stop (send);
}

static GstElement *
receiver (guint16 port, const gchar * extra)
{
  gchar *d = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 "
      "port=%u encoding-name=H265 latency=%d %s ! h265parse ! avdec_h265 ! "
      "appsink name=out sync=false wait-on-eos=false", port, LATENCY_MS,
      extra ? extra : "");
  GstElement *p = launch (d);

  g_free (d);
  return p;
}

static GstElement *
x265_sender (guint16 port, const gchar * extra)
{
  gchar *d = g_strdup_printf ("videotestsrc is-live=true pattern=ball ! " RAW
      " ! " X265 "key-int-max=30 ! h265parse ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%u %s", port, extra ? extra : "");
  GstElement *p = launch (d);

  g_free (d);
  return p;
}

/* ------------------------------------------------------------------------ */
/* A sender that restarts */

/* The receiver must resume within `resume` (plus SLACK) of the new
 * sender's first access unit. */
static void
restart_case (const gchar * recv_props, const gchar * sink_props1,
    const gchar * sink_props2, const gchar * kind, GstClockTime resume)
{
  guint16 port = free_udp_port ();
  GstElement *recv = receiver (port, recv_props);
  GstElement *send;
  Recorder sent, got;
  GList *msgs, *l;
  gboolean changed = FALSE;
  guint first2 = G_MAXUINT, decoded;

  recorder_init (&sent);
  recorder_init (&got);
  probe (recv, "src", "src", &got);
  set_state (recv, GST_STATE_PLAYING);

  send = x265_sender (port, sink_props1);
  probe (send, "sink", "sink", &sent);
  set_state (send, GST_STATE_PLAYING);
  g_usleep (1200 * 1000);
  stop_sender (send);

  /* the same sender started again: a new SSRC, sequence numbers and
   * timestamps (unless fixed) */
  g_usleep (100 * 1000);
  g_mutex_lock (&sent.lock);
  sent.gen = 1;
  g_mutex_unlock (&sent.lock);
  send = x265_sender (port, sink_props2);
  probe (send, "sink", "sink", &sent);
  set_state (send, GST_STATE_PLAYING);
  g_usleep (1500 * 1000);
  stop_sender (send);
  g_usleep (200 * 1000);
  msgs = take_messages (recv, "uvgrtp-source");
  decoded = finish (recv);

  /* every access unit of both runs arrived, and decodes */
  fail_unless (count_gen (&sent, 0) >= 20 && count_gen (&sent, 1) >= 20);
  fail_unless_equals_int (count_received (&sent, &got, 0),
      count_gen (&sent, 0));
  fail_unless_equals_int (count_received (&sent, &got, 1),
      count_gen (&sent, 1));
  fail_unless_equals_int (decoded, got.recs->len);

  /* the second run starts at its first access unit, a key frame, marked */
  for (guint i = 0; i < got.recs->len && first2 == G_MAXUINT; i++)
    if (g_array_index (got.recs, Rec, i).hash ==
        g_array_index (sent.recs, Rec, count_gen (&sent, 0)).hash)
      first2 = i;
  fail_unless (first2 != G_MAXUINT);
  fail_unless (g_array_index (got.recs, Rec, first2).discont);
  fail_unless (g_array_index (got.recs, Rec, first2).key);

  /* timestamps on the pipeline clock throughout: before the restart, and
   * from a moment after the new source took over (what it sent while
   * waiting comes out at once, its timestamps as when it arrived) */
  check_on_time (&got, 0, "first run");
  {
    guint after = first2;
    GstClockTime t0 = g_array_index (got.recs, Rec, first2).rt;

    while (after < got.recs->len &&
        g_array_index (got.recs, Rec, after).rt < t0 + 400 * GST_MSECOND)
      after++;
    fail_unless (got.recs->len - after > 10);
    check_on_time (&got, after, "after the restart");
  }

  /* the stream resumed within the source timeout of the new sender's
   * first access unit (or at once after a BYE) */
  {
    GstClockTime sent2 =
        g_array_index (sent.recs, Rec, count_gen (&sent, 0)).abs;
    GstClockTime out2 = g_array_index (got.recs, Rec, first2).abs;

    GST_INFO ("resumed %" GST_TIME_FORMAT " after the new sender's first "
        "access unit", GST_TIME_ARGS (out2 - sent2));
    fail_unless (out2 < sent2 + resume + SLACK, "resumed %"
        GST_TIME_FORMAT " after the new sender started",
        GST_TIME_ARGS (out2 - sent2));
  }

  for (l = msgs; l; l = l->next) {
    const GstStructure *s = gst_message_get_structure (l->data);
    guint old_ssrc = 0, new_ssrc = 0;

    if (!g_str_equal (gst_structure_get_string (s, "kind"), kind))
      continue;
    fail_unless (gst_structure_get_uint (s, "old-ssrc", &old_ssrc));
    fail_unless (gst_structure_get_uint (s, "new-ssrc", &new_ssrc));
    if (g_str_equal (kind, "change"))
      fail_unless (old_ssrc != new_ssrc);
    else
      fail_unless (old_ssrc == new_ssrc);
    changed = TRUE;
  }
  fail_unless (changed, "no uvgrtp-source message of kind %s", kind);
  g_list_free_full (msgs, (GDestroyNotify) gst_message_unref);
  fail_unless_equals_uint64 (stat (recv, "lost"), 0);
  fail_unless_equals_uint64 (stat (recv, "dropped"), 0);
  /* with RTCP, both senders' leaving reports (stopped: an RR, no clock to
   * report, and the BYE) */
  if (resume == 0)
    fail_unless_equals_uint64 (stat (recv, "bye-received"), 2);

  stop (recv);
  recorder_clear (&sent);
  recorder_clear (&got);
}

GST_START_TEST (test_restart_new_ssrc)
{
  /* a new random SSRC each time (uvgrtpsink's default); no RTCP, so the
   * source timeout decides */
  restart_case ("source-timeout=300 rtcp=false", "rtcp=false", "rtcp=false",
      "change", 300 * GST_MSECOND);
}

GST_END_TEST;

GST_START_TEST (test_restart_fixed_ssrc)
{
  /* the same SSRC, numbering and timestamps elsewhere */
  restart_case ("source-timeout=300 rtcp=false",
      "ssrc=305419896 seqnum-offset=100 rtcp=false",
      "ssrc=305419896 seqnum-offset=40000 rtcp=false", "restart",
      300 * GST_MSECOND);
}

GST_END_TEST;

GST_START_TEST (test_restart_bye)
{
  /* RTCP on (the default): the stopping sender's BYE hands over at once,
   * although the source timeout is 5 s */
  restart_case ("source-timeout=5000", NULL, NULL, "change", 0);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Strangers: a valid-looking RTP packet before the stream, and a flood of
 * random datagrams all along */

typedef struct
{
  guint16 port;
  gint stop;
  guint sent;
} Flood;

static void
send_raw (int fd, guint16 port, const guint8 * p, gsize n)
{
  struct sockaddr_in a;

  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  a.sin_port = htons (port);
  fail_unless (sendto (fd, p, n, 0, (struct sockaddr *) &a, sizeof a) ==
      (ssize_t) n);
}

/* A plausible RTP packet: version 2, payload type 96, a random SSRC. */
static void
stray_rtp (guint8 * p, gsize n, GRand * rand)
{
  for (gsize i = 0; i < n; i++)
    p[i] = (guint8) g_rand_int (rand);
  p[0] = 0x80;
  p[1] = 96;
  p[12] = 1 << 1;               /* an H.265 NAL unit header, type 1 */
  p[13] = 1;
}

static gpointer
flood_thread (gpointer data)
{
  Flood *f = data;
  int fd = socket (AF_INET, SOCK_DGRAM, 0);
  GRand *rand = g_rand_new_with_seed (99);
  guint8 p[1400];

  while (!g_atomic_int_get (&f->stop)) {
    gsize n = 1 + g_rand_int_range (rand, 0, sizeof p);

    if (f->sent % 3 == 0 && n > 40)
      stray_rtp (p, n, rand);
    else
      for (gsize i = 0; i < n; i++)
        p[i] = (guint8) g_rand_int (rand);
    send_raw (fd, f->port, p, n);
    f->sent++;
    if (f->sent % 20 == 0)
      g_usleep (10 * 1000);     /* about 2000 a second */
  }
  g_rand_free (rand);
  close (fd);
  return NULL;
}

GST_START_TEST (test_strangers)
{
  guint16 port = free_udp_port ();
  GstElement *recv = receiver (port, NULL), *send;
  Recorder sent, got;
  Flood flood = { port, 0, 0 };
  GThread *th;
  GRand *rand = g_rand_new_with_seed (7);
  guint8 p[200];
  int fd = socket (AF_INET, SOCK_DGRAM, 0);
  guint decoded;

  recorder_init (&sent);
  recorder_init (&got);
  probe (recv, "src", "src", &got);
  set_state (recv, GST_STATE_PLAYING);

  /* first a stranger's valid-looking packet (it used to decide the SSRC
   * for good), then the flood and the real stream together */
  stray_rtp (p, sizeof p, rand);
  send_raw (fd, port, p, sizeof p);
  th = g_thread_new ("flood", flood_thread, &flood);
  send = x265_sender (port, NULL);
  probe (send, "sink", "sink", &sent);
  set_state (send, GST_STATE_PLAYING);
  g_usleep (2500 * 1000);
  stop_sender (send);
  g_atomic_int_set (&flood.stop, 1);
  g_thread_join (th);
  g_usleep (200 * 1000);
  decoded = finish (recv);

  GST_INFO ("%u stray datagrams", flood.sent);
  fail_unless (flood.sent > 1000);
  fail_unless (sent.recs->len >= 60);
  fail_unless_equals_int (count_received (&sent, &got, 0), sent.recs->len);
  fail_unless_equals_int (decoded, got.recs->len);
  fail_unless_equals_uint64 (stat (recv, "source-changes"), 0);
  fail_unless (stat (recv, "malformed") + stat (recv, "foreign") +
      stat (recv, "held") > 0);
  check_on_time (&got, 0, "with strangers");

  stop (recv);
  g_rand_free (rand);
  close (fd);
  recorder_clear (&sent);
  recorder_clear (&got);
}

GST_END_TEST;

/* One packet of the stream's SSRC 30000 sequence numbers ahead: dropped
 * alone, nothing lost or late (it used to cost about a thousand real
 * packets and count 30000 phantom losses). */
GST_START_TEST (test_far_ahead)
{
  guint16 port = free_udp_port ();
  GstElement *recv = launch ("uvgrtpsrc name=src address=127.0.0.1 "
      "encoding-name=H265 ! appsink name=out sync=false wait-on-eos=false");
  GstElement *src = gst_bin_get_by_name (GST_BIN (recv), "src");
  int fd = socket (AF_INET, SOCK_DGRAM, 0);
  guint8 p[112];
  guint i, n = 0;
  GstSample *s;
  GstElement *out;

  g_object_set (src, "port", (gint) port, NULL);
  set_state (recv, GST_STATE_PLAYING);
  for (i = 0; i < 60; i++) {
    guint16 seq = (guint16) (1000 + i);
    guint32 ts = i * 3000;

    memset (p, 0x5a, sizeof p);
    p[0] = 0x80;
    p[1] = 0x80 | 96;           /* marker: one packet per AU */
    p[2] = seq >> 8;
    p[3] = seq & 0xff;
    p[4] = ts >> 24;
    p[5] = ts >> 16;
    p[6] = ts >> 8;
    p[7] = ts;
    p[8] = 0x12;
    p[9] = 0x34;
    p[10] = 0x56;
    p[11] = 0x78;
    p[12] = (i == 0 ? 19 : 1) << 1;
    p[13] = 1;
    p[14] |= 0x80;              /* the picture's first slice */
    send_raw (fd, port, p, sizeof p);
    if (i == 30) {
      seq += 30000;
      p[2] = seq >> 8;
      p[3] = seq & 0xff;
      send_raw (fd, port, p, sizeof p);
    }
    g_usleep (2000);
  }
  g_usleep (200 * 1000);
  fail_unless (gst_element_send_event (src, gst_event_new_eos ()));
  gst_message_unref (gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (recv),
          10 * GST_SECOND, GST_MESSAGE_EOS));
  out = gst_bin_get_by_name (GST_BIN (recv), "out");
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (out), 0))) {
    n++;
    gst_sample_unref (s);
  }
  fail_unless_equals_int (n, 60);
  fail_unless_equals_uint64 (stat (recv, "stray"), 1);
  fail_unless_equals_uint64 (stat (recv, "lost"), 0);
  fail_unless_equals_uint64 (stat (recv, "late"), 0);
  fail_unless_equals_uint64 (stat (recv, "source-restarts"), 0);
  gst_object_unref (out);
  gst_object_unref (src);
  stop (recv);
  close (fd);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Timestamps against the pipeline clock */

/* Joining a stream with 3-second GOPs mid-GOP, waiting for a key frame:
 * what comes out is on time (it used to be 1.5 s late: the anchor was the
 * first packet's arrival, the RTP base the first access unit output). */
GST_START_TEST (test_late_join)
{
  guint16 port = free_udp_port ();
  GstElement *recv = receiver (port, "wait-for-keyframe=true");
  gchar *d = g_strdup_printf ("videotestsrc is-live=true pattern=ball ! " RAW
      " ! " X265 "key-int-max=90 ! h265parse ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%u config-interval=-1", port);
  GstElement *send = launch (d);
  Recorder got;

  g_free (d);
  recorder_init (&got);
  probe (recv, "src", "src", &got);
  set_state (send, GST_STATE_PLAYING);
  g_usleep (1400 * 1000);
  set_state (recv, GST_STATE_PLAYING);
  g_usleep (3500 * 1000);
  stop (send);
  finish (recv);

  fail_unless (got.recs->len >= 30);
  fail_unless (g_array_index (got.recs, Rec, 0).key);
  check_on_time (&got, 0, "late join");
  fail_unless (stat (recv, "dropped") > 0);     /* what preceded the key frame */
  stop (recv);
  recorder_clear (&got);
}

GST_END_TEST;

/* PLAYING -> PAUSED for 2 s -> PLAYING while the sender goes on: what
 * queued meanwhile is dropped (flushed), and what comes out after is on
 * time (it used to be 2 s late for good). */
GST_START_TEST (test_pause_resume)
{
  guint16 port = free_udp_port ();
  GstElement *recv = receiver (port, NULL), *send = x265_sender (port, NULL);
  Recorder got;
  guint before, after;

  recorder_init (&got);
  probe (recv, "src", "src", &got);
  set_state (recv, GST_STATE_PLAYING);
  set_state (send, GST_STATE_PLAYING);
  g_usleep (1000 * 1000);
  set_state (recv, GST_STATE_PAUSED);
  g_usleep (2000 * 1000);
  g_mutex_lock (&got.lock);
  before = got.recs->len;
  g_mutex_unlock (&got.lock);
  set_state (recv, GST_STATE_PLAYING);
  g_usleep (1500 * 1000);
  stop (send);
  finish (recv);

  fail_unless (before >= 20);
  fail_unless (got.recs->len > before + 30);
  check_on_time_range (&got, 0, before, "before the pause");
  /* A buffer made as the pipeline paused is pushed when it plays again,
   * with the timestamp it got then (GstBaseSrc's live semantics): skip
   * what came out in the first moment after the resume. */
  after = before;
  while (after < got.recs->len && g_array_index (got.recs, Rec, after).rt <
      g_array_index (got.recs, Rec, before).rt + 100 * GST_MSECOND)
    after++;
  fail_unless (got.recs->len - after > 30);
  check_on_time (&got, after, "after the pause");
  fail_unless (stat (recv, "flushed") > 0);
  stop (recv);
  recorder_clear (&got);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* 4K-sized pictures with the default properties */

#define BIG_FRAMES 121

/* An H.265 access unit of about `size` bytes: 8 slices of random bytes
 * (never a zero, so no start code inside), the first an IDR for key
 * frames; parameter sets before key frames. */
static GstBuffer *
big_au (guint i, GRand * rand)
{
  gboolean key = i % 30 == 0;
  gsize size = key ? 1300 * 1000 : 600 * 1000 + g_rand_int_range (rand, 0,
      200 * 1000);
  GstBuffer *b = gst_buffer_new_allocate (NULL, size + 200, NULL);
  GstMapInfo map;
  gsize off = 0, slice = size / 8;
  guint32 x = g_rand_int (rand) | 1;

  gst_buffer_map (b, &map, GST_MAP_WRITE);
  if (key) {
    static const guint8 ps[] = {
      0, 0, 0, 1, 0x40, 0x01, 0x0c, 0x01,       /* VPS */
      0, 0, 0, 1, 0x42, 0x01, 0x01, 0x01,       /* SPS */
      0, 0, 0, 1, 0x44, 0x01, 0xc1, 0x73,       /* PPS */
    };
    memcpy (map.data, ps, sizeof ps);
    off = sizeof ps;
  }
  for (guint s = 0; s < 8; s++) {
    map.data[off++] = 0;
    map.data[off++] = 0;
    map.data[off++] = 0;
    map.data[off++] = 1;
    map.data[off++] = (key ? 19 : 1) << 1;
    map.data[off++] = 1;
    for (gsize k = 0; k < slice; k++) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      map.data[off++] = (guint8) (x | 1);
    }
  }
  gst_buffer_unmap (b, &map);
  gst_buffer_set_size (b, off);
  return b;
}

static void
big_stream (const gchar * recv_props, guint * received, guint64 * drops,
    GstElement ** recv_out)
{
  guint16 port = free_udp_port ();
  gchar *d = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 "
      "port=%u encoding-name=H265 %s ! appsink name=out sync=false "
      "wait-on-eos=false max-buffers=0", port, recv_props);
  GstElement *recv = launch (d);
  GstElement *send, *appsrc, *out;
  GRand *rand = g_rand_new_with_seed (4);
  GHashTable *sent = g_hash_table_new (g_direct_hash, g_direct_equal);
  GstSample *s;
  guint n = 0;

  g_free (d);
  d = g_strdup_printf ("appsrc name=in is-live=true do-timestamp=true "
      "format=time caps=video/x-h265,stream-format=byte-stream,alignment=au "
      "! uvgrtpsink host=127.0.0.1 port=%u", port);
  send = launch (d);
  g_free (d);
  set_state (recv, GST_STATE_PLAYING);
  set_state (send, GST_STATE_PLAYING);
  appsrc = gst_bin_get_by_name (GST_BIN (send), "in");
  for (guint i = 0; i < BIG_FRAMES; i++) {
    GstBuffer *b = big_au (i, rand);

    g_hash_table_add (sent, GUINT_TO_POINTER (tail_hash (b)));
    fail_unless (gst_app_src_push_buffer (GST_APP_SRC (appsrc), b) ==
        GST_FLOW_OK);
    g_usleep (G_USEC_PER_SEC / 30);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (appsrc));
  gst_message_unref (gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (send),
          30 * GST_SECOND, GST_MESSAGE_EOS));
  g_usleep (300 * 1000);
  out = gst_bin_get_by_name (GST_BIN (recv), "out");
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (out), 0))) {
    n += g_hash_table_contains (sent,
        GUINT_TO_POINTER (tail_hash (gst_sample_get_buffer (s))));
    gst_sample_unref (s);
  }
  *received = n;
  *drops = stat (recv, "kernel-drops");
  *recv_out = recv;
  gst_object_unref (out);
  gst_object_unref (appsrc);
  stop (send);
  g_hash_table_unref (sent);
  g_rand_free (rand);
}

/* About 700 KB a picture (intra pictures 1.3 MB) at 30 fps into uvgrtpsrc
 * with nothing set but the port: every picture arrives whole (the
 * system's default receive buffer, 208 KB here, let none through). */
GST_START_TEST (test_4k_defaults)
{
  GstElement *recv;
  guint received;
  guint64 drops;

  big_stream ("", &received, &drops, &recv);
  fail_unless_equals_int (received, BIG_FRAMES);
  fail_unless_equals_uint64 (drops, 0);
  fail_unless_equals_uint64 (stat (recv, "reordered"), 0);
  stop (recv);
}

GST_END_TEST;

/* The same into a receive buffer made too small: the kernel's drops are
 * counted, and a warning names the property and the sysctl to raise. */
GST_START_TEST (test_small_buffer_drops)
{
  GstElement *recv;
  guint received;
  guint64 drops;
  GstMessage *m;
  gboolean warned = FALSE;

  big_stream ("buffer-size=65536", &received, &drops, &recv);
  GST_INFO ("%u pictures whole, %" G_GUINT64_FORMAT " kernel drops",
      received, drops);
  fail_unless (received < BIG_FRAMES);
  /* datagrams, or with GRO batches of them */
  fail_unless (drops > 100);
  while ((m = gst_bus_pop_filtered (GST_ELEMENT_BUS (recv),
              GST_MESSAGE_WARNING))) {
    GError *err = NULL;

    gst_message_parse_warning (m, &err, NULL);
    warned |= strstr (err->message, "'buffer-size'") != NULL &&
        strstr (err->message, "rmem_max") != NULL &&
        strstr (err->message, "dropped") != NULL;
    g_error_free (err);
    gst_message_unref (m);
  }
  fail_unless (warned, "no warning about the kernel's drops");
  stop (recv);
}

GST_END_TEST;

static Suite *
sources_suite (void)
{
  Suite *s = suite_create ("uvgrtpsrc-sources");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_restart_new_ssrc);
  tcase_add_test (tc, test_restart_fixed_ssrc);
  tcase_add_test (tc, test_restart_bye);
  tcase_add_test (tc, test_strangers);
  tcase_add_test (tc, test_far_ahead);
  tcase_add_test (tc, test_late_join);
  tcase_add_test (tc, test_pause_resume);
  tcase_add_test (tc, test_4k_defaults);
  tcase_add_test (tc, test_small_buffer_drops);
  return s;
}

GST_CHECK_MAIN (sources);
