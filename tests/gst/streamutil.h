/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * streamutil.h - what the loss recovery tests (test_recovery,
 * test_recovery_rtpbin) share: a real encoder's stream made once, pushed
 * live into a pipeline's appsrc, and checked at the other end byte for
 * byte and by a real decoder. Include after rtcputil.h.
 */
#ifndef UVGRTP_TEST_STREAMUTIL_H
#define UVGRTP_TEST_STREAMUTIL_H

#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

typedef struct
{
  GPtrArray *aus;               /* GstBuffer: byte-stream access units */
  GstCaps *caps;
} Stream;

/* Runs `desc`, a pipeline that ends in "appsink name=sink sync=false",
 * and keeps what reaches the appsink, and its caps, in st (once: nothing
 * happens if st has them). */
static G_GNUC_UNUSED void
stream_make (Stream * st, const gchar * desc)
{
  GstElement *p, *sink;
  GstSample *s;

  if (st->aus)
    return;
  p = launchf ("%s", desc);
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  st->aus = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  play (p);
  while ((s = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    if (!st->caps)
      st->caps = gst_caps_copy (gst_sample_get_caps (s));
    g_ptr_array_add (st->aus, gst_buffer_copy_deep (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_object_unref (sink);
  stop (p);
}

/* Encodes `frames` pictures of videotestsrc (320x240 at fps) through
 * `encode`, a description that ends in "appsink name=sink sync=false",
 * into st (once). */
static G_GNUC_UNUSED void
stream_encode (Stream * st, guint frames, guint fps, const gchar * encode)
{
  gchar *desc;

  if (st->aus)
    return;
  desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! "
      "video/x-raw,width=320,height=240,framerate=%u/1 ! %s", frames, fps,
      encode);
  stream_make (st, desc);
  g_free (desc);
  fail_unless_equals_int (st->aus->len, frames);
}

/* Plays tx and pushes st into its appsrc "in", one access unit (or audio
 * packet) every 1 / fps of buffer time (a sink downstream syncs, as a live encoder's
 * would). live: each is pushed when its time comes rather than all at
 * once, so that no element downstream holds seconds of stream ahead of
 * the clock (a retransmission queued behind them would come too late). */
static G_GNUC_UNUSED void
stream_push_full (GstElement * tx, Stream * st, guint fps, gboolean live)
{
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");
  gint64 t0;

  g_object_set (in, "caps", st->caps, NULL);
  play (tx);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < st->aus->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (st->aus, i));
    gint64 wait = t0 + (gint64) i * G_USEC_PER_SEC / fps -
        g_get_monotonic_time ();

    if (live && wait > 0)
      g_usleep ((gulong) wait);
    GST_BUFFER_PTS (b) = i * GST_SECOND / fps;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = GST_SECOND / fps;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (in), b),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  gst_object_unref (in);
}

static G_GNUC_UNUSED void
stream_push (GstElement * tx, Stream * st, guint fps)
{
  stream_push_full (tx, st, fps, FALSE);
}

/* Waits for p's EOS, failing on an error or after 30 s. */
static G_GNUC_UNUSED void
wait_eos (GstElement * p)
{
  GstMessage *m = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p),
      30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  fail_unless (m != NULL, "no EOS from %s", GST_OBJECT_NAME (p));
  fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "error from %s",
      GST_OBJECT_NAME (GST_MESSAGE_SRC (m)));
  gst_message_unref (m);
}

/* The buffers reaching appsink `name` of p until none came for 500 ms;
 * last_caps (may be NULL) takes the caps of the last one. */
static G_GNUC_UNUSED GPtrArray *
appsink_pull_all (GstElement * p, const gchar * name, GstCaps ** last_caps)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), name);
  GPtrArray *got =
      g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              500 * GST_MSECOND))) {
    g_ptr_array_add (got, gst_buffer_ref (gst_sample_get_buffer (s)));
    if (last_caps)
      gst_caps_replace (last_caps, gst_sample_get_caps (s));
    gst_sample_unref (s);
  }
  gst_object_unref (out);
  return got;
}

static G_GNUC_UNUSED gboolean
bytes_equal (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  gboolean eq;

  fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
  fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
  eq = ma.size == mb.size && memcmp (ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return eq;
}

/* How many of bufs (of st's format) `decode` ("h264parse ! avdec_h264")
 * decodes. */
static G_GNUC_UNUSED guint
stream_decoded (Stream * st, const gchar * decode, GPtrArray * bufs)
{
  GstElement *dec = launchf ("appsrc name=in format=time ! %s ! appsink "
      "name=out sync=false", decode);
  GstElement *in = gst_bin_get_by_name (GST_BIN (dec), "in");
  GstElement *out = gst_bin_get_by_name (GST_BIN (dec), "out");
  GstSample *s;
  guint n = 0;

  g_object_set (in, "caps", st->caps, NULL);
  play (dec);
  for (guint k = 0; k < bufs->len; k++)
    gst_app_src_push_buffer (GST_APP_SRC (in),
        gst_buffer_ref (g_ptr_array_index (bufs, k)));
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  while ((s = gst_app_sink_pull_sample (GST_APP_SINK (out)))) {
    n++;
    gst_sample_unref (s);
  }
  gst_object_unref (in);
  gst_object_unref (out);
  stop (dec);
  return n;
}

/* got holds every access unit of st, byte for byte, none flagged
 * corrupted, and they all decode. */
static G_GNUC_UNUSED void
stream_check_all (Stream * st, const gchar * decode, GPtrArray * got)
{
  for (guint i = 0; i < MIN (got->len, st->aus->len); i++) {
    fail_unless (bytes_equal (g_ptr_array_index (got, i),
            g_ptr_array_index (st->aus, i)), "AU %u of %u differs", i,
        got->len);
    fail_if (GST_BUFFER_FLAG_IS_SET (g_ptr_array_index (got, i),
            GST_BUFFER_FLAG_CORRUPTED));
  }
  fail_unless_equals_int (got->len, st->aus->len);
  fail_unless_equals_int (stream_decoded (st, decode, got), st->aus->len);
}

#endif
