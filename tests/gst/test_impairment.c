/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsink -> seeded impairment relay -> uvgrtpsrc with a real H.264 stream.
 *
 * The relay (tests/common/relay.h) drops, duplicates and reorders real
 * datagrams by a seeded pattern and traces each datagram's sequence number,
 * timestamp and fate. From that trace the test predicts exactly which access
 * units the receiver must deliver and checks that it delivers those and only
 * those, byte-exact, that its counters agree with the relay's, and that a
 * real decoder decodes every delivered frame.
 */
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

#include "relay.h"

#define FPS 60
#define FRAMES 150
#define FRAME_DUR (GST_SECOND / FPS)

typedef struct {
  GPtrArray *aus;               /* GstBuffer: encoded access units */
  GPtrArray *key;               /* GINT_TO_POINTER: AU holds an IDR */
  GstCaps *caps;
} Stream;

static Stream stream;

/* Splits Annex-B into NAL units: the bytes between start codes, trailing
 * zeros removed. Returns a GPtrArray of GBytes. */
static GPtrArray *
split_nals (const guint8 * d, gsize n)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  gsize i = 0, start = G_MAXSIZE;

  while (i + 3 <= n) {
    if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) {
      if (start != G_MAXSIZE) {
        gsize end = i;
        while (end > start && d[end - 1] == 0)
          end--;
        if (end > start)
          g_ptr_array_add (out, g_bytes_new (d + start, end - start));
      }
      i += 3;
      start = i;
    } else {
      i++;
    }
  }
  if (start != G_MAXSIZE) {
    gsize end = n;
    while (end > start && d[end - 1] == 0)
      end--;
    if (end > start)
      g_ptr_array_add (out, g_bytes_new (d + start, end - start));
  }
  return out;
}

static GPtrArray *
buffer_nals (GstBuffer * buf)
{
  GstMapInfo map;
  GPtrArray *nals;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  nals = split_nals (map.data, map.size);
  gst_buffer_unmap (buf, &map);
  return nals;
}

static gboolean
nals_equal (GPtrArray * a, GPtrArray * b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!g_bytes_equal (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

/* a is a subsequence of b. */
static gboolean
nals_subsequence (GPtrArray * a, GPtrArray * b)
{
  guint j = 0;
  for (guint i = 0; i < a->len; i++) {
    while (j < b->len && !g_bytes_equal (g_ptr_array_index (a, i),
            g_ptr_array_index (b, j)))
      j++;
    if (j == b->len)
      return FALSE;
    j++;
  }
  return TRUE;
}

static gboolean
has_idr (GstBuffer * buf)
{
  GPtrArray *nals = buffer_nals (buf);
  gboolean key = FALSE;
  for (guint i = 0; i < nals->len; i++) {
    gsize n;
    const guint8 *d = g_bytes_get_data (g_ptr_array_index (nals, i), &n);
    if (n > 0 && (d[0] & 0x1f) == 5)
      key = TRUE;
  }
  g_ptr_array_unref (nals);
  return key;
}

/* Encodes the test stream once: real x264 output, several packets per AU. */
static void
encode_stream (void)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch ("videotestsrc num-buffers=" G_STRINGIFY (FRAMES)
      " pattern=ball ! video/x-raw,width=320,height=240,framerate=60/1 "
      "! x264enc key-int-max=30 tune=zerolatency speed-preset=ultrafast bitrate=3000 "
      "! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au "
      "! appsink name=sink sync=false", &err);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  stream.aus = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  stream.key = g_ptr_array_new ();

  gst_element_set_state (p, GST_STATE_PLAYING);
  GstSample *s;
  while ((s = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    GstBuffer *b = gst_buffer_copy_deep (gst_sample_get_buffer (s));
    if (!stream.caps)
      stream.caps = gst_caps_copy (gst_sample_get_caps (s));
    g_ptr_array_add (stream.key, GINT_TO_POINTER (has_idr (b)));
    g_ptr_array_add (stream.aus, b);
    gst_sample_unref (s);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  fail_unless_equals_int (stream.aus->len, FRAMES);
}

static guint64
stat_u64 (GstElement * e, const gchar * field)
{
  GstStructure *st = NULL;
  guint64 v = G_MAXUINT64;
  g_object_get (e, "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "no stats field %s", field);
  gst_structure_free (st);
  return v;
}

typedef struct {
  const gchar *policy;          /* loss-policy nick */
  gboolean wait_key;
  relay_config_t relay;
} Case;

typedef struct {
  GstBuffer *buf;
  guint index;                  /* AU index from the PTS */
} Received;

static void
run_case (const Case * c)
{
  GError *err = NULL;

  /* Each test runs in its own process: encode there. */
  if (!stream.aus)
    encode_stream ();
  gchar *desc = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 port=0 "
      "encoding-name=H264 latency=400 loss-policy=%s wait-for-keyframe=%s "
      "buffer-size=4194304 ! appsink name=sink sync=false", c->policy,
      c->wait_key ? "true" : "false");
  GstElement *rx = gst_parse_launch (desc, &err);
  g_free (desc);
  fail_unless (rx != NULL, "%s", err ? err->message : "");
  GstElement *src = gst_bin_get_by_name (GST_BIN (rx), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (rx), "sink");
  gst_element_set_state (rx, GST_STATE_PLAYING);
  gint port = 0;
  g_object_get (src, "port", &port, NULL);
  fail_unless (port > 0);

  relay_t relay;
  relay_config_t rc = c->relay;
  rc.to_port = (guint16) port;
  fail_unless_equals_int (relay_start (&relay, &rc), 0);

  desc = g_strdup_printf ("appsrc name=in format=time is-live=true "
      "! uvgrtpsink name=net host=127.0.0.1 port=%u mtu=600 sync=true", relay.port);
  GstElement *tx = gst_parse_launch (desc, &err);
  g_free (desc);
  fail_unless (tx != NULL, "%s", err ? err->message : "");
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");
  g_object_set (in, "caps", stream.caps, NULL);
  gst_element_set_state (tx, GST_STATE_PLAYING);
  for (guint i = 0; i < stream.aus->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (stream.aus, i));
    GST_BUFFER_PTS (b) = i * FRAME_DUR;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = FRAME_DUR;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (in), b),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  GstBus *bus = gst_element_get_bus (tx);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
  gst_message_unref (m);
  gst_object_unref (bus);

  /* Collect until the receiver has been quiet for a while (the latency
   * window gives up on the last gaps). */
  GArray *got = g_array_new (FALSE, FALSE, sizeof (Received));
  GstClockTime pts0 = GST_CLOCK_TIME_NONE;
  GstSample *s;
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), GST_SECOND))) {
    GstBuffer *b = gst_buffer_ref (gst_sample_get_buffer (s));
    if (pts0 == GST_CLOCK_TIME_NONE)
      pts0 = GST_BUFFER_PTS (b);
    Received r = { b, (guint) ((GST_BUFFER_PTS (b) - pts0 + FRAME_DUR / 2) / FRAME_DUR) };
    g_array_append_val (got, r);
    gst_sample_unref (s);
  }
  relay_stop (&relay);

  /* AUs in the trace, by timestamp in order of first appearance; each AU is
   * "intact" when none of its datagrams was dropped and none was dropped
   * just before its first one (a lost head looks like a lost AU). */
  guint nau = 0;
  gboolean *intact = g_new0 (gboolean, stream.aus->len);
  guint32 last_ts = 0;
  gboolean prev_dropped = FALSE;
  for (guint i = 0; i < relay.ntrace; i++) {
    const relay_trace_t *t = &relay.trace[i];
    if (nau == 0 || t->ts != last_ts) {
      fail_unless (nau < stream.aus->len, "more timestamps than AUs");
      intact[nau++] = !prev_dropped;
      last_ts = t->ts;
    }
    if (t->dropped)
      intact[nau - 1] = FALSE;
    prev_dropped = t->dropped;
  }
  fail_unless_equals_int (nau, stream.aus->len);
  fail_unless (intact[0], "the first AU anchors the timeline: keep it intact");

  /* What the receiver must deliver. */
  GArray *expect = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean need_key = c->wait_key;
  guint damaged = 0;
  for (guint i = 0; i < nau; i++) {
    gboolean key = GPOINTER_TO_INT (g_ptr_array_index (stream.key, i));
    if (!intact[i]) {
      damaged++;
      need_key = c->wait_key;
      continue;
    }
    if (need_key && !key)
      continue;
    need_key = FALSE;
    g_array_append_val (expect, i);
  }

  if (g_str_equal (c->policy, "drop-au")) {
    /* Exactly the intact AUs (after a keyframe when waiting), byte-exact. */
    fail_unless_equals_int (got->len, expect->len);
    for (guint k = 0; k < MIN (got->len, expect->len); k++) {
      Received *r = &g_array_index (got, Received, k);
      guint i = g_array_index (expect, guint, k);
      fail_unless_equals_int (r->index, i);
      GPtrArray *a = buffer_nals (r->buf);
      GPtrArray *b = buffer_nals (g_ptr_array_index (stream.aus, i));
      fail_unless (nals_equal (a, b), "AU %u differs", i);
      fail_if (GST_BUFFER_FLAG_IS_SET (r->buf, GST_BUFFER_FLAG_CORRUPTED));
      g_ptr_array_unref (a);
      g_ptr_array_unref (b);
    }
  } else {
    /* drop-nal: intact AUs come whole and clean; the others, if at all,
     * carry only intact NAL units of their own AU and the CORRUPTED flag. */
    guint k = 0;
    for (guint i = 0; i < nau; i++) {
      Received *r = k < got->len ? &g_array_index (got, Received, k) : NULL;
      if (!r || r->index != i) {
        fail_if (intact[i], "intact AU %u not delivered", i);
        continue;
      }
      k++;
      GPtrArray *a = buffer_nals (r->buf);
      GPtrArray *b = buffer_nals (g_ptr_array_index (stream.aus, i));
      if (intact[i]) {
        fail_unless (nals_equal (a, b), "AU %u differs", i);
        fail_if (GST_BUFFER_FLAG_IS_SET (r->buf, GST_BUFFER_FLAG_CORRUPTED));
      } else {
        fail_unless (nals_subsequence (a, b), "AU %u carries foreign NAL units", i);
        fail_unless (GST_BUFFER_FLAG_IS_SET (r->buf, GST_BUFFER_FLAG_CORRUPTED));
      }
      g_ptr_array_unref (a);
      g_ptr_array_unref (b);
    }
    fail_unless_equals_int (k, got->len);
  }

  /* Counters agree with the relay exactly. */
  fail_unless (relay.stats.dropped > 0 && damaged > 0, "the seed impaired nothing");
  fail_unless_equals_uint64 (stat_u64 (src, "lost"), relay.stats.dropped);
  fail_unless_equals_uint64 (stat_u64 (src, "duplicates"), relay.stats.duplicated);
  fail_unless_equals_uint64 (stat_u64 (src, "late"), 0);
  fail_unless_equals_uint64 (stat_u64 (src, "malformed"), 0);
  fail_unless_equals_uint64 (stat_u64 (src, "access-units"), got->len);
  /* Each datagram that got through is counted once: used, or skipped as a
   * fragment of a NAL unit already lost. */
  fail_unless_equals_uint64 (stat_u64 (src, "packets") + stat_u64 (src, "skipped")
      + relay.stats.dropped, relay.stats.received);
  GstElement *net = gst_bin_get_by_name (GST_BIN (tx), "net");
  fail_unless_equals_uint64 (stat_u64 (net, "packets"), relay.stats.received);
  gst_object_unref (net);

  /* When waiting for keyframes, every delivered frame decodes. */
  if (c->wait_key) {
    GstElement *dec = gst_parse_launch ("appsrc name=in format=time "
        "! h264parse ! avdec_h264 ! appsink name=out sync=false", &err);
    fail_unless (dec != NULL);
    GstElement *din = gst_bin_get_by_name (GST_BIN (dec), "in");
    GstElement *dout = gst_bin_get_by_name (GST_BIN (dec), "out");
    g_object_set (din, "caps", stream.caps, NULL);
    gst_element_set_state (dec, GST_STATE_PLAYING);
    for (guint k = 0; k < got->len; k++)
      gst_app_src_push_buffer (GST_APP_SRC (din),
          gst_buffer_ref (g_array_index (got, Received, k).buf));
    gst_app_src_end_of_stream (GST_APP_SRC (din));
    guint decoded = 0;
    while ((s = gst_app_sink_pull_sample (GST_APP_SINK (dout)))) {
      decoded++;
      gst_sample_unref (s);
    }
    fail_unless_equals_int (decoded, got->len);
    gst_element_set_state (dec, GST_STATE_NULL);
    gst_object_unref (din);
    gst_object_unref (dout);
    gst_object_unref (dec);
  }

  GST_INFO ("relay: %" G_GUINT64_FORMAT " received, %" G_GUINT64_FORMAT
      " dropped, %" G_GUINT64_FORMAT " duplicated, %" G_GUINT64_FORMAT
      " reordered; %u of %u AUs delivered", relay.stats.received,
      relay.stats.dropped, relay.stats.duplicated, relay.stats.reordered,
      got->len, nau);

  for (guint k = 0; k < got->len; k++)
    gst_buffer_unref (g_array_index (got, Received, k).buf);
  g_array_free (got, TRUE);
  g_array_free (expect, TRUE);
  g_free (intact);
  relay_free (&relay);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (in);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (tx);
  gst_object_unref (rx);
}

#define RELAY(seed_) { .seed = (seed_), .drop = 0.03, .dup = 0.03, .reorder = 0.05, \
      .reorder_depth = 3, .dup_delay = 2, .skip_first = 80 }

GST_START_TEST (test_drop_au)
{
  Case c = { "drop-au", FALSE, RELAY (11) };
  run_case (&c);
}

GST_END_TEST;

GST_START_TEST (test_drop_au_wait_keyframe_decodes)
{
  Case c = { "drop-au", TRUE, RELAY (23) };
  run_case (&c);
}

GST_END_TEST;

GST_START_TEST (test_drop_nal)
{
  Case c = { "drop-nal", FALSE, RELAY (37) };
  run_case (&c);
}

GST_END_TEST;

static Suite *
impairment_suite (void)
{
  Suite *s = suite_create ("uvgrtp-impairment");
  TCase *tc = tcase_create ("relay");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_drop_au);
  tcase_add_test (tc, test_drop_au_wait_keyframe_decodes);
  tcase_add_test (tc, test_drop_nal);
  return s;
}

GST_CHECK_MAIN (impairment);
